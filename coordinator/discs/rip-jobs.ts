import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { nativeWorkerRefusal } from '../../shared/native-worker.js';
import { PATH_TEXT_MAX, SHORT_TEXT_MAX } from '../../shared/protocol-schemas.js';
import type { AlbumInfo, DiscInfo, RipArgs } from '../../shared/protocol.js';
import type { CoordinatorConfig } from '../../shared/config.js';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import type { MetadataService } from '../metadata/service.js';
import type { SettingsStore } from '../system/settings-store.js';
import type { Fleet } from '../workers/fleet.js';
import { HttpError, mediaDir } from '../http/errors.js';
import type { JobMeta, JobRow, JobsStore } from '../jobs/jobs-store.js';
import { libraryInfo } from '../library/library-info.js';
import type { TitleSource } from './identity-jobs.js';
import { albumForJob, albumTitle, fallbackAlbum } from '../metadata/album-choice.js';
import { identityMeta, type DiscIdentity } from '../metadata/disc-identity.js';
import { apiStatus, isDriveBusy } from '../jobs/job-status.js';
import { keyMatches, labelKey, type DiscKey } from '../../shared/disc-key.js';
import type { KnownDiscTitle } from '../../shared/api-types.js';
import { describeRole } from '../../shared/disc-titles.js';
import { extrasByKind, extrasFolder } from '../library/library-info.js';
import { plannedTitles } from './title-plan.js';
import { seriesTargetRefusal } from './series-target.js';
import type { SessionBook, SessionMatch } from '../sessions/session-book.js';
import { highestEpisode, seasonFolder, seriesFolderName } from '../../shared/output-name.js';

/** What making a rip job uses of the coordinator (a part of its context). */
export interface RipJobDeps {
  config: CoordinatorConfig;
  fleet: Fleet;
  jobs: JobsStore;
  settings: SettingsStore;
  dispatcher: Dispatcher;
  metadata: MetadataService;
  /** The pre-scan's identity of a disc, by its fingerprint, and the titles of a recognised disc against the library. */
  discs: { identity(fingerprint: string): DiscIdentity | undefined; knownTitles(disc: DiscKey): KnownDiscTitle[] | null; libraryFolder(disc: DiscKey): string | null };
  /** Box-set sessions: the disc joins its session (absent: no sessions, as in tests of other parts). */
  sessions?: SessionBook;
}

/** What a rip needs beyond the drive; every field optional (settings and the disc fill the rest). */
export interface RipRequest {
  device: string;
  title?: string | null;
  year?: number | null;
  series?: string | null;
  season?: number | null;
  titles?: number[];
  mainFeatureOnly?: boolean | null;
  targetDir?: string | null;
  workDir?: string | null;
  transcodeNode?: string | null;
  /** A series rip: the TMDB id of the series, for the season's episode runtimes (else the pre-scan's). */
  tmdbId?: number | null;
  /** Languages to keep (ISO 639-2/T, validated); null: the settings' lists at the time of the request. */
  audioLanguages?: string[] | null;
  subtitleLanguages?: string[] | null;
  /** Audio CD: rip as this MusicBrainz release (one of the disc's suggestions) instead of the chosen one. */
  musicbrainzReleaseId?: string | null;
  /** Audio CD: exactly this album (a retry keeps the first rip's names). */
  album?: AlbumInfo | null;
  /** Where the request came from, for the job log ("POST /jobs", "autoRipStart"). */
  origin: string;
  /** Extra meta keys (poster_path, retry_of). */
  meta?: JobMeta;
  /** A careful re-read (retry-rip with careful: true): RipArgs.careful. */
  careful?: boolean;
}

/** A job id (a UUID) and the slash before it: what a raw folder adds to its work folder. */
const RAW_DIR_SUFFIX = 37;

/**
 * Why a worker would drop the command of this rip, or null: its schema takes texts (title, series) of
 * at most SHORT_TEXT_MAX characters and paths of at most PATH_TEXT_MAX, and a dropped command left
 * the job pending with the drive busy (issue 42). The raw folder is the work folder plus the job id.
 */
