/**
 * Which audio and subtitle streams of a raw file the transcode keeps, the HandBrakeCLI arguments
 * that say so, and the track flags the output gets (languages.md). Pure: the streams come from the
 * transcoder's scan of the file, with the roles the disc states (forced, commentary, audio
 * description, for the hard of hearing).
 *
 * - Audio: every main stream (no commentary, no audio description) whose language is in the list,
 *   grouped by the list's order (the first one becomes the default track), then the title's original
 *   language when the lookup knew it. None matching: the file's first main audio stream, and a note
 *   that says so. After them, with keep_audio_description the audio description streams of those
 *   languages, with keep_commentary their commentary streams; without, they are left out (noted).
 * - keep_surround: AC-3, E-AC-3, DTS, DTS-HD and TrueHD pass through untouched (the copy mask lets
 *   HandBrake fall back to AAC if the codec was misread); anything else becomes AAC, 5.1 where the
 *   source has more than two channels. Off: everything becomes AAC stereo (Dolby Pro Logic II).
 * - stereo_companion: beside each passed-through multichannel stream, a stereo AAC of the same audio.
 * - Subtitles: every stream whose language is in the list, as tracks, never burned in (commentary
 *   subtitles only with keep_commentary). The forced subtitles of the default audio's language are
 *   always kept, flagged forced and shown by default; burn_forced_subtitles burns them in instead.
 * - Track flags: forced, hearing impaired, visual impaired, commentary as the source says, original
 *   on the tracks in the title's original language; HandBrakeCLI writes none of them (mkvpropedit
 *   sets them after the encode), the default flags it writes itself.
 */
import { UNDETERMINED } from '../../shared/languages.js';
import type { AudioStream, StreamOptions, SubtitleStream } from '../../shared/protocol.js';
import type { TrackFlag, TrackFlagEdit } from '../tools/mkvpropedit-runner.js';

/** Codecs that pass through untouched when keep_surround is on (HandBrake's copy-mask names). */
export const PASSTHROUGH_CODECS = ['ac3', 'eac3', 'dts', 'dtshd', 'truehd'] as const;
const FALLBACK_ENCODER = 'av_aac';

/**
 * An unflagged subtitle track counts as the forced subtitles of its language when it has fewer than
 * this share of the events of the fullest track of that language (languages.md, "Track roles"): a
 * dubbed film's forced track translates a few signs and foreign-language lines, a full track every line.
 */
export const FORCED_EVENT_SHARE = 0.25;
/** …and at least this many events: a track with fewer is empty or a stray, not forced subtitles. */
export const FORCED_MIN_EVENTS = 3;

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
  /** Position (1-based) in `subtitles` of the track shown by default (the forced subtitles of the default audio's language), or null. */
  default_subtitle: number | null;
  /** The flags of the output's tracks that HandBrakeCLI cannot write (mkvpropedit sets them); tracks without one are left out. */
  flags: TrackFlagEdit[];
  /** What the job log should say about the choice. */
  notes: { level: 'info' | 'warn'; message: string }[];
}

const isPassthrough = (codec: string): boolean => (PASSTHROUGH_CODECS as readonly string[]).includes(codec);
const isMainAudio = (a: AudioStream): boolean => !a.commentary && !a.visual_impaired;
const isDescription = (a: AudioStream): boolean => Boolean(a.visual_impaired) && !a.commentary;
const isPlainSubtitle = (s: SubtitleStream): boolean => !s.forced && !s.hearing_impaired && !s.commentary;

function audioRoles(a: AudioStream): string {
  return a.commentary ? ' commentary' : a.visual_impaired ? ' audio description' : '';
}

function describeAudio(a: AudioStream): string {
  return `${a.language} ${a.codec}${a.channels ? ` ${a.channels} ch` : ''}${audioRoles(a)}`;
}

