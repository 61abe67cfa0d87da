import { Duplex } from 'node:stream';

/**
 * One end of an in-memory connection. What it is given to write arrives at its peer as if from a
 * socket: in the order written, on a later tick (never inside the writer's own call, so neither side
 * sees an answer before its write returned), the writes of one tick as one chunk.
 */
class PairEnd extends Duplex {
  peer: PairEnd | null = null;
  /** For log lines that name a connection's address, as a socket's remoteAddress would. */
  readonly remoteAddress = 'in-process';
  private pending: Buffer[] = [];
  private ending = false;
  private scheduled = false;

  override _read(): void {
    // Data is pushed by the peer's writes.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.pending.push(chunk);
    this.schedule();
    callback();
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    for (const { chunk } of chunks) this.pending.push(chunk);
    this.schedule();
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.ending = true;
    this.schedule();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const peer = this.peer;
    // The peer sees the connection drop on a later tick, after what was written before.
    if (peer && !peer.destroyed) process.nextTick(() => peer.destroy());
    callback(error);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const peer = this.peer;
    const pending = this.pending;
    this.pending = [];
    if (!peer || peer.destroyed) return;
    if (pending.length > 0) peer.push(pending.length === 1 ? pending[0] : Buffer.concat(pending));
    if (this.ending) peer.push(null);
  }
}

/**
 * Two connected in-memory streams (Node 20 has no stream.duplexPair): what one writes, the other reads.
 * Ending one ends the other's reading; destroying one destroys the other.
 */
export function duplexPair(): [Duplex, Duplex] {
  const a = new PairEnd();
  const b = new PairEnd();
  a.peer = b;
  b.peer = a;
  return [a, b];
}
