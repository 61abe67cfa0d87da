import type { Job } from '../../shared/api-types.js';
import { isLive, type JobStatus } from './job-status.js';

/** What the body needs of a job row. */
export interface ListedRow {
  id: string;
  status: JobStatus;
  created_at: string;
}

/**
 * A live row's JSON: a string when it is the same at every moment (no estimate can be made: a queued
 * transcode, a rip without progress), else put together for the moment asked (the ETA moves).
 */
export type LiveJson = string | ((now: number) => string);

/** Where the rows come from: all of them in the list's order (newest first, ties by id), or one. */
export interface ListSource<R extends ListedRow> {
  all(): R[];
  get(id: string): R | undefined;
  view(row: R, now: number): Job;
  /** A live row's JSON, equal to JSON.stringify(view(row, now)) at any moment, rendered once for all. */
  live(row: R): LiveJson;
}

/** A row whose ETA moves with the clock is rendered per request, in its place between the buffers. */
type Segment = Buffer | { live: string };

/**
 * Rows per chunk of the body: about 80 KB for 100 rows. A written row makes its chunk be built anew by
 * the next request (the rows' JSON written into one new buffer, nothing rendered), so a sweep writing
 * rows all over the list costs each request a copy of the few chunks written since the last one, and
 * the body still goes out as about one piece per 100 rows. (Sending written rows as pieces of their
 * own between slices of the old buffer made a sweep's request thousands of pieces: a megabyte of
 * short-lived objects each, and the collections that came with them held the requests.)
 */
const CHUNK_ROWS = 100;
const COMMA = Buffer.from(',');

/** A live row's JSON, or the row it was last written with until a request renders it. */
type LiveEntry<R> = { row: R } | { json: LiveJson };

/**
 * The GET /jobs body, kept in memory and changed with every write (JobsStore.track), so a request
 * reads no rows: the order of the ids, every finished row's JSON, and the rows in chunks of ready
 * buffers. A live row without an estimate (the thousand queued transcodes of a big retry) is in its
 * chunk's buffer like a finished one; only the rows with an estimate are rendered per request.
 */
export class JobListBody<R extends ListedRow> {
  /** Finished rows' JSON. */
  private readonly jsonCache = new Map<string, string>();
  /** Live rows' JSON, rendered from the row of their last write (or read) on their first use. */
  private readonly liveRender = new Map<string, LiveEntry<R>>();
  private order: { id: string; created_at: string }[] | null = null;
  private liveIds = new Set<string>();
  /** Live rows whose fixed JSON is in their chunk's buffer: a write to one builds the chunk anew. */
  private readonly liveInBuffer = new Set<string>();
  /**
   * CHUNK_ROWS rows each: one buffer with the pieces (separator and JSON) of the rows that are the
   * same at every moment, and the rows whose ETA moves sent in their places.
   */
  private chunks: (Segment[] | undefined)[] = [];
  private segments: Segment[] | null = null;

  constructor(private readonly source: ListSource<R>, private readonly clock: () => number) {}

  /** The body in pieces ("[", the rows with their commas, "]"), to be written one after the other. */
  parts(): Buffer[] {
    if (!this.segments) this.segments = this.buildSegments();
    const now = this.clock();
    return this.segments.map((seg) => {
      if (Buffer.isBuffer(seg)) return seg;
      const json = this.liveJson(seg.live);
      return Buffer.from(typeof json === 'string' ? json : json(now));
    });
  }

  /** Keeps the body in step with a written row (created, changed, or removed when row is undefined). */
  track(id: string, row: R | undefined): void {
    this.jsonCache.delete(id);
    this.liveRender.delete(id);
    // A live row keeps the row it was written with, so a request renders it without reading it again.
    if (row && isLive(row.status)) this.liveRender.set(id, { row });
    if (!this.order) return;
    const wasLive = this.liveIds.has(id);
    const inBuffer = this.liveInBuffer.delete(id);
    if (row && isLive(row.status)) this.liveIds.add(id);
    else this.liveIds.delete(id);
    // A finished row is rendered here, by the writer (a sweep slice, an event), from the row it wrote:
    // the next request only puts buffers together instead of reading and rendering every written row.
    if (row && !isLive(row.status)) this.jsonCache.set(id, JSON.stringify(this.source.view(row, this.clock())));
    // The progress of a row rendered per request changes nothing around it.
    if (row && wasLive && isLive(row.status) && !inBuffer) return;
    this.segments = null;
    const at = row ? this.positionOf(id, row.created_at) : this.order.findIndex((e) => e.id === id);
    if (!row || at < 0) {
      // Removed or new: the rows after it move, every chunk is built anew.
      if (at >= 0) this.order.splice(at, 1);
      if (row) this.insert(id, row.created_at);
      this.chunks = [];
      return;
    }
    // The chunk is built anew by the next request, from the rows' JSON kept here.
    this.chunks[Math.floor(at / CHUNK_ROWS)] = undefined;
  }

