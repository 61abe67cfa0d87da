/**
 * Box-set sessions at work (issue 40): which session a disc joins when its rip job is made, the
 * episode numbers each disc continues with when its rip is done, the "insert disc 2 of 3" notice, the
 * end by hand. The rules are in session-plan.ts, the rows in session-store.ts (SQLite only, so a
 * restart of the coordinator finds every session and waiting disc as it was).
 */
import type { AlbumInfo, RippedTitle } from '../../shared/protocol.js';
import type { Logger } from '../../shared/log.js';
import type { JobRow, JobsStore } from '../jobs/jobs-store.js';
import { labelDiscNumber, type DiscIdentity } from '../metadata/disc-identity.js';
import { ripsAsSeries } from '../../shared/rip-as-series.js';
import { discPlace, endText, episodeNumbering, missingDiscs, nextDisc, nextDiscText, roleEpisodes, type Session, type SessionKind } from './session-plan.js';
import type { SessionStore } from './session-store.js';

/** A session as GET /sessions shows it: the rows and the progress in numbers. */
export interface SessionView extends Session {
  done: number[];
  ripping: number[];
  failed: number[];
  missing: number[];
  /** The disc to insert next while the session is open; null when none is asked for. */
  next_disc: number | null;
}

/** What the webhook and Home Assistant are told about a session. */
export interface SessionNotice {
  event: 'session_next_disc' | 'session_ended';
  text: string;
  session: SessionView;
}

/** The disc a rip job is made for, as far as sessions care. */
export interface SessionDiscFacts {
  device: string;
  disc_type: string;
  identity: DiscIdentity | undefined;
  /** The disc's volume label (its disc number, "…_D2"). */
  label: string;
  /** Audio CDs: the album the job names its files by. */
  album: AlbumInfo | null;
  /** The series the request names (the dialog, POST /jobs), else null. */
  series: string | null;
  season: number | null;
}

/** A session a new rip job joins: an open one, or one to start (recognised by label or database). */
export interface SessionMatch {
  session: Session | null;
  start: Omit<Session, 'id' | 'state' | 'created_at' | 'ended_at' | 'discs'> | null;
  disc_number: number;
  series: string | null;
  season: number | null;
  /** For the job log: why the disc belongs to the session and where. */
  why: string;
}

export function sessionView(session: Session): SessionView {
  const of = (state: string): number[] => session.discs.filter((d) => d.state === state).map((d) => d.disc_number);
  const failed = of('failed');
  return {
    ...session,
    done: of('done'),
    ripping: of('ripping'),
    failed,
    missing: missingDiscs(session).filter((n) => !failed.includes(n)),
    next_disc: session.state === 'open' ? nextDisc(session) : null,
  };
}

const same = (a: string | null | undefined, b: string | null | undefined): boolean => Boolean(a && b && a.trim().toLowerCase() === b.trim().toLowerCase());

export class SessionBook {
  /** Tells the household (webhook, Home Assistant); set by the app. */
  onNotice: (notice: SessionNotice) => void = () => undefined;
  /** Queues a waiting disc's transcode; set by the app (the dispatcher's queue). */
  enqueue: (jobId: string, rawDir: string, files: string[]) => void = () => undefined;

  constructor(
    readonly store: SessionStore,
    private readonly jobs: JobsStore,
    private readonly log: Logger,
  ) {}

  list(): SessionView[] {
    return this.store.list().map(sessionView);
  }

  get(id: string): SessionView | undefined {
    const s = this.store.get(id);
    return s ? sessionView(s) : undefined;
  }

  /** POST /sessions: the household starts a session (the rip dialog's "Staffel 2, 4 Discs"). */
  start(input: { kind: SessionKind; series: string | null; season: number | null; disc_total: number; drive: string | null }): SessionView {
    const session = this.store.create({ ...input, release: null, origin: 'dialog' });
    this.log.info(`session started for ${input.drive ?? 'any drive'}: ${sessionView(session).kind} ${input.series ?? ''}${input.season !== null ? ` season ${input.season}` : ''}, ${input.disc_total} discs`);
    return sessionView(session);
  }

