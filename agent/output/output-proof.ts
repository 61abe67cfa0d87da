/**
 * "Proven before deleted" (library.md): the rule that says whether an encoder's output is the title
 * it was made from, before the raw data is removed. Pure: the facts come from the scan of the source,
 * the scan of the output, a stream-copy pass over the output (its real length: a header written at
 * the start of the encode can claim the full length of a file cut off later) and decode samples
 * spread over it (ffmpeg-check-runner.ts).
 *
 * - Length: the output's real length within the larger of DURATION_TOLERANCE_SECONDS and
 *   DURATION_TOLERANCE_SHARE of the source title's length. Without a source length, the output's
 *   real length against the length its own header claims.
 * - Streams: every audio and subtitle track chosen for it (stream-selection.ts) is there, in order,
 *   with its language.
 * - Decode: the whole file reads without an error, and each sample decodes without one and with
 *   pictures (a sample with none lies past the real end of the file).
 */
import { clock } from '../../shared/main-feature.js';

/** An output may differ from its source title by 1 s… */
export const DURATION_TOLERANCE_SECONDS = 1;
/** …or by 0.5 % of the title's length, whichever is larger. */
export const DURATION_TOLERANCE_SHARE = 0.005;
/** Decode samples per output, spread over the whole file… */
export const DECODE_SAMPLES = 8;
/** …each this many seconds long. */
export const DECODE_SAMPLE_SECONDS = 2;

/** What the output should be: the source title's length (0: unknown) and the languages of the tracks chosen for it, in output order (null: the preset chose). */
export interface ProofExpectation {
  seconds: number;
  audio: string[] | null;
  subtitles: string[] | null;
}

export interface DecodeSample {
  /** Where it starts, in seconds. */
  at: number;
  /** Video frames decoded. */
  frames: number;
  /** Error lines of the decoder (empty: clean). */
  errors: string[];
}

/** What the output is. */
export interface OutputFacts {
  /** The length its header claims. */
  claimedSeconds: number;
  /** The length its packets reach (stream copy to nowhere)… */
  seconds: number;
  /** …and the error lines of that read (a damaged container ends it early, with exit 0). */
  readErrors: string[];
  audio: { language: string }[];
  subtitles: { language: string }[];
  samples: DecodeSample[];
}

export type ProofCode = 'shorter' | 'longer' | 'cut_off' | 'track_missing' | 'track_language' | 'read_error' | 'no_picture' | 'decode_error';

/** Why an output is not proven: a code with its values for a UI that words it itself, and the sentence in English and German. */
export interface ProofReason {
  code: ProofCode;
  params: Record<string, string | number>;
  en: string;
  de: string;
}

/** The tolerance for a title of `seconds`: DURATION_TOLERANCE_SECONDS or DURATION_TOLERANCE_SHARE of it, the larger. */
export function durationTolerance(seconds: number): number {
  return Math.max(DURATION_TOLERANCE_SECONDS, DURATION_TOLERANCE_SHARE * seconds);
}

/** "38 minutes" / "38 Minuten" from two minutes on, "45 seconds" / "45 Sekunden" below. */
function amount(seconds: number): { en: string; de: string } {
  if (seconds >= 120) {
    const m = Math.round(seconds / 60);
    return { en: `${m} minutes`, de: `${m} Minuten` };
  }
  const s = Math.max(1, Math.round(seconds));
  return { en: `${s} second${s === 1 ? '' : 's'}`, de: `${s} Sekunde${s === 1 ? '' : 'n'}` };
}

