/**
 * A vendor/model/revision string as the kernel or lsblk gives it (SCSI INQUIRY fields are space
 * padded, and a model such as "BD-RE  WH16NS60" holds a double space): trimmed, inner runs of
 * whitespace collapsed to one space; empty or missing gives null.
 */
export function cleanDriveText(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = value.replace(/\s+/g, ' ').trim();
  return text === '' ? null : text;
}
