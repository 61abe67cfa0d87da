import type { NotificationOutcome } from '../../shared/api-types.js';
import type { Logger } from '../../shared/log.js';
import type { JobRow } from '../jobs/jobs-store.js';
import type { SettingsStore } from '../system/settings-store.js';
import type { SessionNotice } from '../sessions/session-book.js';
import { sendToTarget, TargetRefused, type TargetPolicy } from '../../shared/target-rules.js';

export type WebhookKind = 'discord' | 'slack' | 'ntfy' | 'generic';
export const WEBHOOK_KINDS: readonly string[] = ['auto', 'discord', 'slack', 'ntfy', 'generic'];

const TIMEOUT_MS = 10_000;

/**
 * Which service a webhook URL belongs to: the webhookKind setting when it names one, else the URL's
 * shape (Discord /api/webhooks/…, Slack hooks.slack.com or /services/…, an ntfy host), else generic.
 */
export function webhookKind(url: string, setting: string): WebhookKind {
  if (setting === 'discord' || setting === 'slack' || setting === 'ntfy' || setting === 'generic') return setting;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'generic';
  }
  if (/(^|\.)discord(app)?\.com$/.test(u.hostname) || /^\/api\/webhooks\/\d+\/[^/]+\/?$/.test(u.pathname)) return 'discord';
  if (u.hostname === 'hooks.slack.com' || /^\/services\/[^/]+\/[^/]+\/[^/]+\/?$/.test(u.pathname)) return 'slack';
  if (/(^|\.)ntfy\./.test(u.hostname) || u.hostname.startsWith('ntfy')) return 'ntfy';
  return 'generic';
}

/** What a job end says; the fields of the generic JSON body. */
export interface JobNotice {
  id: string;
  title: string;
  status: string;
  error: string | null;
  output_path: string | null;
  device: string | null;
  finished_at: string | null;
}

export function noticeOf(job: JobRow): JobNotice {
  return { id: job.id, title: job.title, status: job.status, error: job.error, output_path: job.output_path, device: job.device, finished_at: job.finished_at };
}

/** One line for people: what happened to which title. */
export function noticeText(n: JobNotice): string {
  if (n.status === 'completed') return `Ripwerk: "${n.title}" is ready${n.output_path ? ` in ${n.output_path}` : ''}`;
  if (n.status === 'failed') return `Ripwerk: "${n.title}" failed: ${n.error ?? 'no reason given'}`;
  if (n.status === 'canceled') return `Ripwerk: "${n.title}" was canceled`;
  return `Ripwerk: "${n.title}" is ${n.status}`;
}

/**
 * The request a job end sends: Discord gets JSON {content}, Slack JSON {text}, ntfy the line as plain
 * text with the title as query parameter `title`, a generic target the job as JSON.
 */
export function webhookRequest(kind: WebhookKind, url: string, n: JobNotice): { url: string; method: 'POST'; headers: Record<string, string>; body: string } {
  const json = { 'content-type': 'application/json' };
  switch (kind) {
    case 'discord':
      return { url, method: 'POST', headers: json, body: JSON.stringify({ content: noticeText(n) }) };
    case 'slack':
      return { url, method: 'POST', headers: json, body: JSON.stringify({ text: noticeText(n) }) };
    case 'ntfy': {
      const u = new URL(url);
      u.searchParams.set('title', n.title);
      return { url: u.toString(), method: 'POST', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: noticeText(n) };
    }
    default:
      return { url, method: 'POST', headers: json, body: JSON.stringify({ event: 'job_end', job: n }) };
  }
}

/**
 * The request a session notice sends: the line for people (Discord, Slack, ntfy), a generic target
 * JSON {event: "session_next_disc" | "session_ended", text, session} with the session's progress.
 */
export function sessionRequest(kind: WebhookKind, url: string, n: SessionNotice): ReturnType<typeof webhookRequest> {
  const json = { 'content-type': 'application/json' };
  const line = `Ripwerk: ${n.text}`;
  switch (kind) {
    case 'discord':
      return { url, method: 'POST', headers: json, body: JSON.stringify({ content: line }) };
    case 'slack':
      return { url, method: 'POST', headers: json, body: JSON.stringify({ text: line }) };
    case 'ntfy': {
      const u = new URL(url);
      u.searchParams.set('title', n.session.series ?? 'Ripwerk');
      return { url: u.toString(), method: 'POST', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: line };
    }
    default:
      return { url, method: 'POST', headers: json, body: JSON.stringify({ event: n.event, text: line, session: n.session }) };
  }
}

