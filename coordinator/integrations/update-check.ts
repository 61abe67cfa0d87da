import type { Logger } from '../../shared/log.js';

/** How long the latest published versions are kept before the sources are asked again. */
export const UPDATE_CACHE_MS = 12 * 3600_000;
const TIMEOUT_MS = 10_000;
const RETRY_MS = 60_000;

export interface UpdateSource {
  /** The tool as the workers report it (capabilities.tools) or "node". */
  tool: string;
  url: string;
  parse(body: string, installed: string | null): string | null;
}

/** GitHub's releases/latest JSON: tag_name "1.8.2" or "v1.8.2". */
export function parseGithubLatest(body: string): string | null {
  try {
    const tag = (JSON.parse(body) as { tag_name?: unknown }).tag_name;
    return typeof tag === 'string' && tag.trim() ? tag.trim().replace(/^v/i, '') : null;
  } catch {
    return null;
  }
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d) return d;
  }
  return 0;
}

/** MakeMKV's download page: the highest "MakeMKV 1.17.8" (or "MakeMKV v1.17.8") it names. */
export function parseMakemkvPage(body: string): string | null {
  const found = [...body.matchAll(/MakeMKV\s+v?(\d+\.\d+\.\d+)/gi)].map((m) => m[1]);
  return found.sort(compareVersions).at(-1) ?? null;
}

/** nodejs.org/dist/index.json: the newest release of the installed major line ("v20.20.0" → "20.x"). */
export function parseNodeIndex(body: string, installed: string | null): string | null {
  let list: unknown;
  try {
    list = JSON.parse(body);
  } catch {
    return null;
  }
  if (!Array.isArray(list)) return null;
  const major = installed ? installed.replace(/^v/, '').split('.')[0] : null;
  const versions = list
    .map((e) => (e && typeof e === 'object' ? (e as { version?: unknown }).version : null))
    .filter((v): v is string => typeof v === 'string')
    .map((v) => v.replace(/^v/, ''))
    .filter((v) => !major || v.split('.')[0] === major);
  return versions.sort(compareVersions).at(-1) ?? null;
}

import type { UpdateEntry } from '../../shared/api-types.js';

export type { UpdateEntry };

interface Cached {
  latest: string | null;
  checkedAt: number | null;
  error: string | null;
}

/**
 * Installed against latest published versions. Each source is asked at most every 12 hours; a source
 * that fails keeps its last answer (marked with the error) instead of losing it.
 */
export class UpdateChecker {
  private readonly cache = new Map<string, Cached>();
  private readonly nextTry = new Map<string, number>();
  private inflight: Promise<void> | null = null;

  constructor(
    private readonly sources: UpdateSource[],
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  async check(installed: Record<string, string | null>): Promise<UpdateEntry[]> {
    const due = this.sources.filter((s) => this.now() >= (this.nextTry.get(s.tool) ?? 0));
    if (due.length) {
      this.inflight ??= Promise.all(due.map((s) => this.fetch(s, installed[s.tool] ?? null))).then(() => undefined);
      try {
        await this.inflight;
      } finally {
        this.inflight = null;
      }
    }
    return this.sources.map((s) => {
      const c = this.cache.get(s.tool) ?? { latest: null, checkedAt: null, error: null };
      const have = installed[s.tool] ?? null;
      return {
        tool: s.tool,
        installed: have,
        latest: c.latest,
        update_available: have && c.latest ? compareVersions(c.latest, have.replace(/^v/, '')) > 0 : null,
        source: s.url,
        checked_at: c.checkedAt === null ? null : new Date(c.checkedAt).toISOString(),
        error: c.error,
      };
    });
  }

  private async fetch(source: UpdateSource, installed: string | null): Promise<void> {
    const before = this.cache.get(source.tool);
    try {
      const res = await fetch(source.url, { headers: { 'user-agent': 'ripwerk-update-check' }, signal: AbortSignal.timeout(TIMEOUT_MS) });
      const body = await res.text();
      if (!res.ok) throw new Error(`it answered ${res.status}`);
      const latest = source.parse(body, installed);
      if (!latest) throw new Error('no version found in its answer');
      this.cache.set(source.tool, { latest, checkedAt: this.now(), error: null });
      this.nextTry.set(source.tool, this.now() + UPDATE_CACHE_MS);
    } catch (err) {
      const reason = (err as Error).name === 'TimeoutError' ? 'no answer within 10 s' : (err as Error).message;
      this.log.warn(`update check for ${source.tool} at ${source.url} failed: ${reason}; ${before?.latest ? 'the last answer is kept' : 'no answer yet'}`);
      // The stale answer stays; a failed source is asked again after a minute, not on every request.
      this.cache.set(source.tool, { latest: before?.latest ?? null, checkedAt: before?.checkedAt ?? null, error: reason });
      this.nextTry.set(source.tool, this.now() + RETRY_MS);
    }
  }
}
