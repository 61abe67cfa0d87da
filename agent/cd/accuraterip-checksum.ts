/**
 * AccurateRip's two checksums of one track's audio (16-bit stereo PCM, little endian), fed in chunks as
 * a decoder writes them.
 *
 * Each stereo sample is read as one unsigned 32-bit word (left in the low half) and multiplied by its
 * position in the track, counted from 1. v1 is the sum of the products' low 32 bits; v2 adds their high
 * 32 bits too (both modulo 2^32). The disc's first track leaves out its first five sectors but one
 * sample, its last track its last five sectors: drives cannot all read there. Checked against whipper's
 * `accuraterip-checksum` (Debian) in test/unit/agent/cd/accuraterip-checksum.test.ts.
 */

/** Samples of one CD sector (2352 bytes of 16-bit stereo). */
export const SAMPLES_PER_SECTOR = 588;
/** Sectors at the start of the first and the end of the last track that the checksums leave out. */
export const SKIPPED_SECTORS = 5;

const TWO_32 = 2 ** 32;
const TWO_16 = 2 ** 16;

export interface TrackPlace {
  /** The track's place among the rip's tracks, from 1 (a mixed-mode CD's audio track 2 is place 1). */
  index: number;
  /** How many audio tracks the disc has. */
  count: number;
  /** The track's length in stereo samples. */
  samples: number;
}

export class AccurateRipChecksum {
  private lo = 0;
  private hi = 0;
  /** Position of the next sample, from 1. */
  private position = 1;
  private readonly from: number;
  private readonly to: number;
  /** Bytes of a sample split between two chunks. */
  private carry: Buffer = Buffer.alloc(0);

  constructor(place: TrackPlace) {
    const skip = SAMPLES_PER_SECTOR * SKIPPED_SECTORS;
    this.from = place.index === 1 ? skip : 0;
    this.to = place.index === place.count ? place.samples - skip : place.samples;
  }

  update(chunk: Buffer): void {
    let data = chunk;
    if (this.carry.length > 0) {
      data = Buffer.concat([this.carry, chunk]);
      this.carry = Buffer.alloc(0);
    }
    const whole = data.length - (data.length % 4);
    if (whole < data.length) this.carry = Buffer.from(data.subarray(whole));
    let lo = this.lo;
    let hi = this.hi;
    let m = this.position;
    const { from, to } = this;
    for (let off = 0; off < whole; off += 4, m++) {
      if (m < from || m > to) continue;
      const sample = data.readUInt32LE(off);
      // The 64-bit product sample*m without losing bits: split the sample in 16-bit halves.
      const low = sample % TWO_16;
      const high = (sample - low) / TWO_16;
      const a = low * m;
      const b = high * m;
      const bLow = b % TWO_16;
      const t = bLow * TWO_16 + a;
      const productLow = t % TWO_32;
      const productHigh = (b - bLow) / TWO_16 + Math.floor(t / TWO_32);
      lo = (lo + productLow) % TWO_32;
      hi = (hi + productHigh) % TWO_32;
    }
    this.lo = lo;
    this.hi = hi;
    this.position = m;
  }

  /** The samples fed so far (a track whose decode stopped short has fewer than its length). */
  get samplesRead(): number {
    return this.position - 1;
  }

  digest(): { v1: string; v2: string } {
    const hex = (n: number): string => n.toString(16).padStart(8, '0');
    return { v1: hex(this.lo), v2: hex((this.lo + this.hi) % TWO_32) };
  }
}
