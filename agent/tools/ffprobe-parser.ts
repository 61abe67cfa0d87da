/**
 * Pure parsing of `ffprobe -show_entries stream=index,codec_type,codec_name,profile,channels
 * :stream_disposition=default,forced,comment,hearing_impaired,visual_impaired:stream_tags=language
 * :format=duration -of json`: a file's length and its audio and subtitle streams with their roles,
 * numbered per kind in file order (the order HandBrake numbers a Matroska file's tracks in); and of
 * `ffprobe -count_packets -select_streams s -show_entries stream=index,nb_read_packets -of json`:
 * the events of each subtitle stream.
 */
import type { AudioStream, SubtitleStream } from '../../shared/protocol.js';
import { normaliseLanguage } from '../../shared/languages.js';
import { audioCodec, subtitleCodec, trueRoles } from './stream-codec.js';

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
    const disposition = obj(s.disposition);
    const commentary = disposition.comment === 1;
    if (s.codec_type === 'audio') {
      // DTS-HD shares the codec name dts; its profile names it ("DTS-HD MA").
      const channels = typeof s.channels === 'number' && s.channels > 0 ? s.channels : null;
      const roles = trueRoles({ commentary, visual_impaired: disposition.visual_impaired === 1 });
      audio.push({ index: audio.length + 1, language, codec: audioCodec(/DTS-HD/i.test(text(s.profile)) ? 'DTS-HD' : null, text(s.codec_name)), channels, ...roles });
    } else if (s.codec_type === 'subtitle') {
      const roles = trueRoles({ hearing_impaired: disposition.hearing_impaired === 1, commentary });
      subtitles.push({ index: subtitles.length + 1, language, codec: subtitleCodec(text(s.codec_name)), forced: disposition.forced === 1, ...roles });
    }
  }
  const seconds = Number(text(obj(doc.format).duration));
  return { seconds: Number.isFinite(seconds) ? seconds : 0, audio, subtitles };
}

/**
 * The events (packets) of each subtitle stream from `ffprobe -count_packets -select_streams s`, in
 * file order: entry i is subtitle stream i + 1 as the stream list numbers it; null where ffprobe gave
 * no count. Throws when the text is no such answer.
 */
export function parseFfprobePacketCounts(json: string): (number | null)[] {
  const doc = obj(JSON.parse(json));
  if (!Array.isArray(doc.streams)) throw new Error('ffprobe printed no stream list');
  return doc.streams.map(obj).map((s) => {
    const raw = typeof s.nb_read_packets === 'number' ? String(s.nb_read_packets) : text(s.nb_read_packets);
    return /^\d+$/.test(raw) ? Number(raw) : null;
  });
}
