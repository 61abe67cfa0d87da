import fs from 'node:fs/promises';
import express from 'express';
import { realPathWithin } from '../../shared/media-paths.js';
import type { AppContext } from '../context.js';
import { HttpError, objectBody } from '../http/errors.js';
import { SourceError } from '../metadata/match.js';
import { applyIdentityToJobs } from '../discs/identity-jobs.js';
import type { DiscKey } from '../../shared/disc-key.js';
import { isPosterPath, libraryInfo } from '../library/library-info.js';
import { applyCorrection, planCorrection, renamedStreams, rewriteLibraryFiles } from '../library/library-correction.js';
import { identityMeta, type DiscIdentity } from '../metadata/disc-identity.js';
import { withMovieRuntime } from '../metadata/chain.js';
import { checkTarget } from '../../shared/target-rules.js';
import type { JobRow } from '../jobs/jobs-store.js';
import { SHORT_TEXT_MAX } from '../../shared/protocol-schemas.js';

const SOURCES = ['tmdb', 'jikan', 'omdb', 'manual'];
/** A corrected title or series name: at most what a worker's command takes (a rip still running gets it). */
const TITLE_MAX = SHORT_TEXT_MAX;
/** A year typed by hand: from the first films (1870s) to 2100. */
const YEAR_MIN = 1870;
const YEAR_MAX = 2100;
/** A season number: 0 (specials) to 999, as POST /jobs takes it. */
const SEASON_MAX = 999;

function optionalString(body: Record<string, unknown>, key: string, max: number): string | null {
  const v = body[key];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || v.length > max) throw new HttpError(400, `${key} must be a text of at most ${max} characters`);
  return v;
}

function optionalInt(body: Record<string, unknown>, key: string, min: number, max: number): number | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new HttpError(400, `${key} must be a whole number from ${min} to ${max}`);
  return v;
}

/**
 * Renames a finished job's library folder and files to a corrected identity, writes its nfo and
 * poster anew and asks the media server to rescan. Returns where the files went.
 */
async function correctFinishedJob(ctx: AppContext, job: JobRow, identity: DiscIdentity): Promise<{ from: string; to: string; files: string[] }> {
  const meta = job.meta ?? {};
  const series = Boolean(meta.series);
  // The folder is renamed and written into: it must be a real folder under MEDIA_ROOT, not a link a share user put there.
  if (job.output_path) {
    const st = await fs.lstat(job.output_path).catch(() => null);
    const found = await realPathWithin([ctx.config.mediaRoot], job.output_path);
    if (st?.isSymbolicLink() || found.kind === 'outside') throw new HttpError(403, `the job's output folder ${job.output_path} is a symbolic link or leads outside ${ctx.config.mediaRoot}: nothing was changed`);
  }
  const plan = await planCorrection(job, identity, ctx.config.mediaRoot);
  await applyCorrection(plan, series);
  const season = series ? (identity.kind === 'series' && identity.season !== null ? identity.season : meta.season) : meta.season;
  ctx.jobs.update(job.id, { title: identity.title, output_path: plan.toDir }, { ...identityMeta(identity), year: identity.year, output_files: plan.files, ...(meta.streams ? { streams: renamedStreams(meta.streams, meta.output_files ?? [], plan.files) } : {}), ...(series ? { series: identity.title, season } : {}) });
  const updated = ctx.jobs.get(job.id) as JobRow;
  // The coordinator fetches this poster itself: its own API port is never a poster source either.
  await rewriteLibraryFiles(plan.toDir, libraryInfo(updated, ctx.settings.all(), ctx.config.tmdbImageBaseUrl), (level, text) => ctx.jobs.addLog(job.id, level, text), { ownPort: ctx.notifier.policy().ownPort });
  ctx.jobs.addLog(job.id, 'info', `library corrected: ${plan.fromDir} → ${plan.toDir} (${plan.files.length} file(s) renamed)`);
  ctx.library.jobEnded(updated);
  return { from: plan.fromDir, to: plan.toDir, files: plan.files };
}

/**
 * The disc an override is for: given directly, as the disc in a drive, or as the disc of a job. The
 * key is the disc's identity; its label fingerprint (from the drive's disc or the job's meta) finds
 * the jobs made before content ids when none are under the identity.
 */
function targetDisc(ctx: AppContext, body: Record<string, unknown>): DiscKey {
  const given = ['fingerprint', 'device', 'job_id'].filter((k) => body[k] !== undefined && body[k] !== null && body[k] !== '');
  if (given.length !== 1) throw new HttpError(400, 'name the disc with exactly one of fingerprint, device or job_id');
  const value = body[given[0]];
  if (typeof value !== 'string') throw new HttpError(400, `${given[0]} must be a text`);
  if (given[0] === 'fingerprint') return { fingerprint: value };
  if (given[0] === 'device') {
    const device = ctx.fleet.device(value);
    if (!device) throw new HttpError(404, `no device named "${value}"`);
    if (!device.state.disc) throw new HttpError(409, `there is no disc in ${value}`);
    return device.state.disc;
  }
  const job = ctx.jobs.get(value);
  if (!job) throw new HttpError(404, `no job with id ${value}`);
  const fp = job.meta?.fingerprint;
  if (fp === undefined) throw new HttpError(409, `job ${value} has no disc fingerprint (made before fingerprints were kept)`);
  return { fingerprint: fp, label_fingerprint: job.meta?.label_fingerprint ?? null };
}