/**
 * A notice that did not get through. `message` is what a client may be told: whether it was
 * delivered, or why the target is refused; `detail` (the target's status, unreachable, timeout) is
 * for the log of a job end only, never for the test answer, so the test is no probe of ports.
 */
export class WebhookError extends Error {
  constructor(message: string, readonly refused: boolean, readonly detail: string) {
    super(message);
  }
}

/**
 * Tells the household when a job ends, through the webhookUrl setting. A failing target is logged
 * (without the URL: it holds the target's token) and never touches the job. The target is checked
 * at connect time (shared/target-rules.ts): no loopback, link-local or own address unless
 * allowPrivateWebhooks, never this API, no redirects.
 */
export class Notifier {
  constructor(
    private readonly settings: SettingsStore,
    private readonly log: Logger,
    /** This coordinator's API port, once it listens. */
    private readonly ownPort: () => number | null = () => null,
  ) {}

  /** The rule for targets under the current settings. */
  policy(allowPrivate = this.settings.get('allowPrivateWebhooks')): TargetPolicy {
    return { allowPrivate, ownPort: this.ownPort() };
  }

  /** Sends one notice; throws a WebhookError when the target is refused or does not take it. */
  async send(n: JobNotice): Promise<{ kind: WebhookKind }> {
    return this.deliver((kind, url) => webhookRequest(kind, url, n));
  }

  /** Sends the request a notice makes for the target's kind; throws a WebhookError like send. */
  private async deliver(request: (kind: WebhookKind, url: string) => ReturnType<typeof webhookRequest>): Promise<{ kind: WebhookKind }> {
    const s = this.settings.all();
    if (!s.webhookUrl) throw new WebhookError('no webhook is set (setting webhookUrl)', false, 'no webhook is set');
    const kind = webhookKind(s.webhookUrl, s.webhookKind);
    const req = request(kind, s.webhookUrl);
    const fail = (message: string, refused: boolean, detail: string): WebhookError => {
      this.last = { at: new Date().toISOString(), ok: false, message };
      return new WebhookError(message, refused, detail);
    };
    let status: number;
    try {
      status = await sendToTarget({ ...req, timeoutMs: TIMEOUT_MS }, this.policy(s.allowPrivateWebhooks));
    } catch (err) {
      if (err instanceof TargetRefused) throw fail(`the ${kind} webhook was not sent: ${err.message}`, true, `was not sent: ${err.message}`);
      const cause = (err as Error).name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : 'it cannot be reached';
      throw fail(`the ${kind} webhook was not delivered`, false, `was not sent: ${cause}`);
    }
    if (status < 200 || status > 299) {
      const detail = status >= 300 && status < 400 ? `answered ${status} (a redirect, which is not followed)` : `answered ${status}`;
      throw fail(`the ${kind} webhook was not delivered`, false, detail);
    }
    this.last = { at: new Date().toISOString(), ok: true, message: `the ${kind} webhook was delivered` };
    return { kind };
  }

  /** The outcome of the last message sent (job end or test), for GET /system/info: delivered or not, no target status. */
  last: NotificationOutcome | null = null;

  /** Called when a box-set session asks for its next disc or ends (the missing discs named). */
  sessionNotice(n: SessionNotice): void {
    if (!this.settings.get('webhookUrl')) return;
    this.deliver((kind, url) => sessionRequest(kind, url, n)).then(
      ({ kind }) => this.log.info(`${kind} webhook sent: ${n.event}`),
      (err: WebhookError) => this.log.warn(`the webhook of session ${n.session.id} ${err.detail ?? err.message}`),
    );
  }

  /** Called on every job end. */
  jobEnded(job: JobRow): void {
    if (!this.settings.get('webhookUrl')) return;
    this.send(noticeOf(job)).then(
      ({ kind }) => this.log.info(`${kind} webhook sent: ${job.status}`, job.id),
      (err: WebhookError) => this.log.warn(`the ${webhookKind(this.settings.get('webhookUrl'), this.settings.get('webhookKind'))} webhook ${err.detail ?? err.message}; the job is not affected`, job.id),
    );
  }
}
