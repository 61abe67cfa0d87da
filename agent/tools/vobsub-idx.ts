/**
 * Pure helpers for the header of a VobSub index (.idx), which is also the CodecPrivate of a Matroska
 * S_VOBSUB track: the canvas the subpictures are placed on ("size: 720x576") and the 16 RGB colours
 * their 2-bit pixels index ("palette: rrggbb, …"). A DVD keeps those colours in the program chain's
 * colour lookup table (the IFO, as 0 Y Cr Cb); the VOBs carry none, so a remux of the VOBs alone
 * (ffmpeg 5.1 has no dvdvideo demuxer) leaves a track that players draw in made-up colours, and
 * HandBrake then writes `008700` sixteen times on a 720x480 canvas (issue 37).
 */

/** ffmpeg's 10-bit fixed point (libavutil/colorspace.h): FIX(x) rounds x·1024 to an integer. */
const SCALEBITS = 10;
const ONE_HALF = 1 << (SCALEBITS - 1);
const FIX = (x: number): number => Math.trunc(x * (1 << SCALEBITS) + 0.5);

function clip(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

/**
 * One IFO palette entry (0x00YYCrCb) as the RGB colour (0xRRGGBB) of an .idx palette, the way
 * ffmpeg's dvdsub decoder converts an IFO's palette (`-ifo_palette`: YUV_TO_RGB1_CCIR and
 * YUV_TO_RGB2_CCIR, BT.601 from video range, 16-235 luma and 16-240 chroma, to full-range RGB).
 * HandBrake and ffmpeg's dvdvideo demuxer use the same BT.601 matrix and differ by at most one step
 * of rounding (white eb8080 becomes ffffff here, fefefe there).
 */
export function ycrcbToRgb(entry: number): number {
  const y = (entry >> 16) & 0xff;
  const cr = ((entry >> 8) & 0xff) - 128;
  const cb = (entry & 0xff) - 128;
  const rAdd = FIX((1.402 * 255) / 224) * cr + ONE_HALF;
  const gAdd = -FIX((0.34414 * 255) / 224) * cb - FIX((0.71414 * 255) / 224) * cr + ONE_HALF;
  const bAdd = FIX((1.772 * 255) / 224) * cb + ONE_HALF;
  const luma = (y - 16) * FIX(255 / 219);
  const r = clip((luma + rAdd) >> SCALEBITS);
  const g = clip((luma + gAdd) >> SCALEBITS);
  const b = clip((luma + bAdd) >> SCALEBITS);
  return (r << 16) | (g << 8) | b;
}

const hex6 = (rgb: number): string => rgb.toString(16).padStart(6, '0');

/**
 * The canvas DVD subpictures are placed on: the full frame of the video standard, 720x576 (PAL) or
 * 720x480 (NTSC), whatever the video's own resolution (a 352x288 title still places its subtitles
 * on 720x576). Without a standard the video height decides (above 480 lines, or the 288 of half
 * PAL, is PAL).
 */
export function subpictureCanvas(format: 'PAL' | 'NTSC' | null, videoHeight: number | null): { width: number; height: number } {
  const pal = format ? format === 'PAL' : videoHeight !== null && (videoHeight > 480 || videoHeight === 288);
  return { width: 720, height: pal ? 576 : 480 };
}

/** The .idx header lines this track gets: its canvas and the disc's 16 colours in RGB. */
export function vobsubHeaderLines(canvas: { width: number; height: number }, ifoPalette: number[]): string[] {
  if (ifoPalette.length !== 16) throw new Error(`a VobSub palette has 16 colours, not ${ifoPalette.length}`);
  return [`size: ${canvas.width}x${canvas.height}`, `palette: ${ifoPalette.map((c) => hex6(ycrcbToRgb(c))).join(', ')}`];
}

const FIRST_LINE = /^# VobSub index file, v\d+/;
/** Header lines the new ones replace (case as mkvextract and VobSub write them). */
const REPLACED = /^(size|palette)\s*:/i;

/**
 * An .idx text (as mkvextract writes it) with `lines` as its size and palette: they go right after
 * the "# VobSub index file" line, any size or palette line it had is dropped, the rest (langidx,
 * the id and timestamp lines) is kept as it was.
 */
export function withVobsubHeader(idx: string, lines: string[]): string {
  const all = idx.replace(/\r\n/g, '\n').split('\n');
  if (!FIRST_LINE.test(all[0] ?? '')) throw new Error('not a VobSub index file (its first line is not "# VobSub index file, v7 …")');
  return [all[0], ...lines, ...all.slice(1).filter((l) => !REPLACED.test(l))].join('\n');
}

/** The canvas and palette an .idx header (or a track's CodecPrivate text) declares; null where it has none. */
export function readVobsubHeader(text: string): { size: string | null; palette: string[] | null } {
  const size = /^size:\s*(\d+x\d+)\s*$/im.exec(text)?.[1] ?? null;
  const line = /^palette:\s*(.+)$/im.exec(text)?.[1];
  const palette = line ? line.split(',').map((c) => c.trim().toLowerCase()) : null;
  return { size, palette };
}