export function ripLengthRefusal(f: { title?: string | null; series?: string | null; targetDir?: string | null; workDir?: string | null }): string | null {
  // The series first: a series job without a title of its own carries the series name as its title.
  for (const [name, value] of [['series', f.series], ['title', f.title]] as const) {
    if (value && value.length > SHORT_TEXT_MAX) return `${name} is longer than ${SHORT_TEXT_MAX} characters, more than a worker takes`;
  }
  if (f.targetDir && f.targetDir.length > PATH_TEXT_MAX) return `target_dir is longer than ${PATH_TEXT_MAX} characters, more than a worker takes`;
  if (f.workDir && f.workDir.length + RAW_DIR_SUFFIX > PATH_TEXT_MAX) return `the job's raw folder (the work folder and the job id) would be longer than ${PATH_TEXT_MAX} characters, more than a worker takes`;
  return null;
}

/**
 * Creates a rip job and sends it to the agent owning the drive: the one path for POST /jobs,
 * retry-rip and automatic rips. One disc, one job: a drive with a pending or running rip, or a disc
 * (same fingerprint) already being ripped in any drive, refuses with 409. The check and the insert
 * run without an await between them, so two requests at the same moment cannot both pass.
 */
export async function createRipJob(ctx: RipJobDeps, req: RipRequest): Promise<JobRow> {
  const { config, fleet, jobs, settings, dispatcher } = ctx;
  const device = fleet.device(req.device);
  if (!device) throw new HttpError(404, `no device named "${req.device}"`);
  const s = settings.all();
  const discType = device.state.disc?.type;
  // A disc of a box-set session (started in the dialog, or recognised by label or database) is ripped as
  // the session's series and season (a request naming another series joins no session); the session is
  // joined once the job exists.
  const preIdentity = device.state.disc ? ctx.discs.identity(device.state.disc.fingerprint) : undefined;
  const sessionAt = (album: AlbumInfo | null) => ctx.sessions?.match({ device: req.device, disc_type: discType ?? 'unknown', identity: preIdentity, label: device.state.disc?.label ?? '', album, series: req.series ?? null, season: req.season ?? null }) ?? null;
  let videoSession = discType && discType !== 'cd' ? sessionAt(null) : null;
  if (videoSession?.series) req = { ...req, series: videoSession.series, season: videoSession.season };
  const quickPick = req.series ? s.quickPickSeries : discType === 'cd' ? s.quickPickMusic : s.quickPickMovies;
  const targetDir = await mediaDir(config.mediaRoot, req.targetDir ?? path.join(config.mediaRoot, quickPick), 'target_dir');
  let continued: string | null = null;
  if (videoSession && (await continuesEarlierRips(videoSession, targetDir))) {
    continued = `${videoSession.why}: the season folder holds episodes of earlier rips, so this disc continues them without a session`;
    videoSession = null;
  }
  const wrongFolder = req.series ? seriesTargetRefusal(config.mediaRoot, { movies: s.quickPickMovies, series: s.quickPickSeries }, targetDir) : null;
  if (wrongFolder) throw new HttpError(400, wrongFolder);
  let workDir: string;
  // RAW_DIR is configured by the admin and may lie outside MEDIA_ROOT (a retry keeps the first rip's place).
  if (req.workDir && path.resolve(req.workDir) === path.resolve(config.rawDir)) workDir = config.rawDir;
  else if (req.workDir) workDir = await mediaDir(config.mediaRoot, req.workDir, 'work_dir');
  else if (s.workDir) workDir = await mediaDir(config.mediaRoot, s.workDir, 'the workDir setting');
  else workDir = config.rawDir;

  // The pre-scan's identity (metadata chain or a correction) names the job unless the request does.
  const identity = device.state.disc ? ctx.discs.identity(device.state.disc.fingerprint) : undefined;
  const useIdentity = identity && (!req.title?.trim() || req.title.trim() === identity.title);
  const episodes = req.series && req.season !== null && req.season !== undefined ? await seasonEpisodes(ctx, req.tmdbId ?? (identity?.kind === 'series' ? identity.tmdb_id : null) ?? null, req.season) : null;

  let transcodeNode = req.transcodeNode ?? null;
  if (transcodeNode) {
    const match = fleet.list().find((a) => a.node === transcodeNode || a.name === transcodeNode);
    if (!match) throw new HttpError(400, `transcode_node "${transcodeNode}" is not a known worker (see GET /capabilities)`);
    transcodeNode = match.node;
  }

  if (req.musicbrainzReleaseId && device.state.disc?.type !== 'cd') throw new HttpError(400, 'musicbrainz_release_id is for audio CDs only');

  // From here on no await: the busy checks and the insert form one step.
  const current = fleet.device(req.device);
  if (!current) throw new HttpError(404, `no device named "${req.device}"`);
  const owner = fleet.get(current.state.node);
  if (!owner?.online) throw new HttpError(503, `the worker ${current.state.node} owning ${req.device} is offline`);
  if (owner.status?.capabilities?.native) throw new HttpError(409, nativeWorkerRefusal(owner.name));
  const disc = current.state.disc;
  if (!disc) throw new HttpError(409, `there is no disc in ${req.device}: insert one and try again`);
  const active = jobs.active();
  const busy = active.find((j) => j.device === req.device && isDriveBusy(j.status));
  if (busy) throw new HttpError(409, `${req.device} is busy with job ${busy.id} (${apiStatus(busy.status)})`);
  const sameDisc = active.find((j) => isDriveBusy(j.status) && keyMatches(j.meta?.fingerprint, disc));
  if (sameDisc) throw new HttpError(409, `this disc is already being ripped by job ${sameDisc.id} (${sameDisc.device ?? 'another drive'})`);

  const id = randomUUID();
  const titles = req.titles ?? [];
  const mainFeatureOnly = typeof req.mainFeatureOnly === 'boolean' ? req.mainFeatureOnly : s.mainFeatureOnly;
  // An audio CD names its files by album; without a pre-scan result by its CD-Text or as unknown.
  // The pre-scan's own title (what the rip dialog sends unchanged) renames nothing.
  const album = disc.type !== 'cd' ? null : (req.album ?? albumForJob(pickAlbum(identity, disc, req.musicbrainzReleaseId ?? null), req.title?.trim() === identity?.title ? null : req.title, req.year));
  // A series rip without a title of its own is the series' job: it is listed under the series name, not the disc label.
  const title = album ? albumTitle(album) : req.title?.trim() || req.series?.trim() || (useIdentity ? identity.title : disc.title);
  const year = album ? album.year : (req.year ?? (useIdentity ? identity.year : null));
  const series = req.series ?? null;
  const season = req.season ?? null;
  const session = disc.type === 'cd' ? sessionAt(album) : videoSession;
  // What the worker's schema would drop is refused here, before a job holds the drive.
  const tooLong = ripLengthRefusal({ title, series, targetDir, workDir });
  if (tooLong) throw new HttpError(400, tooLong);
  const meta: JobMeta = {
    ...(useIdentity ? identityMeta(identity) : {}),
    ...(req.tmdbId ? { tmdb_id: req.tmdbId } : {}),
    ...(episodes && 'list' in episodes ? { episodes: episodes.list } : {}),
    ...req.meta,
    titles,
    work_dir: workDir,
    // The disc's identity, the key its history, pre-scan and corrections are found by, with the
    // label fingerprint (what older records are keyed by) and the ids it was made of.
    fingerprint: disc.fingerprint,
    label_fingerprint: labelKey(disc) ?? undefined,
    disc_ids: disc.ids ?? null,
    disc_label: disc.label,
    disc_type: disc.type,
    year,
    series,
    season,
    main_feature_only: mainFeatureOnly,
    title_source: (req.title?.trim() ? 'request' : useIdentity ? 'lookup' : 'label') satisfies TitleSource,
    // The language choice is stored in the job, so a retry of the rip or of the transcode keeps it.
    audio_languages: req.audioLanguages ?? [...s.audioLanguages],
    subtitle_languages: req.subtitleLanguages ?? [...s.subtitleLanguages],
    ...(transcodeNode ? { transcode_node: transcodeNode } : {}),
    ...(album ? { album, ...(disc.audio_cd?.musicbrainz_disc_id ? { musicbrainz_disc_id: disc.audio_cd.musicbrainz_disc_id } : {}) } : {}),
    ...(session && disc.type !== 'cd' ? { disc_number: session.disc_number } : {}),
  };
  // A disc TheDiscDB recognised: the agent finds its titles in its own scan and names them by role;
  // a movie with titles in the library already gets the missing ones into the same folder.
  const known = disc.type === 'cd' ? null : ctx.discs.knownTitles(disc);
  const libraryFolder = known && !series && known.some((t) => t.in_library) ? ctx.discs.libraryFolder(disc) : null;
  if (libraryFolder) meta.library_folder = libraryFolder;
  else delete meta.library_folder;
  const row = jobs.create({ id, title, target_dir: targetDir, device: req.device, node: current.state.node, meta });
  if (session && ctx.sessions) jobs.update(id, {}, { session_id: ctx.sessions.join(session, row) });
  if (continued) jobs.addLog(id, 'info', continued);
  const transcode = s.transcodeEnabled && disc.type !== 'cd';
  const args: RipArgs = {
    drive: current.state.drive,
    titles,
    main_feature_only: mainFeatureOnly,
    raw_dir: path.join(workDir, id),
    target_dir: targetDir,
    title,
    year,
    series,
    season,
    // An audio CD is FLAC already: it has no transcode stage.
    transcode,
    keep_original: s.keepOriginal,
    // A disc of a session leaves the drive the moment its rip is done: the next one goes in.
    auto_eject: s.autoEject || session !== null,
    min_title_seconds: s.minTitleSeconds,
    max_similar_titles: s.maxSimilarTitles,
    // The film's runtime the lookup knows is evidence for its main feature (only for the title it was looked up for).
    runtime_minutes: useIdentity && !series ? (identity.runtime_minutes ?? null) : null,
    // Without a transcode stage the rip names the output, so it writes the media-server files too.
    library: transcode ? null : libraryInfo(row, s, config.tmdbImageBaseUrl),
    ...(album ? { album } : {}),
    ...(known ? { disc_titles: plannedTitles(known), extras_folder: extrasFolder(s.mediaServerType), extras_by_kind: extrasByKind(s.mediaServerType) } : {}),
    ...(libraryFolder ? { library_folder: libraryFolder } : {}),
    ...(req.careful ? { careful: true } : {}),
  };
  jobs.addLog(id, 'info', `job created for "${title}" on ${req.device} (${req.origin})`);
  if (known) jobs.addLog(id, 'info', describePlan(known, titles.length > 0));
  if (episodes && 'why' in episodes) jobs.addLog(id, 'warn', `episode runtimes unavailable: ${episodes.why}; the files keep their title numbers`);
  else if (episodes) jobs.addLog(id, 'info', `season ${season} has ${episodes.list.length} episodes (runtimes from TMDB)`);
  dispatcher.startRip(row, args);
  return row;
}

