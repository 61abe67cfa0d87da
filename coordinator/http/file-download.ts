import type { FileHandle } from 'node:fs/promises';
import type { Request, Response } from 'express';
import { HttpError } from './errors.js';

/**
 * The piece size a download reads and writes. Two buffers of this size are read into in turn and
 * written out: one is read while the other goes out, and nothing is allocated per piece. A read
 * stream (what res.sendFile uses) allocates a new buffer per piece: in the coordinator that ran the
 * 512 MB download at 0.2 of nginx's throughput with 64 KiB pieces and 0.4 with 1 MiB pieces; these two
 * buffers run at 0.87-1.13 of it (npm run bench -- download, on a busy machine).
 */
export const DOWNLOAD_PIECE_BYTES = 1024 * 1024;

/**
 * Full-size pieces of downloads that ended cleanly, kept for the next: two fresh 1 MiB buffers per
 * download are 2 MiB of memory outside the heap that the allocator hands out and takes back (page
 * faults, and outside memory that hastens garbage collection), for every Range request a player
 * seeks with. A piece comes back only once every write of its download has completed, so nothing
 * still being sent is overwritten; at most SPARE_PIECES are kept.
 */
const SPARE_PIECES = 4;
const sparePieces: Buffer[] = [];

/** A piece for `length` bytes still to send: a spare full-size one if there is, else a new one no larger than needed. */
function takePiece(length: number): Buffer {
  return sparePieces.pop() ?? Buffer.allocUnsafe(Math.min(DOWNLOAD_PIECE_BYTES, length));
}

function returnPieces(pieces: readonly (Buffer | undefined)[]): void {
  for (const piece of pieces) if (piece && piece.length === DOWNLOAD_PIECE_BYTES && sparePieces.length < SPARE_PIECES) sparePieces.push(piece);
}

/** How many spare pieces are kept now (for tests). */
export function sparePieceCount(): number {
  return sparePieces.length;
}

export interface DownloadFile {
  handle: FileHandle;
  size: number;
  mtime: Date;
}

/** A single byte range to send, the whole file, or null when the Range cannot be satisfied (416). */
function chosenRange(req: Request, res: Response, size: number): { start: number; end: number; partial: boolean } | null {
  const whole = { start: 0, end: size - 1, partial: false };
  if (req.headers.range === undefined || !/^\s*bytes=/i.test(req.headers.range) || !rangeStillFresh(req, res)) return whole;
  const ranges = req.range(size, { combine: true });
  if (ranges === -1) return null;
  // Malformed, or several ranges: the whole file, as RFC 9110 allows (no multipart answers).
  if (ranges === undefined || ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return whole;
  return { start: ranges[0].start, end: ranges[0].end, partial: true };
}

/** If-Range: the Range counts only while the file is still the one the client has (ETag or date). */
function rangeStillFresh(req: Request, res: Response): boolean {
  const ifRange = req.get('If-Range');
  if (!ifRange) return true;
  if (ifRange.includes('"')) return ifRange === res.getHeader('ETag');
  const since = Date.parse(ifRange);
  const modified = Date.parse(String(res.getHeader('Last-Modified') ?? ''));
  return Number.isFinite(since) && Number.isFinite(modified) && modified <= since;
}

/** Writes one piece; false when the client went away before it was taken. */
function writePiece(res: Response, piece: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    if (res.destroyed || res.writableEnded) return resolve(false);
    const onClose = (): void => resolve(false);
    res.once('close', onClose);
    res.write(piece, (err) => {
      res.off('close', onClose);
      resolve(!err);
    });
  });
}

/**
 * Sends an opened file: ETag and Last-Modified, 304 for a fresh conditional GET, one byte range as 206
 * with Content-Range, 416 with a Content-Range naming the size for a range past the end, else the whole
 * file; HEAD gets the headers only. The bytes come from `file.handle`, the very file the caller checked,
 * never from its path again. Content-Type and other headers are the caller's. A client that goes away
 * ends the sending; a file that shrinks meanwhile cuts the connection (the length was promised).
 */
export async function sendOpenedFile(req: Request, res: Response, file: DownloadFile): Promise<void> {
  const { handle, size, mtime } = file;
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Last-Modified', mtime.toUTCString());
  res.setHeader('ETag', `W/"${size.toString(16)}-${mtime.getTime().toString(16)}"`);
  if (req.fresh) {
    res.status(304).end();
    return;
  }
  const range = chosenRange(req, res, size);
  if (!range) {
    res.setHeader('Content-Range', `bytes */${size}`);
    throw new HttpError(416, `the requested range ${String(req.headers.range).slice(0, 100)} lies outside the file (${size} bytes)`);
  }
  const length = size === 0 ? 0 : range.end - range.start + 1;
  if (range.partial) {
    res.status(206);
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
  }
  res.setHeader('Content-Length', String(length));
  if (req.method === 'HEAD' || length === 0) {
    res.end();
    return;
  }
  // The second piece only when one piece does not hold it all.
  const pieces: [Buffer, Buffer | undefined] = [takePiece(length), undefined];
  let position = range.start;
  let left = length;
  let turn = 0;
  let sent: Promise<boolean> = Promise.resolve(true);
  try {
    while (left > 0) {
      const piece = (pieces[turn] ??= takePiece(left));
      turn ^= 1;
      // The other buffer may still be going out; this one went out before the previous write began.
      const { bytesRead } = await handle.read(piece, 0, Math.min(piece.length, left), position);
      if (bytesRead === 0) throw new Error(`the file ended after ${position} of ${size} bytes while it was being sent`);
      if (!(await sent)) return;
      sent = writePiece(res, piece.subarray(0, bytesRead));
      position += bytesRead;
      left -= bytesRead;
    }
    if (await sent) {
      // Every write has completed (each waited for the one before): the pieces may serve the next download.
      returnPieces(pieces);
      res.end();
    }
  } catch (err) {
    if (!res.headersSent) throw err;
    // The status line went out with the first piece: only cutting the connection tells the client.
    res.destroy(err as Error);
  }
}
