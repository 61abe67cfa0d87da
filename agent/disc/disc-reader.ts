/**
 * Random-access reads from a disc image file or an optical drive's block device. A node:fs/promises
 * FileHandle fits this interface as it is.
 */
export interface DiscReader {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
}

/** Largest single read any disc parser asks for; a malformed length never allocates more than this. */
export const MAX_READ_BYTES = 8 * 1024 * 1024;

/**
 * Exactly `length` bytes from `position`, or null when the medium ends before that. I/O errors (an
 * unreadable sector) are thrown as they come.
 */
export async function readExact(reader: DiscReader, position: number, length: number): Promise<Buffer | null> {
  if (!Number.isSafeInteger(position) || position < 0 || !Number.isSafeInteger(length) || length < 0 || length > MAX_READ_BYTES) return null;
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await reader.read(buffer, done, length - done, position + done);
    if (bytesRead <= 0) return null;
    done += bytesRead;
  }
  return buffer;
}