  /**
   * The session a disc's rip joins, or null. An album CD of several discs joins the open session of its
   * MusicBrainz release (or one the household started for this drive), else starts one. A video disc joins
   * the open session of its TheDiscDB release, else of its series and season (request or label), else the
   * session started for its drive unless the disc names another series; a disc whose label or database
   * names its disc number starts a session of its own. The place is the disc's own number where known.
   */
  match(f: SessionDiscFacts): SessionMatch | null {
    const open = this.store.open();
    const onDrive = (s: Session): boolean => s.drive === null || s.drive === f.device;
    if (f.disc_type === 'cd') {
      const album = f.album;
      const multi = album && album.release_id && (album.disc_total ?? 1) > 1 ? album : null;
      const found = (multi && open.find((s) => s.kind === 'album' && s.release === multi.release_id)) || open.find((s) => s.kind === 'album' && s.release === null && onDrive(s));
      const name = album ? `${album.artist} - ${album.album}` : null;
      if (found) return this.placed(found, null, album?.disc_number ?? null, null, null, multi ? `MusicBrainz release ${multi.release_id}` : 'the session of this drive');
      if (!multi) return null;
      const start = { kind: 'album' as const, series: name, season: null, disc_total: multi.disc_total ?? null, drive: null, release: multi.release_id, origin: 'musicbrainz' };
      return this.placed(null, start, multi.disc_number, null, null, `MusicBrainz release ${multi.release_id} has ${multi.disc_total} discs`);
    }
    const id = f.identity;
    const idSeries = id && ripsAsSeries(id) ? id.title : null;
    const series = f.series ?? idSeries;
    const season = f.series ? f.season : (id?.season ?? null);
    const release = id?.recognised?.release ?? null;
    const named = id?.recognised?.disc_number ?? id?.disc_number ?? labelDiscNumber(f.label);
    const series_ = open.filter((s) => s.kind === 'series');
    const byRelease = release ? series_.find((s) => s.release === release) : undefined;
    if (byRelease) return this.placed(byRelease, null, named, byRelease.series, byRelease.season, `TheDiscDB release ${release}`);
    const bySeries = series ? series_.find((s) => same(s.series, series) && (season === null || s.season === season)) : undefined;
    if (bySeries) return this.placed(bySeries, null, named, bySeries.series, bySeries.season, `series ${series}`);
    const byDrive = series_.find((s) => s.drive === f.device && (!series || same(s.series, series)));
    if (byDrive) return this.placed(byDrive, null, named, byDrive.series, byDrive.season, `the session of drive ${f.device}`);
    if (!series || season === null || named === null) return null;
    const origin = release ? 'thediscdb' : 'label';
    const start = { kind: 'series' as const, series, season, disc_total: null, drive: null, release, origin };
    return this.placed(null, start, named, series, season, release ? `TheDiscDB release ${release}, disc ${named}` : `the disc label "${series}" season ${season} disc ${named}`);
  }

  private placed(session: Session | null, start: SessionMatch['start'], named: number | null, series: string | null, season: number | null, why: string): SessionMatch | null {
    if (!session) return start ? { session: null, start, disc_number: named ?? 1, series, season, why } : null;
    const place = discPlace(session, named);
    if ('refusal' in place) {
      this.log.warn(`the disc does not join session ${session.id}: ${place.refusal}`);
      return null;
    }
    return { session, start: null, disc_number: place.disc_number, series, season, why };
  }

  /** The job of a matched disc exists: the disc is in the session (a session recognised just now starts here). Answers the session's id. */
  join(match: SessionMatch, job: JobRow): string {
    const session = match.session ?? this.store.create(match.start as NonNullable<SessionMatch['start']>);
    if (match.session === null) this.log.info(`session ${session.id} started by ${session.origin}: ${match.why}`, job.id);
    this.store.addDisc(session.id, match.disc_number, job.id);
    const total = session.disc_total !== null ? ` of ${session.disc_total}` : '';
    this.jobs.addLog(job.id, 'info', `disc ${match.disc_number}${total} of session ${session.id} (${match.why}); the disc is ejected when its rip is done`);
    return session.id;
  }

