/**
 * The rules of a box-set session (issue 40), pure: where a disc goes in the set, which episode numbers
 * each disc continues with, which disc comes next and which are missing. The store and the wiring
 * (session-store.ts, session-book.ts) keep no rule of their own.
 */
import type { TitleRole } from '../../shared/disc-titles.js';

export type SessionKind = 'series' | 'album';
export type SessionState = 'open' | 'ended';
/** ripping: its job runs; done: its rip is done (a series disc may still be transcoding); failed: its job failed or was canceled. */
export type SessionDiscState = 'ripping' | 'done' | 'failed';

/** The most discs a session may have (a season box of 30 discs is already rare). */
export const SESSION_DISCS_MAX = 99;

export interface SessionDisc {
  disc_number: number;
  job_id: string;
  state: SessionDiscState;
  /** The files its rip gave (the episodes of a series disc without TheDiscDB roles). */
  files: number | null;
  episode_first: number | null;
  episode_last: number | null;
  /** Its rip is done but its transcode waits until the discs before it are done (its episode numbers follow theirs). */
  waiting: boolean;
}

export interface Session {
  id: string;
  kind: SessionKind;
  series: string | null;
  season: number | null;
  /** How many discs the set has; null when nobody said (a label names the disc's number, not the set's size). */
  disc_total: number | null;
  /** The drive the session was started for; null: any drive. */
  drive: string | null;
  /** TheDiscDB release slug or MusicBrainz release id the session was recognised by. */
  release: string | null;
  /** Who started it: "dialog" (POST /sessions), "label", "thediscdb", "musicbrainz". */
  origin: string;
  state: SessionState;
  created_at: string;
  ended_at: string | null;
  discs: SessionDisc[];
}

/**
 * The disc's place in the session: the number the disc itself names (label D<n>, TheDiscDB's disc index,
 * the MusicBrainz medium position) when it lies within the set and no ripped or ripping disc holds it;
 * without one the lowest free number (insertion order). A failed disc's place is free for a new try.
 * Answers a reason in words when the disc has no place.
 */
export function discPlace(session: Session, named: number | null): { disc_number: number } | { refusal: string } {
  const taken = new Map(session.discs.filter((d) => d.state !== 'failed').map((d) => [d.disc_number, d]));
  const total = session.disc_total ?? SESSION_DISCS_MAX;
  if (named !== null && named >= 1) {
    if (named > total) return { refusal: `the disc says it is disc ${named}, but the session has ${total} discs` };
    const holder = taken.get(named);
    if (holder) return { refusal: `disc ${named} of the session is ${holder.state === 'done' ? 'ripped already' : 'being ripped'} (job ${holder.job_id})` };
    return { disc_number: named };
  }
  for (let n = 1; n <= total; n++) if (!taken.has(n)) return { disc_number: n };
  return { refusal: `all ${total} discs of the session are ripped or being ripped` };
}

/** The episodes TheDiscDB's roles give a disc's titles (first and last), or null when they name none. */
export function roleEpisodes(roles: readonly (TitleRole | null | undefined)[]): { first: number; last: number } | null {
  let first = Infinity;
  let last = -Infinity;
  for (const role of roles) {
    if (role?.role !== 'episode' || !role.episodes) continue;
    first = Math.min(first, role.episodes.first);
    last = Math.max(last, role.episodes.last);
  }
  return Number.isFinite(first) ? { first, last } : null;
}

/**
 * Episode numbers for the series discs that can be numbered now, in disc order: a disc whose rip is done
 * continues after the last episode of the disc before it. A disc the database numbered (episode range
 * known) is taken as it is and the count goes on after it. A disc after a gap (an earlier disc not
 * ripped yet, failed without a range, or skipped) cannot be numbered: it waits.
 */
export function episodeNumbering(discs: readonly SessionDisc[]): { job_id: string; disc_number: number; first: number; last: number }[] {
  const byNumber = new Map(discs.map((d) => [d.disc_number, d]));
  const highest = Math.max(0, ...discs.map((d) => d.disc_number));
  const out: { job_id: string; disc_number: number; first: number; last: number }[] = [];
  let last: number | null = 0;
  for (let n = 1; n <= highest; n++) {
    const d = byNumber.get(n);
    if (d && d.episode_first !== null && d.episode_last !== null) {
      last = d.episode_last;
      continue;
    }
    if (!d || d.state !== 'done' || d.files === null || last === null) {
      last = null;
      continue;
    }
    const first: number = last + 1;
    last = first + Math.max(1, d.files) - 1;
    out.push({ job_id: d.job_id, disc_number: n, first, last });
  }
  return out;
}

/** The numbers of the set's discs with no ripped or ripping disc (a failed one counts as missing); up to the highest disc seen when the size is unknown. */
export function missingDiscs(session: Session): number[] {
  const held = new Set(session.discs.filter((d) => d.state !== 'failed').map((d) => d.disc_number));
  const total = session.disc_total ?? Math.max(0, ...session.discs.map((d) => d.disc_number));
  const out: number[] = [];
  for (let n = 1; n <= total; n++) if (!held.has(n)) out.push(n);
  return out;
}

/** The disc to insert next: the lowest missing one; with the size unknown, the one after the highest. Null when the set is complete. */
export function nextDisc(session: Session): number | null {
  const missing = missingDiscs(session);
  if (missing.length) return missing[0];
  if (session.disc_total === null) return Math.max(0, ...session.discs.map((d) => d.disc_number)) + 1;
  return null;
}

/** What a session is, in a few words: "Show, season 2" or the album's release. */
export function sessionName(session: Pick<Session, 'kind' | 'series' | 'season' | 'release'>): string {
  if (session.kind === 'album') return session.series ? `"${session.series}"` : 'the album';
  return `"${session.series ?? 'the series'}"${session.season !== null ? `, season ${session.season}` : ''}`;
}

/** The line that asks for the next disc ("insert disc 2 of 3 of "Show", season 1"). */
export function nextDiscText(session: Session, next: number): string {
  return `insert disc ${next}${session.disc_total !== null ? ` of ${session.disc_total}` : ''} of ${sessionName(session)}`;
}

/** The line of a session's end: how many discs are done and which are missing. */
export function endText(session: Session): string {
  const done = session.discs.filter((d) => d.state === 'done').length;
  const failed = session.discs.filter((d) => d.state === 'failed').map((d) => d.disc_number);
  const missing = missingDiscs(session).filter((n) => !failed.includes(n));
  const parts = [`${done}${session.disc_total !== null ? ` of ${session.disc_total}` : ''} disc(s) done`];
  if (missing.length) parts.push(`missing: disc ${missing.join(', ')}`);
  if (failed.length) parts.push(`failed: disc ${failed.join(', ')}`);
  return `session ${sessionName(session)} ended: ${parts.join('; ')}`;
}