/** /metadata: search, live status, season runtimes and corrections (of a disc, or of a finished job's files). */
export function metadataRouter(ctx: AppContext): express.Router {
  const r = express.Router();
  const { metadata } = ctx;

  r.get('/metadata/search', async (req, res) => {
    const raw = req.query.q ?? req.query.query ?? req.query.title;
    const query = typeof raw === 'string' ? raw.trim() : '';
    if (!query) throw new HttpError(400, 'give the title to search for as ?q=');
    if (query.length > 200) throw new HttpError(400, 'the search text is longer than 200 characters');
    res.json(await metadata.search(query));
  });

  r.get('/metadata/status', async (_req, res) => {
    const sources = await metadata.status();
    res.json({ ok: sources.some((s) => s.ok), sources });
  });

  r.get('/metadata/tv/:id/season/:n', async (req, res) => {
    const id = Number(req.params.id);
    const n = Number(req.params.n);
    if (!Number.isInteger(id) || id <= 0) throw new HttpError(400, 'the series id must be a positive whole number (a TMDB id)');
    if (!Number.isInteger(n) || n < 0 || n > 200) throw new HttpError(400, 'the season must be a whole number from 0 to 200');
    if (!metadata.tmdb.configured()) throw new HttpError(409, 'no TMDB key is set: season runtimes come from TMDB (setting tmdbApiKey)');
    try {
      res.json(await metadata.tmdb.season(id, n));
    } catch (err) {
      if (err instanceof SourceError && err.status === 404) throw new HttpError(404, `TMDB knows no season ${n} of series ${id}`);
      if (err instanceof SourceError) throw new HttpError(502, err.message);
      throw err;
    }
  });

  r.post('/metadata/override', async (req, res) => {
    const body = objectBody(req);
    const disc = targetDisc(ctx, body);
    const fingerprint = disc.fingerprint;
    // A series typed by hand comes as `series` (its name); a search hit names it as `title` with kind series.
    const seriesName = optionalString(body, 'series', TITLE_MAX)?.trim() || null;
    const titleGiven = optionalString(body, 'title', TITLE_MAX)?.trim() || null;
    if (seriesName && titleGiven && titleGiven !== seriesName) throw new HttpError(400, 'give the series name once: as series, or as title with kind series');
    const title = seriesName ?? titleGiven;
    if (!title) throw new HttpError(400, 'title is required: the chosen match\'s title, or the name typed by hand');
    const source = optionalString(body, 'source', 20) ?? 'manual';
    if (!SOURCES.includes(source)) throw new HttpError(400, `source must be one of ${SOURCES.join(', ')}`);
    const kind = optionalString(body, 'kind', 20) ?? (seriesName ? 'series' : 'movie');
    if (kind !== 'movie' && kind !== 'series') throw new HttpError(400, 'kind must be movie or series');
    if (seriesName && kind !== 'series') throw new HttpError(400, 'series names a series: kind must be series or left out');
    const before = ctx.discs.identity(fingerprint);
    const season = optionalInt(body, 'season', 0, SEASON_MAX) ?? (kind === 'series' ? (before?.season ?? null) : null);
    const poster = optionalString(body, 'poster_path', 1000);
    if (poster !== null && !isPosterPath(poster)) throw new HttpError(400, 'poster_path must be a TMDB image path such as /abc123.jpg or an http(s) URL');
    // The coordinator fetches the poster itself (poster cache): a URL gets the rules of a webhook target.
    const posterRefusal = poster !== null && /^https?:/i.test(poster) ? await checkTarget(poster, ctx.notifier.policy()) : null;
    if (posterRefusal) throw new HttpError(400, `poster_path refused: ${posterRefusal}`);
    const named: DiscIdentity = {
      title,
      year: optionalInt(body, 'year', YEAR_MIN, YEAR_MAX),
      confidence: 1,
      poster,
      kind,
      season,
      source: 'override',
      source_id: optionalString(body, 'id', 100) ? `${source}:${String(body.id)}` : source,
      overview: optionalString(body, 'overview', 10_000),
      tmdb_id: optionalInt(body, 'tmdb_id', 1, Number.MAX_SAFE_INTEGER) ?? (source === 'tmdb' && /^\d+$/.test(String(body.id ?? '')) ? Number(body.id) : null),
      imdb_id: optionalString(body, 'imdb_id', 20) ?? (source === 'omdb' ? optionalString(body, 'id', 20) : null),
      // A new name does not change what is on the disc: the titles TheDiscDB knows stay with it.
      ...(before?.disc_titles?.length ? { disc_titles: before.disc_titles, recognised: before.recognised ?? null } : {}),
    };
    // A movie of TMDB: its runtime is evidence for the disc's main feature.
    const identity = await withMovieRuntime(metadata.tmdb, named, ctx.log);
    // A finished job: its files in the library are renamed first; a refusal (409) changes nothing at all.
    const finished = typeof body.job_id === 'string' ? ctx.jobs.get(body.job_id) : undefined;
    const renamed = finished?.status === 'completed' ? await correctFinishedJob(ctx, finished, identity) : null;
    ctx.discs.prescan.override(fingerprint, identity);
    const jobs = applyIdentityToJobs(ctx, disc, identity, 'override');
    ctx.log.info(`metadata of disc ${fingerprint} corrected to "${identity.title}"${identity.year ? ` (${identity.year})` : ''} from ${source}; ${jobs.length} job(s) updated`);
    res.json({ fingerprint, identity, jobs, renamed });
  });

  return r;
}
