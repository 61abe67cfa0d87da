import type { Job } from '../../shared/api-types.js';
import { isLive, type JobStatus } from './job-status.js';

/** What the body needs of a job row. */
export interface ListedRow {
  id: string;
  status: JobStatus;
  created_at: string;
}

/** Where the rows come from: all of them in the list's order (newest first, ties by id), or one. */
export interface ListSource<R extends ListedRow> {
  all(): R[];
  get(id: string): R | undefined;
  view(row: R, now: number): Job;
  /** A live row's JSON at any moment, equal to JSON.stringify(view(row, now)), rendered once for all. */
  live(row: R): (now: number) => string;
}

/** A live row (running, transcoding) is rendered per request: its ETA moves with the clock. */
type Segment = Buffer | { live: string };

/**
 * Rows per chunk of the body: about 80 KB for 100 rows. A written finished row makes its chunk be
 * built anew by the next request (its rows' JSON written into one new buffer, nothing rendered), so a
 * sweep writing rows all over the list costs each request a copy of the few chunks written since the
 * last one, and the body still goes out as about one piece per 100 rows. (Sending written rows as
 * pieces of their own between slices of the old buffer made a sweep's request thousands of pieces:
 * a megabyte of short-lived objects each, and the collections that came with them held the requests.)
 */
const CHUNK_ROWS = 100;
const COMMA = Buffer.from(',');

/** CHUNK_ROWS rows of the body as one buffer, with the live rows left out and sent in their places. */
interface Chunk {
  /** The pieces (separator and JSON) of the rows finished when it was built; a live row's is empty. */
  buf: Buffer;
  /** Where each row's piece ends in buf. */
  ends: number[];
  /** The live rows, sent in place of their (empty) piece: index in the chunk → job id. */
  live: Map<number, string>;
  /** The chunk's segments, kept until one of its rows is written. */
  segments: Segment[] | null;
}

/**
 * The GET /jobs body, kept in memory and changed with every write (JobsStore.track), so a request
 * reads no rows: the order of the ids, every finished row's JSON, and the rows in chunks of ready
 * buffers. Only the live rows are rendered anew per request.
 */
export class JobListBody<R extends ListedRow> {
  /** Finished rows' JSON. */
  private readonly jsonCache = new Map<string, string>();
  /** Live rows' renderers, made from the row of their last write (or read) on their first use. */
  private readonly liveRender = new Map<string, (now: number) => string>();
  private order: { id: string; created_at: string }[] | null = null;
  private liveIds = new Set<string>();
  private chunks: (Chunk | undefined)[] = [];
  private segments: Segment[] | null = null;

  constructor(private readonly source: ListSource<R>, private readonly clock: () => number) {}

  /** The body in pieces ("[", the rows with their commas, "]"), to be written one after the other. */
  parts(): Buffer[] {
    if (!this.segments) this.segments = this.buildSegments();
    const now = this.clock();
    return this.segments.map((seg) => (Buffer.isBuffer(seg) ? seg : Buffer.from(this.liveJson(seg.live, now))));
  }

  /** Keeps the body in step with a written row (created, changed, or removed when row is undefined). */
  track(id: string, row: R | undefined): void {
    this.jsonCache.delete(id);
    this.liveRender.delete(id);
    // A live row keeps the row it was written with, so a request renders it without reading it again.
    if (row && isLive(row.status)) this.liveRender.set(id, this.lazyLive(row));
    if (!this.order) return;
    const wasLive = this.liveIds.has(id);
    if (row && isLive(row.status)) this.liveIds.add(id);
    else this.liveIds.delete(id);
    // A finished row is rendered here, by the writer (a sweep slice, an event), from the row it wrote:
    // the next request only puts buffers together instead of reading and rendering every written row.
    if (row && !isLive(row.status)) this.jsonCache.set(id, JSON.stringify(this.source.view(row, this.clock())));
    // A live row's own progress changes nothing around it: it is rendered per request anyway.
    if (row && wasLive && isLive(row.status)) return;
    this.segments = null;
    const at = row ? this.positionOf(id, row.created_at) : this.order.findIndex((e) => e.id === id);
    if (!row || at < 0) {
      // Removed or new: the rows after it move, every chunk is built anew.
      if (at >= 0) this.order.splice(at, 1);
      if (row) this.insert(id, row.created_at);
      this.chunks = [];
      return;
    }
    // The chunk is built anew by the next request, from the rows' JSON kept in jsonCache.
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
   * write brought it) and rendered once until it is written again, and each request puts in the ETA
   * (ListSource.live). A thousand queued transcodes and the eighty running ones are not read and
   * rendered again for every request.
   */
  private liveJson(id: string, now: number): string {
    let render = this.liveRender.get(id);
    if (!render) {
      const row = this.source.get(id);
      if (!row) return 'null';
      render = this.source.live(row);
      this.liveRender.set(id, render);
    }
    return render(now);
  }

  /** Renders the row on its first use: a row written several times between requests is rendered once. */
  private lazyLive(row: R): (now: number) => string {
    let pending: R | null = row;
    let render: ((now: number) => string) | null = null;
    return (now) => {
      if (!render) {
        render = this.source.live(pending as R);
        pending = null;
      }
      return render(now);
    };
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
      chunk.segments ??= this.chunkSegments(chunk, start);
      out.push(...chunk.segments);
    }
    out.push(Buffer.from(']'));
    return out;
  }

  /** Writes the chunk's finished rows' JSON into one new buffer: the strings are kept, no row is rendered. */
  private buildChunk(order: { id: string }[], from: number, to: number): Chunk {
    const now = this.clock();
    const pieces: string[] = [];
    const live = new Map<number, string>();
    let bytes = 0;
    for (let i = from; i < to; i++) {
      const { id } = order[i];
      if (this.liveIds.has(id)) {
        live.set(i - from, id);
        pieces.push('');
      } else {
        const json = this.finishedJson(id, now);
        pieces.push(json);
        bytes += (i === 0 ? 0 : 1) + Buffer.byteLength(json);
      }
    }
    const buf = Buffer.allocUnsafe(bytes);
    const ends: number[] = [];
    let at = 0;
    for (let k = 0; k < pieces.length; k++) {
      if (!live.has(k)) {
        if (from + k !== 0) buf[at++] = 0x2c; // ','
        at += buf.write(pieces[k], at);
      }
      ends.push(at);
    }
    return { buf, ends, live, segments: null };
  }

  /** The chunk's buffer with its live rows sent in place of their pieces. */
  private chunkSegments(chunk: Chunk, start: number): Segment[] {
    if (chunk.live.size === 0) return [chunk.buf];
    const out: Segment[] = [];
    let from = 0;
    for (const [k, id] of chunk.live) {
      const begin = k === 0 ? 0 : chunk.ends[k - 1];
      if (begin > from) out.push(chunk.buf.subarray(from, begin));
      from = chunk.ends[k];
      if (start + k !== 0) out.push(COMMA);
      out.push({ live: id });
    }
    if (from < chunk.buf.length) out.push(chunk.buf.subarray(from));
    return out;
  }

  private loadOrder(): { id: string; created_at: string }[] {
    if (!this.order) {
      const now = this.clock();
      const rows = this.source.all();
      this.order = rows.map((r) => ({ id: r.id, created_at: r.created_at }));
      this.liveIds = new Set(rows.filter((r) => isLive(r.status)).map((r) => r.id));
      for (const r of rows) if (!isLive(r.status)) this.jsonCache.set(r.id, JSON.stringify(this.source.view(r, now)));
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