function lengthReasons(expected: ProofExpectation, found: OutputFacts): ProofReason[] {
  if (expected.seconds > 0) {
    const diff = found.seconds - expected.seconds;
    if (Math.abs(diff) <= durationTolerance(expected.seconds)) return [];
    const a = amount(Math.abs(diff));
    const params = { output_seconds: Math.round(found.seconds), title_seconds: Math.round(expected.seconds) };
    const of = `${clock(found.seconds)} of ${clock(expected.seconds)}`;
    return diff < 0
      ? [{ code: 'shorter', params, en: `the output is ${a.en} shorter than the title (${of})`, de: `Ausgabe ${a.de} kürzer als der Titel (${clock(found.seconds)} von ${clock(expected.seconds)})` }]
      : [{ code: 'longer', params, en: `the output is ${a.en} longer than the title (${of}): its timestamps are broken`, de: `Ausgabe ${a.de} länger als der Titel (${clock(found.seconds)} von ${clock(expected.seconds)}): ihre Zeitstempel sind kaputt` }];
  }
  // No source length: the file against its own header.
  const diff = found.claimedSeconds - found.seconds;
  if (found.claimedSeconds <= 0 || diff <= durationTolerance(found.claimedSeconds)) return [];
  const params = { output_seconds: Math.round(found.seconds), claimed_seconds: Math.round(found.claimedSeconds) };
  return [{ code: 'cut_off', params, en: `the output ends at ${clock(found.seconds)} though it says it lasts ${clock(found.claimedSeconds)}`, de: `Ausgabe endet bei ${clock(found.seconds)}, obwohl sie ${clock(found.claimedSeconds)} lang sein soll` }];
}

function trackReasons(kind: 'audio' | 'subtitle', expected: string[] | null, found: { language: string }[]): ProofReason[] {
  if (expected === null) return [];
  const en = kind === 'audio' ? 'audio track' : 'subtitle track';
  const de = kind === 'audio' ? 'Tonspur' : 'Untertitelspur';
  const reasons: ProofReason[] = [];
  expected.forEach((language, i) => {
    const track = found[i];
    const params = { kind, track: i + 1, language };
    if (!track) reasons.push({ code: 'track_missing', params, en: `${en} ${i + 1} (${language}) is missing from the output`, de: `${de} ${i + 1} (${language}) fehlt in der Ausgabe` });
    else if (track.language !== language) {
      reasons.push({ code: 'track_language', params: { ...params, found: track.language }, en: `${en} ${i + 1} of the output is ${track.language}, ${language} was chosen`, de: `${de} ${i + 1} der Ausgabe ist ${track.language}, gewählt war ${language}` });
    }
  });
  return reasons;
}

function sampleReasons(found: OutputFacts): ProofReason[] {
  const { samples } = found;
  const reasons: ProofReason[] = [];
  if (found.readErrors.length > 0) {
    const params = { at_seconds: Math.round(found.seconds), error: found.readErrors[0] };
    reasons.push({ code: 'read_error', params, en: `the output cannot be read cleanly (up to ${clock(found.seconds)}): ${found.readErrors[0]}`, de: `Ausgabe nicht fehlerfrei lesbar (bis ${clock(found.seconds)}): ${found.readErrors[0]}` });
  }
  const broken = samples.find((s) => s.errors.length > 0);
  if (broken) {
    const params = { at_seconds: Math.round(broken.at), error: broken.errors[0] };
    reasons.push({ code: 'decode_error', params, en: `the output cannot be decoded cleanly at ${clock(broken.at)}: ${broken.errors[0]}`, de: `Ausgabe bei ${clock(broken.at)} nicht fehlerfrei lesbar: ${broken.errors[0]}` });
  }
  // A file with no picture anywhere (sound only) has none to miss.
  const blank = samples.some((s) => s.frames > 0) ? samples.find((s) => s.errors.length === 0 && s.frames === 0) : undefined;
  if (blank) {
    reasons.push({ code: 'no_picture', params: { at_seconds: Math.round(blank.at) }, en: `the output has no picture at ${clock(blank.at)}`, de: `Ausgabe hat bei ${clock(blank.at)} kein Bild` });
  }
  return reasons;
}

/** Why the output is not the title it was made from; empty: proven. */
export function proveOutput(expected: ProofExpectation, found: OutputFacts): ProofReason[] {
  return [...lengthReasons(expected, found), ...trackReasons('audio', expected.audio, found.audio), ...trackReasons('subtitle', expected.subtitles, found.subtitles), ...sampleReasons(found)];
}

/** The reasons in one English sentence for the job error and log. */
export function proofText(reasons: ProofReason[]): string {
  return reasons.map((r) => r.en).join('; ');
}