/** The job log's line about a recognised disc's titles: what the rip takes and what is in the library. */
function describePlan(known: KnownDiscTitle[], chosen: boolean): string {
  const take = known.filter((t) => t.wanted).map((t) => describeRole(t.role));
  const there = known.filter((t) => t.in_library).length;
  const what = chosen ? 'the chosen titles are named by their role' : take.length ? `the rip takes ${take.length} title(s): ${take.join('; ')}` : 'no title is wanted';
  return `TheDiscDB knows ${known.length} title(s) of this disc; ${what}${there ? `; ${there} in the library already` : ''}`;
}

/** The season's episodes with runtimes from TMDB, or why there are none (no id, no key, TMDB failing). */
async function seasonEpisodes(ctx: RipJobDeps, tvId: number | null, season: number): Promise<{ list: { episode: number; minutes: number | null }[] } | { why: string }> {
  if (!tvId) return { why: 'the series has no TMDB id (pick it in the metadata search)' };
  if (!ctx.metadata.tmdb.configured()) return { why: 'no TMDB key is set' };
  try {
    const doc = await ctx.metadata.tmdb.season(tvId, season);
    return { list: doc.episodes.map((e) => ({ episode: e.episode, minutes: e.runtime_minutes })) };
  } catch (err) {
    return { why: (err as Error).message };
  }
}

/** The album an audio CD rip names its files by: a requested release among the disc's, else the pre-scan's, else CD-Text or unknown. */
function pickAlbum(identity: DiscIdentity | undefined, disc: DiscInfo, releaseId: string | null): AlbumInfo {
  if (!releaseId) return identity?.album ?? fallbackAlbum(disc);
  const found = [identity?.album, ...(identity?.alternatives ?? [])].find((a) => a?.release_id === releaseId);
  if (!found) throw new HttpError(400, `musicbrainz_release_id "${releaseId}" is not a release of this CD (see the disc's album and suggestions in GET /devices)`);
  return found;
}

/**
 * A session the disc's label or database would start at disc n > 1 while the season folder already holds
 * episodes: the discs before it were ripped earlier (last week, without a session), so the disc continues
 * the folder as any series disc does instead of waiting for discs that never come.
 */
async function continuesEarlierRips(match: SessionMatch, targetDir: string): Promise<boolean> {
  if (match.session || !match.start || match.disc_number <= 1 || !match.series || match.season === null) return false;
  const folder = seriesFolderName(match.series);
  const dir = path.join(targetDir, folder, seasonFolder(match.season, folder));
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  return highestEpisode(names, match.season) > 0;
}