  private insert(id: string, createdAt: string): void {
    const order = this.order ?? [];
    // newest first, ties by id: a new row goes in front of every older one
    let i = 0;
    while (i < order.length && (order[i].created_at > createdAt || (order[i].created_at === createdAt && order[i].id < id))) i++;
    order.splice(i, 0, { id, created_at: createdAt });
  }

  /**
   * A live row's JSON. Its view moves with the clock only through the ETA: the row is read (when no
   * write brought it) and rendered once until it is written again, and a request puts in the ETA
   * (ListSource.live). A row written several times between requests is rendered once.
   */
  private liveJson(id: string): LiveJson {
    const entry = this.liveRender.get(id);
    if (entry && 'json' in entry) return entry.json;
    const row = entry?.row ?? this.source.get(id);
    if (!row) return 'null';
    const json = this.source.live(row);
    this.liveRender.set(id, { json });
    return json;
  }

  /** A finished row's JSON, kept until the row is written. */
  private finishedJson(id: string, now: number): string {
    let json = this.jsonCache.get(id);
    if (json === undefined) {
      const row = this.source.get(id);
      json = row ? JSON.stringify(this.source.view(row, now)) : 'null';
      this.jsonCache.set(id, json);
    }
    return json;
  }

  private buildSegments(): Segment[] {
    const order = this.loadOrder();
    const out: Segment[] = [Buffer.from('[')];
    for (let start = 0, c = 0; start < order.length; start += CHUNK_ROWS, c++) {
      let chunk = this.chunks[c];
      if (!chunk) {
        chunk = this.buildChunk(order, start, Math.min(order.length, start + CHUNK_ROWS));
        this.chunks[c] = chunk;
      }
      out.push(...chunk);
    }
    out.push(Buffer.from(']'));
    return out;
  }

  /** Writes the chunk's fixed rows' JSON into one new buffer: finished rows' strings are kept, none is rendered. */
  private buildChunk(order: { id: string }[], from: number, to: number): Segment[] {
    const now = this.clock();
    const pieces: string[] = [];
    const moving = new Map<number, string>();
    let bytes = 0;
    for (let i = from; i < to; i++) {
      const { id } = order[i];
      let json: LiveJson;
      if (this.liveIds.has(id)) {
        json = this.liveJson(id);
        if (typeof json === 'string') this.liveInBuffer.add(id);
        else this.liveInBuffer.delete(id);
      } else json = this.finishedJson(id, now);
      if (typeof json === 'string') {
        pieces.push(json);
        bytes += (i === 0 ? 0 : 1) + Buffer.byteLength(json);
      } else {
        moving.set(i - from, id);
        pieces.push('');
      }
    }
    const buf = Buffer.allocUnsafe(bytes);
    const ends: number[] = [];
    let at = 0;
    for (let k = 0; k < pieces.length; k++) {
      if (!moving.has(k)) {
        if (from + k !== 0) buf[at++] = 0x2c; // ','
        at += buf.write(pieces[k], at);
      }
      ends.push(at);
    }
    return chunkSegments(buf, ends, moving, from);
  }

  private loadOrder(): { id: string; created_at: string }[] {
    if (!this.order) {
      const now = this.clock();
      const rows = this.source.all();
      this.order = rows.map((r) => ({ id: r.id, created_at: r.created_at }));
      this.liveIds = new Set();
      for (const r of rows) {
        if (isLive(r.status)) {
          this.liveIds.add(r.id);
          if (!this.liveRender.has(r.id)) this.liveRender.set(r.id, { row: r });
        } else this.jsonCache.set(r.id, JSON.stringify(this.source.view(r, now)));
      }
    }
    return this.order;
  }

  /**
   * Where the job stands in the order (newest first, ties by id), by binary search: a sweep that
   * writes many rows must not walk the whole list for each. -1 when it is not in the list.
   */
  private positionOf(id: string, createdAt: string): number {
    const order = this.order ?? [];
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const e = order[mid];
      if (e.created_at > createdAt || (e.created_at === createdAt && e.id < id)) lo = mid + 1;
      else hi = mid;
    }
    return lo < order.length && order[lo].id === id ? lo : -1;
  }
}

/** A chunk's buffer with its moving rows sent in place of their (empty) pieces. */
function chunkSegments(buf: Buffer, ends: number[], moving: Map<number, string>, start: number): Segment[] {
  if (moving.size === 0) return [buf];
  const out: Segment[] = [];
  let from = 0;
  for (const [k, id] of moving) {
    const begin = k === 0 ? 0 : ends[k - 1];
    if (begin > from) out.push(buf.subarray(from, begin));
    from = ends[k];
    if (start + k !== 0) out.push(COMMA);
    out.push({ live: id });
  }
  if (from < buf.length) out.push(buf.subarray(from));
  return out;
}