  /**
   * A video disc's rip is done (inside the transaction of its event). Its episode range is TheDiscDB's
   * when the roles give one, else its files continue after the discs before it. Answers whether its
   * transcode goes into the queue now; false: it waits until the discs before it are done (or the session ends).
   */
  ripDone(job: JobRow, files: string[], titles: readonly RippedTitle[] | undefined): boolean {
    const found = this.store.byJob(job.id);
    if (!found) return true;
    const { session, disc } = found;
    const range = session.kind === 'series' ? roleEpisodes((titles ?? []).map((t) => t.role)) : null;
    this.store.updateDisc(job.id, { state: 'done', files: files.length, ...(range ? { episode_first: range.first, episode_last: range.last } : {}) });
    if (range) this.jobs.addLog(job.id, 'info', `session disc ${disc.disc_number}: episodes E${range.first}-E${range.last} by TheDiscDB`);
    const go = session.kind !== 'series' || range !== null || this.number(session.id, job.id);
    if (!go) {
      this.store.updateDisc(job.id, { waiting: true });
      this.jobs.addLog(job.id, 'info', `session disc ${disc.disc_number}: the transcode waits until the discs before it are ripped, so its episode numbers follow theirs (or until the session is ended)`);
    }
    this.askNext(session.id);
    return go;
  }

  /** Numbers the discs that can be numbered now; releases those that waited. Answers whether `current` got its numbers. */
  private number(sessionId: string, current: string | null): boolean {
    const session = this.store.get(sessionId);
    if (!session) return false;
    let got = false;
    for (const n of episodeNumbering(session.discs)) {
      this.store.updateDisc(n.job_id, { episode_first: n.first, episode_last: n.last, waiting: false });
      this.jobs.update(n.job_id, {}, { first_episode: n.first });
      this.jobs.addLog(n.job_id, 'info', `session disc ${n.disc_number}: episodes continue at E${n.first} (E${n.first}-E${n.last} unless the runtimes say otherwise)`);
      if (n.job_id === current) got = true;
      else if (session.discs.find((d) => d.job_id === n.job_id)?.waiting) this.release(n.job_id);
    }
    return got;
  }

  /** A waiting disc's transcode goes into the queue. */
  private release(jobId: string): void {
    const job = this.jobs.get(jobId);
    this.store.updateDisc(jobId, { waiting: false });
    if (!job || job.status !== 'transcoding' || !job.raw_path || !job.meta?.raw_files) return;
    this.enqueue(jobId, job.raw_path, job.meta.raw_files);
  }

  /** A job ended: an album CD's disc is done with it; a failed or canceled job's disc is failed (its place free for a new try). */
  jobEnded(job: JobRow): void {
    const found = this.store.byJob(job.id);
    if (!found) return;
    if (job.status === 'completed') {
      if (found.disc.state === 'done') return;
      this.store.updateDisc(job.id, { state: 'done' });
      this.askNext(found.session.id);
    } else if (job.status === 'failed' || job.status === 'canceled') {
      this.store.updateDisc(job.id, { state: 'failed', waiting: false });
    }
  }

  /** After a disc is done: the household is asked for the next one while the set has discs left. */
  private askNext(sessionId: string): void {
    const session = this.store.get(sessionId);
    if (!session || session.state !== 'open') return;
    const next = nextDisc(session);
    // Every disc of the set is ripped: the session has nothing left to ask for and ends by itself.
    if (next === null) {
      this.end(session.id);
      return;
    }
    const text = nextDiscText(session, next);
    this.log.info(`session ${session.id}: ${text}`);
    this.onNotice({ event: 'session_next_disc', text, session: sessionView(session) });
  }

  /** POST /sessions/{id}/end: the session ends; discs still waiting are transcoded without the session's numbers; the missing ones are named. */
  end(id: string): SessionView | undefined {
    const session = this.store.get(id);
    if (!session) return undefined;
    if (session.state === 'ended') return sessionView(session);
    this.store.end(id);
    for (const d of session.discs.filter((x) => x.waiting)) {
      this.jobs.addLog(d.job_id, 'warn', `session ended before the discs before disc ${d.disc_number} were ripped: its episodes are counted on from the season folder instead`);
      this.release(d.job_id);
    }
    const ended = this.store.get(id) as Session;
    const text = endText(ended);
    this.log.info(text);
    const view = sessionView(ended);
    this.onNotice({ event: 'session_ended', text, session: view });
    return view;
  }
}
