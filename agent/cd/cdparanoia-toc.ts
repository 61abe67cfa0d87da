/**
 * `cdparanoia -Q -d DEV`: the audio tracks of a CD in a drive (printed on stderr). Each row gives the
 * length and begin (LBA, without the lead-in) in frames (audio-cd.md §2).
 */
export interface ParanoiaTrack {
  number: number;
  start: number;
  frames: number;
}

const ROW = /^\s*(\d+)\.\s+(\d+)\s+\[\d+:\d+\.\d+\]\s+(\d+)\s+\[/;

export function parseParanoiaToc(text: string): ParanoiaTrack[] {
  const tracks: ParanoiaTrack[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = ROW.exec(line);
    if (m) tracks.push({ number: Number(m[1]), frames: Number(m[2]), start: Number(m[3]) });
  }
  return tracks;
}

/** A plain reason for a failed cdparanoia query (exit 1 "Unable to open cdrom drive" when no CD is readable). */
export function paranoiaFailure(stderr: string, device: string): string {
  if (/Unable to open cdrom drive/i.test(stderr)) return `the drive ${device} cannot be opened: is an audio CD inside?`;
  if (/no audio tracks|No medium|not an audio/i.test(stderr)) return `the disc in ${device} has no audio tracks`;
  const last = stderr.trim().split('\n').pop()?.trim();
  return `cdparanoia could not read the CD in ${device}${last ? `: ${last}` : ''}`;
}
