import type { Duplex } from 'node:stream';

/** The largest CONNECT (and anything else sent before the broker has checked the credentials). */
export const CONNECT_LIMIT_BYTES = 64 * 1024;

export interface PacketLimitExceeded {
  /** The remaining length the packet's fixed header declares (-1: a malformed length of more than 4 bytes). */
  declared: number;
  limit: number;
  /** MQTT control packet type (1 CONNECT, 3 PUBLISH, …). */
  type: number;
  authenticated: boolean;
}

/**
 * Watches the bytes aedes reads from a client connection and cuts the connection as soon as a
 * packet's fixed header declares more than the client may send: before authentication
 * CONNECT_LIMIT_BYTES, after it the limit of the client's credential. aedes itself has no packet
 * size limit and would buffer a declared 250 MB packet until it is complete.
 *
 * The fixed header (MQTT 3.1.1 section 2.2) is one byte of type and flags and the remaining length
 * as a variable byte integer: 7 bits a byte, least significant first, the high bit saying another
 * byte follows, at most 4 bytes (section 2.2.3). The guard keeps only that state: the bytes of a
 * packet body are counted, never copied.
 */
export function guardPacketSizes(conn: Duplex, limitAfterAuth: () => number | null, onExceeded: (e: PacketLimitExceeded) => void): void {
  let skip = 0; // body bytes of the current packet still to come
  let inHeader = false; // the type byte was read, the length is being read
  let type = 0;
  let length = 0;
  let multiplier = 1;
  let lengthBytes = 0;
  let cut = false;

  const feed = (buf: Buffer): boolean => {
    let i = 0;
    while (i < buf.length) {
      if (skip > 0) {
        const n = Math.min(skip, buf.length - i);
        skip -= n;
        i += n;
        continue;
      }
      if (!inHeader) {
        type = buf[i] >> 4;
        inHeader = true;
        length = 0;
        multiplier = 1;
        lengthBytes = 0;
        i++;
        continue;
      }
      const byte = buf[i++];
      length += (byte & 0x7f) * multiplier;
      multiplier *= 128;
      lengthBytes++;
      const granted = limitAfterAuth();
      const limit = granted ?? CONNECT_LIMIT_BYTES;
      if (byte & 0x80) {
        if (lengthBytes >= 4) {
          onExceeded({ declared: -1, limit, type, authenticated: granted !== null });
          return false;
        }
        continue;
      }
      inHeader = false;
      if (length > limit) {
        onExceeded({ declared: length, limit, type, authenticated: granted !== null });
        return false;
      }
      skip = length;
    }
    return true;
  };

  const read = conn.read.bind(conn);
  conn.read = (size?: number): unknown => {
    if (cut) return null;
    const chunk = read(size) as unknown;
    if (Buffer.isBuffer(chunk) && !feed(chunk)) {
      cut = true;
      conn.destroy();
      return null;
    }
    return chunk;
  };
}
