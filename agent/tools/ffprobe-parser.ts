/**
 * Pure parsing of `ffprobe -show_entries stream=index,codec_type,codec_name,profile,channels
 * :stream_disposition=default,forced:stream_tags=language:format=duration -of json`: a file's length
 * and its audio and subtitle streams, numbered per kind in file order (the order HandBrake numbers
 * a Matroska file's tracks in).
 */
import type { AudioStream, SubtitleStream } from '../../shared/protocol.js';
import { normaliseLanguage } from '../../shared/languages.js';
import { audioCodec, subtitleCodec } from './stream-codec.js';

export interface ProbedFile {
  seconds: number;
  audio: AudioStream[];
  subtitles: SubtitleStream[];
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The streams of ffprobe's JSON; throws when the text is no ffprobe answer. */
export function parseFfprobeStreams(json: string): ProbedFile {
  const doc = obj(JSON.parse(json));
  if (!Array.isArray(doc.streams)) throw new Error('ffprobe printed no stream list');
  const audio: AudioStream[] = [];
  const subtitles: SubtitleStream[] = [];
  for (const s of doc.streams.map(obj)) {
    const language = normaliseLanguage(text(obj(s.tags).language));
    if (s.codec_type === 'audio') {
      // DTS-HD shares the codec name dts; its profile names it ("DTS-HD MA").
      const channels = typeof s.channels === 'number' && s.channels > 0 ? s.channels : null;
      audio.push({ index: audio.length + 1, language, codec: audioCodec(/DTS-HD/i.test(text(s.profile)) ? 'DTS-HD' : null, text(s.codec_name)), channels });
    } else if (s.codec_type === 'subtitle') {
      subtitles.push({ index: subtitles.length + 1, language, codec: subtitleCodec(text(s.codec_name)), forced: obj(s.disposition).forced === 1 });
    }
  }
  const seconds = Number(text(obj(doc.format).duration));
  return { seconds: Number.isFinite(seconds) ? seconds : 0, audio, subtitles };
}
