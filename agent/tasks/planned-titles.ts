/**
 * A rip of a disc TheDiscDB recognised: the coordinator sends every title the database knows with
 * its role and whether to take it (RipArgs.disc_titles); here they are found in the agent's own scan
 * by their evidence (source, segment map, duration, size; never the title number, which shifts with
 * MakeMKV's minimum length and version).
 */
import { describeRole, matchTitles, type TitleRole } from '../../shared/disc-titles.js';
import type { PlannedTitle, Track } from '../../shared/protocol.js';

export interface PlannedSelection {
  /** The role of each scanned title found in the plan, by scan number. */
  roles: Map<number, TitleRole>;
  /** The scanned titles the plan takes, in scan order. */
  take: Track[];
  /** What was found and left, for the job log. */
  notes: string[];
}

function sourceOf(t: Pick<Track, 'number' | 'source_file'>): string {
  return t.source_file ? `${t.number} (${t.source_file})` : String(t.number);
}

/** Pairs the scan with the plan: every paired title gets its role; those the plan takes are selected. */
export function plannedSelection(tracks: readonly Track[], plan: readonly PlannedTitle[]): PlannedSelection {
  const pairs = matchTitles(tracks, plan);
  const roles = new Map<number, TitleRole>();
  const take: Track[] = [];
  const found: string[] = [];
  const left: string[] = [];
  for (const p of pairs) {
    roles.set(p.scan.number, p.known.role);
    const what = `${sourceOf(p.scan)} = ${describeRole(p.known.role)}`;
    if (p.known.take) {
      take.push(p.scan);
      found.push(`${what} [${p.evidence.join('+')}]`);
    } else left.push(what);
  }
  const notes: string[] = [];
  if (found.length) notes.push(`titles by TheDiscDB: ${found.join('; ')}`);
  if (left.length) notes.push(`title(s) left (in the library already, a kind not wanted, or play-all): ${left.join('; ')}`);
  const paired = new Set(pairs.map((p) => p.known));
  const missing = plan.filter((t) => t.take && !paired.has(t));
  if (missing.length) notes.push(`TheDiscDB title(s) not found in this scan: ${missing.map((t) => `${t.source_file ?? `#${t.index}`} (${describeRole(t.role)})`).join('; ')}`);
  return { roles, take, notes };
}
