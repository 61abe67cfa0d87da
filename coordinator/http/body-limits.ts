import type { Request, RequestHandler, Response } from 'express';
import { KEY_BODY_LIMIT_BYTES } from '../keys/key-store.js';
import { sendText } from './errors.js';

/**
 * How much of the coordinator's memory request bodies may take, and for how long. A body is kept in
 * memory while it arrives (the JSON parser, the key store upload), so a client sending slowly could
 * hold it there: 300 slow 1 MB bodies took 320 MB, 12 slow key store uploads 480 MB more, each for
 * an hour (issue 42). Now every body must arrive within a deadline, and the bodies in flight share
 * a byte budget; a request beyond it is refused at once, before its body is read.
 */

/** The largest JSON body (every endpoint but the two key uploads). */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

/** JSON bodies being received at once, together (Content-Length, or the limit for a chunked body). */
export const JSON_BODY_BUDGET_BYTES = 16 * 1024 * 1024;

/** Key store and KEYDB uploads being received at once, together: two of the largest. */
export const UPLOAD_BODY_BUDGET_BYTES = 2 * KEY_BODY_LIMIT_BYTES;

/** A JSON body must have arrived this long after its request began. */
export const JSON_BODY_DEADLINE_MS = 30_000;

/** An upload must have arrived this long after its request began: 64 MB at 110 kB/s. */
export const UPLOAD_BODY_DEADLINE_MS = 600_000;

/** The headers of a request must have arrived this long after the connection (or the previous request) began (Node's headersTimeout). */
export const HEADERS_DEADLINE_MS = 20_000;

/** Seconds a refused client is told to wait (Retry-After) before sending again. */
const RETRY_AFTER_SECONDS = 5;

/**
 * A refused body is not read but discarded as it comes (Node does that with a body nobody reads), so
 * the client can read the refusal while it still sends; one that still sends after this long is cut off.
 */
export const REFUSED_LINGER_MS = 5_000;

/** The endpoints whose body is an upload (up to KEY_BODY_LIMIT_BYTES), as the router matches them: any case, a trailing slash. */
const UPLOAD_PATHS: ReadonlySet<string> = new Set(['/api/system/keystore', '/api/system/keydb']);

export interface BodyLimits {
  jsonLimit: number;
  jsonBudget: number;
  jsonDeadlineMs: number;
  uploadLimit: number;
  uploadBudget: number;
  uploadDeadlineMs: number;
}

export const BODY_LIMITS: BodyLimits = {
  jsonLimit: JSON_BODY_LIMIT_BYTES,
  jsonBudget: JSON_BODY_BUDGET_BYTES,
  jsonDeadlineMs: JSON_BODY_DEADLINE_MS,
  uploadLimit: KEY_BODY_LIMIT_BYTES,
  uploadBudget: UPLOAD_BODY_BUDGET_BYTES,
  uploadDeadlineMs: UPLOAD_BODY_DEADLINE_MS,
};

/** 1 MB, 1.5 MB, 64 MB, 900 bytes: a size for a refusal. */
export function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;
  return `${bytes} bytes`;
}

/**
 * A refusal before the body is read. Closing the connection at once would throw away the answer
 * too (the client's unread bytes make the kernel reset it), so the body is discarded as it comes and
 * the connection ends after REFUSED_LINGER_MS unless the body ended first.
 */
function refuseUnread(req: Request, res: Response, status: number, text: string, retry = false): void {
  if (retry) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
  sendText(res, status, text);
  if (req.complete) return;
  const socket = req.socket;
  const linger = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS);
  req.once('end', () => clearTimeout(linger));
  socket.once('close', () => clearTimeout(linger));
}

/** Bytes reserved from one budget, given back once. */
class Budget {
  private used = 0;
  constructor(readonly total: number) {}

  take(bytes: number): boolean {
    if (this.used + bytes > this.total) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }

  get inUse(): number {
    return this.used;
  }
}

/**
 * The guard for request bodies, before anything reads one. A request with a body reserves its
 * declared Content-Length (a chunked one the endpoint's limit) from the budget of its kind until its
 * answer is sent: a declared length over the limit is refused with 413, a reservation the budget has
 * no room for with 503 (and Retry-After), both before a byte of the body is read. A body that has not
 * arrived by its deadline is refused with 408. Each refusal closes the connection.
 */
export function bodyLimits(limits: BodyLimits = BODY_LIMITS): RequestHandler & { inUse(): { json: number; upload: number } } {
  const json = new Budget(limits.jsonBudget);
  const upload = new Budget(limits.uploadBudget);
  const guard: RequestHandler = (req, res, next) => {
    const declared = req.headers['content-length'];
    const chunked = req.headers['transfer-encoding'] !== undefined;
    if (!chunked && (declared === undefined || declared === '0')) {
      next();
      return;
    }
    const isUpload = UPLOAD_PATHS.has(req.path.toLowerCase().replace(/\/+$/, ''));
    const limit = isUpload ? limits.uploadLimit : limits.jsonLimit;
    const length = chunked ? limit : Number(declared);
    if (!Number.isSafeInteger(length) || length < 0) {
      refuseUnread(req, res, 400, 'the Content-Length of the request is not a number of bytes');
      return;
    }
    if (length > limit) {
      refuseUnread(req, res, 413, `the request body has ${length} bytes, more than the ${sizeText(limit)} this endpoint takes`);
      return;
    }
    const budget = isUpload ? upload : json;
    if (!budget.take(length)) {
      if (isUpload) refuseUnread(req, res, 503, `the coordinator is receiving other uploads (${sizeText(budget.total)}) already: try again when they are done`, true);
      else refuseUnread(req, res, 503, `the coordinator is receiving ${sizeText(budget.total)} of request bodies already: try again in a few seconds`, true);
      return;
    }
    const deadlineMs = isUpload ? limits.uploadDeadlineMs : limits.jsonDeadlineMs;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      budget.give(length);
    };
    const timer = setTimeout(() => {
      if (req.complete) return;
      const seconds = Math.round(deadlineMs / 1000);
      if (!res.headersSent) {
        // The answer first, then the connection: what was received of the body is dropped with it
        // (the parser reading it would go on keeping what comes, past the budget given back now).
        res.setHeader('Connection', 'close');
        res.once('finish', () => req.destroy());
        sendText(res, 408, `the request body did not arrive within ${seconds} s: refused`);
      } else req.destroy();
      finish();
    }, deadlineMs);
    // The body has arrived: the deadline is met (the reservation stays until the answer is sent).
    req.once('end', () => clearTimeout(timer));
    res.once('close', finish);
    next();
  };
  return Object.assign(guard, { inUse: () => ({ json: json.inUse, upload: upload.inUse }) });
}
