/**
 * Which audio and subtitle streams of a raw file the transcode keeps, and the HandBrakeCLI arguments
 * that say so (languages.md). Pure: the streams come from HandBrake's JSON scan of the file.
 *
 * - Audio: every stream whose language is in the list, grouped by the list's order (the first one
 *   becomes the default track), then the title's original language when the lookup knew it. None
 *   matching: the file's first audio stream, and a note that says so.
 * - keep_surround: AC-3, E-AC-3, DTS, DTS-HD and TrueHD pass through untouched (the copy mask lets
 *   HandBrake fall back to AAC if the codec was misread); anything else becomes AAC, 5.1 where the
 *   source has more than two channels. Off: everything becomes AAC stereo (Dolby Pro Logic II).
 * - stereo_companion: beside each passed-through multichannel stream, a stereo AAC of the same audio.
 * - Subtitles: every stream whose language is in the list, as tracks, never burned in, none shown by
 *   default. burn_forced_subtitles: a forced stream in the default audio's language is burned in.
 */
import type { AudioStream, StreamOptions, SubtitleStream } from '../../shared/protocol.js';

/** Codecs that pass through untouched when keep_surround is on (HandBrake's copy-mask names). */
export const PASSTHROUGH_CODECS = ['ac3', 'eac3', 'dts', 'dtshd', 'truehd'] as const;
const FALLBACK_ENCODER = 'av_aac';

export interface StreamChoice {
  audio_languages: string[];
  subtitle_languages: string[];
  options: StreamOptions;
}

export interface OutputAudio {
  /** HandBrake track number of the source stream. */
  source: number;
  encoder: 'copy' | typeof FALLBACK_ENCODER;
  /** HandBrake mixdown; "none" for a copied stream. */
  mixdown: 'none' | 'dpl2' | '5point1';
  language: string;
}

export interface StreamPlan {
  audio: OutputAudio[];
  /** HandBrake track numbers of the subtitle streams kept as tracks, in output order. */
  subtitles: number[];
  /** Position (1-based) in `subtitles` of the one burned in, or null. */
  burned: number | null;
  /** What the job log should say about the choice. */
  notes: { level: 'info' | 'warn'; message: string }[];
}

const isPassthrough = (codec: string): boolean => (PASSTHROUGH_CODECS as readonly string[]).includes(codec);

function describeAudio(a: AudioStream): string {
  return `${a.language} ${a.codec}${a.channels ? ` ${a.channels} ch` : ''}`;
}

function audioByLanguage(audio: AudioStream[], languages: string[]): AudioStream[] {
  const picked: AudioStream[] = [];
  for (const lang of languages) for (const a of audio) if (a.language === lang && !picked.includes(a)) picked.push(a);
  return picked;
}

function encode(a: AudioStream, options: StreamOptions): OutputAudio[] {
  if (options.keep_surround && isPassthrough(a.codec)) {
    const copy: OutputAudio = { source: a.index, encoder: 'copy', mixdown: 'none', language: a.language };
    const companion: OutputAudio = { source: a.index, encoder: FALLBACK_ENCODER, mixdown: 'dpl2', language: a.language };
    return options.stereo_companion && (a.channels ?? 0) > 2 ? [copy, companion] : [copy];
  }
  const surround = options.keep_surround && (a.channels ?? 0) > 2;
  return [{ source: a.index, encoder: FALLBACK_ENCODER, mixdown: surround ? '5point1' : 'dpl2', language: a.language }];
}

/** The plan for one file: which streams, how encoded, and why. */
export function planStreams(audio: AudioStream[], subtitles: SubtitleStream[], choice: StreamChoice): StreamPlan {
  const notes: StreamPlan['notes'] = [];
  const original = choice.options.original_language;
  const languages = original && !choice.audio_languages.includes(original) ? [...choice.audio_languages, original] : choice.audio_languages;
  let kept = audioByLanguage(audio, languages);
  if (kept.length === 0 && audio.length > 0) {
    kept = [audio[0]];
    notes.push({ level: 'warn', message: `no audio stream in ${languages.join(', ') || 'the chosen languages'} (the file has ${audio.map(describeAudio).join(', ')}): keeping the first audio stream (${audio[0].language})` });
  }
  const out = kept.flatMap((a) => encode(a, choice.options));
  const subs = subtitles.filter((s) => choice.subtitle_languages.includes(s.language));
  const ordered = choice.subtitle_languages.flatMap((lang) => subs.filter((s) => s.language === lang));
  const subtitleTracks = ordered.map((s) => s.index);
  let burned: number | null = null;
  if (choice.options.burn_forced_subtitles && out.length > 0) {
    const forced = subtitles.find((s) => s.forced && s.language === out[0].language);
    if (forced) {
      if (!subtitleTracks.includes(forced.index)) subtitleTracks.push(forced.index);
      burned = subtitleTracks.indexOf(forced.index) + 1;
      notes.push({ level: 'info', message: `the forced ${forced.language} subtitles (stream ${forced.index}) are burned into the picture` });
    } else {
      notes.push({ level: 'info', message: `no forced subtitles in ${out[0].language}: nothing is burned in` });
    }
  }
  if (choice.subtitle_languages.length > 0 && ordered.length === 0) {
    notes.push({ level: 'info', message: `no subtitles in ${choice.subtitle_languages.join(', ')}${subtitles.length ? ` (the file has ${subtitles.map((s) => s.language).join(', ')})` : ''}` });
  }
  notes.unshift({
    level: 'info',
    message: `keeping audio ${out.map((o) => `${o.language} ${o.encoder === 'copy' ? 'passthrough' : `AAC ${o.mixdown === '5point1' ? '5.1' : 'stereo'}`}`).join(', ') || 'none'}; subtitles ${subtitleTracks.map((n) => subtitles.find((s) => s.index === n)?.language ?? n).join(', ') || 'none'}`,
  });
  return { audio: out, subtitles: subtitleTracks, burned, notes };
}

/** HandBrakeCLI arguments for a plan: explicit tracks, encoders and mixdowns, and what is burned. */
export function handbrakeStreamArgs(plan: StreamPlan): string[] {
  const args: string[] = [];
  if (plan.audio.length === 0) args.push('-a', 'none');
  else {
    args.push(
      '-a', plan.audio.map((a) => a.source).join(','),
      '-E', plan.audio.map((a) => a.encoder).join(','),
      '-6', plan.audio.map((a) => a.mixdown).join(','),
      '--audio-copy-mask', PASSTHROUGH_CODECS.join(','),
      '--audio-fallback', FALLBACK_ENCODER,
    );
  }
  args.push('-s', plan.subtitles.length ? plan.subtitles.join(',') : 'none');
  args.push(`--subtitle-burned=${plan.burned ?? 'none'}`, '--subtitle-default=none');
  return args;
}
