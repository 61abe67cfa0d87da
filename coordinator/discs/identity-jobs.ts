import type { JobMeta } from '../../shared/api-types.js';
import type { JobsStore } from '../jobs/jobs-store.js';
import { identityMeta, type DiscIdentity } from '../metadata/disc-identity.js';
import { isDriveBusy } from '../jobs/job-status.js';
import { lookupKeys, type DiscKey } from '../../shared/disc-key.js';

/** Who named a job when it was made: the request, the disc's lookup, or (the lookup had not answered) its label. */
export type TitleSource = 'request' | 'lookup' | 'label';

/** Sources whose identity is a real answer (not the label, not "nothing found"). */
const ANSWERS = new Set(['tmdb', 'jikan', 'omdb', 'override']);

/**
 * Gives the jobs of a disc a new identity: title (while the rip still runs, so the output folder
 * carries it), year, ids, poster and overview. A correction reaches every job of the disc; a late
 * lookup answer only the jobs whose title came from the label because the lookup had not answered
 * when they were made. Returns the ids of the jobs changed.
 *
 * The jobs of a disc are those under its identity (meta.fingerprint); only when there are none, the
 * jobs made before content ids under its label fingerprint (shared/disc-key.ts, lookupKeys).
 */
export function applyIdentityToJobs(ctx: { jobs: JobsStore }, disc: DiscKey | string, identity: DiscIdentity, reason: 'override' | 'lookup'): string[] {
  if (reason === 'lookup' && !ANSWERS.has(identity.source)) return [];
  const updated: string[] = [];
  for (const job of jobsOfDisc(ctx.jobs, typeof disc === 'string' ? { fingerprint: disc } : disc)) {
    const unnamed = isDriveBusy(job.status) && job.meta?.rip_fertig !== true;
    if (reason === 'lookup' && (job.meta?.title_source !== 'label' || !unnamed)) continue;
    const patch: JobMeta = { ...identityMeta(identity), year: identity.year };
    if (unnamed) {
      if ((job.meta?.series ?? null) !== null) patch.series = identity.title;
      if (reason === 'lookup') patch.title_source = 'lookup';
    }
    // One write: the title (while the rip still names the output) with the meta.
    ctx.jobs.update(job.id, unnamed ? { title: identity.title } : {}, patch);
    const named = `"${identity.title}"${identity.year ? ` (${identity.year})` : ''}`;
    const message = reason === 'lookup' ? `the disc's lookup answered after the job was made: named ${named} from ${identity.source}` : `metadata corrected to ${named}${unnamed ? '' : '; the output already written keeps its name'}`;
    ctx.jobs.addLog(job.id, 'info', message);
    updated.push(job.id);
  }
  return updated;
}

/** The jobs of a disc, newest first: under its identity, else (none there) the legacy ones under its label fingerprint. */
export function jobsOfDisc(jobs: Pick<JobsStore, 'byFingerprint'>, disc: DiscKey): ReturnType<JobsStore['byFingerprint']> {
  for (const key of lookupKeys(disc)) {
    const found = jobs.byFingerprint(key);
    if (found.length > 0) return found;
  }
  return [];
}
