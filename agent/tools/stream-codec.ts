/**
 * One name per codec for the audio and subtitle streams the tools report: MakeMKV's Matroska codec
 * ids (A_AC3, S_HDMV/PGS), HandBrake's scan (CodecName "ac3", SourceName "VOBSUB"), lsdvd's formats
 * ("ac3", "lpcm", "mpeg2"). The names are what the API and the transcode's copy rule use.
 */

const AUDIO: [RegExp, string][] = [
  [/^(a_)?e-?ac-?3$|^a_eac3$/i, 'eac3'],
  [/^(a_)?ac-?3$/i, 'ac3'],
  [/^(a_)?truehd$|^mlp$/i, 'truehd'],
  [/^dts-?hd|^dtshd/i, 'dtshd'],
  [/^(a_)?dts$|^dca$/i, 'dts'],
  [/^a_pcm|^(l)?pcm/i, 'lpcm'],
  [/^(a_)?aac/i, 'aac'],
  [/^a_mpeg\/l2$|^mp2$|^mpeg(1|2)?$/i, 'mp2'],
  [/^a_mpeg\/l3$|^mp3$/i, 'mp3'],
  [/^(a_)?flac$/i, 'flac'],
  [/^(a_)?opus$/i, 'opus'],
  [/^(a_)?vorbis$/i, 'vorbis'],
];

const SUBTITLE: [RegExp, string][] = [
  [/^s_vobsub$|^vobsub$|^dvd_subtitle$/i, 'vobsub'],
  [/^s_hdmv\/pgs$|^pgs$|^hdmv_pgs_subtitle$/i, 'pgs'],
  [/^s_text\/utf8$|^srt$|^subrip$/i, 'srt'],
  [/^s_text\/(ssa|ass)$|^ssa$|^ass$/i, 'ssa'],
  [/^cc(608|708)?$|^eia_608$/i, 'cc'],
];

function lookup(table: [RegExp, string][], names: (string | null | undefined)[]): string {
  for (const name of names) {
    const n = (name ?? '').trim();
    if (!n) continue;
    for (const [re, codec] of table) if (re.test(n)) return codec;
  }
  return (names.find((n) => n && n.trim()) ?? 'unknown').trim().toLowerCase();
}

/** The audio codec name of the first given name that is known (a more specific name first, e.g. "DTS-HD MA" before "A_DTS"). */
export function audioCodec(...names: (string | null | undefined)[]): string {
  return lookup(AUDIO, names);
}

export function subtitleCodec(...names: (string | null | undefined)[]): string {
  return lookup(SUBTITLE, names);
}

/**
 * The track roles of a stream that hold, for its AudioStream or SubtitleStream: a role is listed only
 * when true, so a stream without one looks as before the roles existed.
 */
export function trueRoles<K extends string>(roles: Record<K, boolean>): Partial<Record<K, true>> {
  const out: Partial<Record<K, true>> = {};
  for (const key of Object.keys(roles) as K[]) if (roles[key]) out[key] = true;
  return out;
}
