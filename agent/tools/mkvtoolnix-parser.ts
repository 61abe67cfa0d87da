/**
 * Pure parsing of mkvtoolnix output: `mkvmerge -J FILE` (the identification as JSON, format version
 * 12 and later) and the error text of mkvmerge and mkvextract. mkvextract numbers tracks with the
 * ids mkvmerge -J gives.
 */

export interface MkvTrack {
  /** mkvmerge's track id (mkvextract's TID), 0 for the first track of the file. */
  id: number;
  type: 'video' | 'audio' | 'subtitles' | 'other';
  /** mkvmerge's codec name ("VobSub", "AC-3", "MPEG-1/2") and the Matroska codec id when printed. */
  codec: string;
  codecId: string | null;
  /** ISO 639-2 as the file stores it ("ger", "und"). */
  language: string;
  name: string | null;
  /** The track's flags (FlagDefault, FlagForced, FlagHearingImpaired …); false when not set. */
  flags: MkvTrackFlags;
}

export interface MkvTrackFlags {
  default: boolean;
  forced: boolean;
  hearingImpaired: boolean;
  visualImpaired: boolean;
  textDescriptions: boolean;
  original: boolean;
  commentary: boolean;
}

type Json = Record<string, unknown>;

function obj(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function trackType(value: unknown): MkvTrack['type'] {
  return value === 'video' || value === 'audio' || value === 'subtitles' ? value : 'other';
}

/** `mkvmerge -J FILE` stdout → the file's tracks in file order; throws when it is no Matroska file mkvmerge read. */
export function parseMkvmergeIdentify(stdout: string): MkvTrack[] {
  let doc: Json;
  try {
    doc = obj(JSON.parse(stdout));
  } catch {
    throw new Error('mkvmerge -J printed no JSON');
  }
  const errors = Array.isArray(doc.errors) ? doc.errors.map(String).map((e) => e.trim()) : [];
  if (errors.length > 0) throw new Error(errors.join('; '));
  if (obj(doc.container).recognized !== true) throw new Error('mkvmerge did not recognise the file');
  const tracks = Array.isArray(doc.tracks) ? doc.tracks.map(obj) : [];
  return tracks.map((t) => {
    const props = obj(t.properties);
    return {
      id: typeof t.id === 'number' ? t.id : -1,
      type: trackType(t.type),
      codec: str(t.codec) ?? '',
      codecId: str(props.codec_id),
      language: str(props.language) ?? 'und',
      name: str(props.track_name),
      flags: {
        default: props.default_track === true,
        forced: props.forced_track === true,
        hearingImpaired: props.flag_hearing_impaired === true,
        visualImpaired: props.flag_visual_impaired === true,
        textDescriptions: props.flag_text_descriptions === true,
        original: props.flag_original === true,
        commentary: props.flag_commentary === true,
      },
    };
  });
}

/** `#GUI#progress 45%` (mkvextract --gui-mode) → 45; null for any other line. */
export function mkvtoolnixProgress(line: string): number | null {
  const m = /^#GUI#progress (\d+)%/.exec(line.trim());
  return m ? Math.min(100, Number(m[1])) : null;
}

const ERROR_LINE = /^(?:#GUI#error|Error:)\s*/;

/** A plain reason for a failed mkvmerge or mkvextract run: its error line (else its last line) and how it ended. */
export function mkvtoolnixError(output: string, exitCode: number | null): string {
  const lines = output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && mkvtoolnixProgress(l) === null && !/^Progress: \d+%/.test(l));
  const error = lines.find((l) => ERROR_LINE.test(l));
  const last = (error ?? lines.pop() ?? '').replace(ERROR_LINE, '');
  const how = exitCode === null ? 'stopped by a signal' : `exit code ${exitCode}`;
  return last ? `${last} (${how})` : how;
}
