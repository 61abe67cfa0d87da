import { schedule, type ScheduledTask } from 'node-cron';
import type { Logger } from '../../shared/log.js';
import type { SettingsStore } from '../system/settings-store.js';

/** MakeMKV's free beta key: "T-" and 66 letters, digits, underscores or @ (makemkv.md §5). */
const APP_KEY = /T-[\w@]{66}(?![\w@])/;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(html: string): string {
  return html.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) => {
    if (code[0] === '#') {
      const n = code[1] === 'x' || code[1] === 'X' ? parseInt(code.slice(2), 16) : Number(code.slice(1));
      return Number.isFinite(n) ? String.fromCodePoint(n) : whole;
    }
    return ENTITIES[code.toLowerCase()] ?? whole;
  });
}

/** The first application key on a page (the forum post keeps it in a <code> element), or null. */
export function extractAppKey(html: string): string | null {
  const text = decodeEntities(html.replace(/<[^>]*>/g, ''));
  return APP_KEY.exec(text)?.[0] ?? null;
}

const FETCH_TIMEOUT_MS = 30_000;

/** Spec, Limits: the ripper key is refreshed once a day (04:41, a quiet hour). */
export const REFRESH_SCHEDULE = '41 4 * * *';

/**
 * Keeps the ripperAppKey setting current: once a day (and at start when none is set) the configured
 * page is read and a new key saved and handed to the workers. A failed refresh keeps the old key.
 * The key itself never reaches a log line.
 */
export class RipperAppKeyRefresher {
  private task: ScheduledTask | null = null;

  constructor(
    private readonly settings: SettingsStore,
    private readonly url: string,
    private readonly publish: (key: string) => void,
    private readonly log: Logger,
  ) {}

  async refresh(): Promise<'updated' | 'unchanged' | 'failed'> {
    let key: string | null;
    try {
      const res = await fetch(this.url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { 'user-agent': 'Ripwerk' } });
      if (!res.ok) throw new Error(`the page answered ${res.status}`);
      key = extractAppKey(await res.text());
      if (!key) throw new Error('the page holds no key');
    } catch (err) {
      this.log.warn(`ripper key refresh from ${this.url} failed (${(err as Error).message}); the current key is kept`);
      return 'failed';
    }
    if (key === this.settings.get('ripperAppKey')) return 'unchanged';
    this.settings.set({ ripperAppKey: key });
    this.publish(key);
    this.log.info('ripper key refreshed: a new application key was saved and sent to the workers');
    return 'updated';
  }

  start(): void {
    this.task = schedule(REFRESH_SCHEDULE, () => void this.refresh(), { name: 'ripper-app-key' });
    if (!this.settings.get('ripperAppKey')) void this.refresh();
  }

  async stop(): Promise<void> {
    await this.task?.stop();
  }
}