function describeSubtitle(s: SubtitleStream): string {
  const roles = [s.forced && 'forced', s.hearing_impaired && 'hearing impaired', s.commentary && 'commentary'].filter(Boolean);
  return `${s.language}${roles.length ? ` (${roles.join(', ')})` : ''}`;
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

/** The flags of a kept audio stream's output track(s) HandBrakeCLI does not write. */
function audioFlags(a: AudioStream, original: string | null): TrackFlag[] {
  const flags: TrackFlag[] = [];
  if (a.visual_impaired) flags.push('visual-impaired');
  if (a.commentary) flags.push('commentary');
  if (original && a.language === original) flags.push('original');
  return flags;
}

function subtitleFlags(s: SubtitleStream, original: string | null): TrackFlag[] {
  const flags: TrackFlag[] = [];
  if (s.forced) flags.push('forced');
  if (s.hearing_impaired) flags.push('hearing-impaired');
  if (s.commentary) flags.push('commentary');
  if (original && s.language === original) flags.push('original');
  return flags;
}

/** A note on the streams of a role the household policy leaves out (none when there are none). */
function leftOut(streams: { index: number; language: string }[], what: string, setting: string): StreamPlan['notes'] {
  if (streams.length === 0) return [];
  return [{ level: 'info', message: `leaving out the ${what} (${streams.map((s) => `stream ${s.index} ${s.language}`).join(', ')}): ${setting} is off` }];
}

/** The plan for one file: which streams, how encoded, which flags, and why. */
export function planStreams(audio: AudioStream[], subtitles: SubtitleStream[], choice: StreamChoice): StreamPlan {
  const notes: StreamPlan['notes'] = [];
  const { options } = choice;
  const original = options.original_language;
  const languages = original && !choice.audio_languages.includes(original) ? [...choice.audio_languages, original] : choice.audio_languages;
  const main = audio.filter(isMainAudio);
  let kept = audioByLanguage(main, languages);
  if (kept.length === 0 && audio.length > 0) {
    const first = main[0] ?? audio[0];
    kept = [first];
    notes.push({ level: 'warn', message: `no audio stream in ${languages.join(', ') || 'the chosen languages'} (the file has ${audio.map(describeAudio).join(', ')}): keeping the first audio stream (${first.language})` });
  }
  // An untagged main audio stream ("und": the disc does not say) may be the chosen language or the
  // only one a player has: it is kept after the chosen ones, never dropped as another language.
  const untagged = main.filter((a) => a.language === UNDETERMINED && !kept.includes(a));
  if (untagged.length > 0) {
    kept = [...kept, ...untagged];
    notes.push({ level: 'info', message: `keeping the untagged audio stream${untagged.length > 1 ? 's' : ''} ${untagged.map((a) => `${a.index} (${describeAudio(a)})`).join(', ')}: the disc does not say ${untagged.length > 1 ? 'their' : 'its'} language` });
  }
  // A file of role tracks alone keeps its first one above; it is not counted again here.
  const descriptions = audioByLanguage(audio.filter((a) => isDescription(a) && !kept.includes(a)), languages);
  const commentaries = audioByLanguage(audio.filter((a) => a.commentary && !kept.includes(a)), languages);
  if (options.keep_audio_description) kept = [...kept, ...descriptions];
  else notes.push(...leftOut(descriptions, 'audio description', 'keepAudioDescription'));
  if (options.keep_commentary) kept = [...kept, ...commentaries];
  else notes.push(...leftOut(commentaries, 'commentary', 'keepCommentary'));

  const out = kept.flatMap((a) => encode(a, options).map((o) => ({ o, a })));
  const flags: TrackFlagEdit[] = [];
  out.forEach(({ a }, i) => {
    const f = audioFlags(a, original);
    if (f.length) flags.push({ track: `a${i + 1}`, flags: f });
  });

  const subs = subtitles.filter((s) => choice.subtitle_languages.includes(s.language));
  const commentarySubs = subs.filter((s) => s.commentary);
  if (!options.keep_commentary) notes.push(...leftOut(commentarySubs, 'commentary subtitles', 'keepCommentary'));
  const listed = choice.subtitle_languages.flatMap((lang) => subs.filter((s) => s.language === lang && (options.keep_commentary || !s.commentary)));
  const subtitleTracks = listed.map((s) => s.index);
  let burned: number | null = null;
  let defaultSubtitle: number | null = null;
  const defaultLanguage = out[0]?.o.language;
  const forced = defaultLanguage ? subtitles.find((s) => s.forced && !s.commentary && s.language === defaultLanguage) : undefined;
  if (forced) {
    if (!subtitleTracks.includes(forced.index)) subtitleTracks.push(forced.index);
    const position = subtitleTracks.indexOf(forced.index) + 1;
    if (options.burn_forced_subtitles) {
      burned = position;
      notes.push({ level: 'info', message: `the forced ${forced.language} subtitles (stream ${forced.index}) are burned into the picture` });
    } else {
      defaultSubtitle = position;
      notes.push({ level: 'info', message: `the forced ${forced.language} subtitles (stream ${forced.index}) are kept as a track, flagged forced and shown by default` });
    }
  } else if (options.burn_forced_subtitles && defaultLanguage) {
    notes.push({ level: 'info', message: `no forced subtitles in ${defaultLanguage}: nothing is burned in` });
  }
  // The output's subtitle tracks: the kept ones without the burned one.
  const byIndex = new Map(subtitles.map((s) => [s.index, s]));
  subtitleTracks
    .filter((_, i) => i + 1 !== burned)
    .forEach((n, i) => {
      const s = byIndex.get(n);
      const f = s ? subtitleFlags(s, original) : [];
      if (f.length) flags.push({ track: `s${i + 1}`, flags: f });
    });
  if (choice.subtitle_languages.length > 0 && listed.length === 0) {
    notes.push({ level: 'info', message: `no subtitles in ${choice.subtitle_languages.join(', ')}${subtitles.length ? ` (the file has ${subtitles.map((s) => s.language).join(', ')})` : ''}` });
  }
  const audioText = out.map(({ o, a }) => `${o.language} ${o.encoder === 'copy' ? 'passthrough' : `AAC ${o.mixdown === '5point1' ? '5.1' : 'stereo'}`}${audioRoles(a)}`).join(', ');
  const subtitleText = subtitleTracks.map((n) => (byIndex.has(n) ? describeSubtitle(byIndex.get(n) as SubtitleStream) : String(n))).join(', ');
  notes.unshift({ level: 'info', message: `keeping audio ${audioText || 'none'}; subtitles ${subtitleText || 'none'}` });
  return { audio: out.map(({ o }) => o), subtitles: subtitleTracks, burned, default_subtitle: defaultSubtitle, flags, notes };
}

/**
 * The languages in which an unflagged forced track may hide: two or more tracks, none of them
 * marked forced by the source. Only for these are the events counted (it reads the whole file).
 */
export function forcedCandidateLanguages(subtitles: SubtitleStream[]): string[] {
  const languages: string[] = [];
  for (const s of subtitles) {
    if (languages.includes(s.language)) continue;
    const same = subtitles.filter((x) => x.language === s.language);
    if (same.length >= 2 && !same.some((x) => x.forced) && same.some(isPlainSubtitle)) languages.push(s.language);
  }
  return languages;
}

/**
 * Marks as forced each plain subtitle track (no role of its own) with at least FORCED_MIN_EVENTS
 * events and fewer than FORCED_EVENT_SHARE of the events of the fullest track of its language, in a
 * language where the source marks none forced. `events[i]` is the event count of subtitle stream
 * i + 1 (null: unknown); counts that do not line up with the streams change nothing.
 */
export function recogniseForced(subtitles: SubtitleStream[], events: (number | null)[]): { subtitles: SubtitleStream[]; recognised: { stream: SubtitleStream; events: number; fullest: number }[] } {
  const lined = events.length === subtitles.length && subtitles.every((s, i) => s.index === i + 1);
  if (!lined) return { subtitles, recognised: [] };
  const candidates = forcedCandidateLanguages(subtitles);
  const count = (s: SubtitleStream): number | null => events[s.index - 1] ?? null;
  const recognised: { stream: SubtitleStream; events: number; fullest: number }[] = [];
  const out = subtitles.map((s) => {
    const n = count(s);
    if (!candidates.includes(s.language) || !isPlainSubtitle(s) || n === null || n < FORCED_MIN_EVENTS) return s;
    const fullest = Math.max(...subtitles.filter((x) => x.language === s.language).map((x) => count(x) ?? 0));
    if (n >= FORCED_EVENT_SHARE * fullest) return s;
    const forced = { ...s, forced: true };
    recognised.push({ stream: forced, events: n, fullest });
    return forced;
  });
  return { subtitles: out, recognised };
}

/** HandBrakeCLI arguments for a plan: explicit tracks, encoders and mixdowns, what is burned and which subtitle track is the default. */
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
  args.push(`--subtitle-burned=${plan.burned ?? 'none'}`, `--subtitle-default=${plan.default_subtitle ?? 'none'}`);
  return args;
}
