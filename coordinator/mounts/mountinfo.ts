/**
 * Parser for /proc/self/mountinfo (proc(5)): one line per mount, optional fields ended by a lone "-",
 * then fs type, source and super options. Paths carry octal escapes (\040 space, \011 tab, \012 newline,
 * \134 backslash). A mount point can hold several stacked layers; the last line is the visible one.
 */

export interface MountLayer {
  id: number;
  parentId: number;
  mountPoint: string;
  /** Per-mount options: "rw,relatime" or "ro,...". */
  options: string;
  fsType: string;
  source: string;
  superOptions: string;
}

function unescapeOctal(s: string): string {
  return s.replace(/\\([0-7]{3})/gu, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

export function parseMountinfo(text: string): MountLayer[] {
  const layers: MountLayer[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const fields = line.split(' ');
    const sep = fields.indexOf('-', 6);
    if (sep < 0 || fields.length < sep + 3) continue;
    layers.push({
      id: Number(fields[0]),
      parentId: Number(fields[1]),
      mountPoint: unescapeOctal(fields[4]),
      options: fields[5],
      fsType: fields[sep + 1],
      source: unescapeOctal(fields[sep + 2]),
      superOptions: fields[sep + 3] ?? '',
    });
  }
  return layers;
}

/** The layers mounted exactly at `mountPoint`, bottom first (the last one is visible). */
export function layersAt(layers: readonly MountLayer[], mountPoint: string): MountLayer[] {
  return layers.filter((l) => l.mountPoint === mountPoint);
}

/** True when the visible layer is mounted read-only. */
export function isReadOnly(layer: MountLayer): boolean {
  return layer.options.split(',').includes('ro');
}
