/**
 * The MQTT topic tree and message types, shared by coordinator and agent.
 * Documented with example payloads in docs/mqtt.md. Every received payload is checked against its
 * schema in protocol-schemas.ts; who may publish and subscribe where is in topic-rights.ts.
 *
 *   ripwerk/agent/<node>/status          retained, agent -> all     AgentStatus (last will: state offline)
 *   ripwerk/drive/<node>/<drive>/state   retained, agent -> all     DriveState
 *   ripwerk/cmd/<node>                   QoS 1, coordinator -> agent Command
 *   ripwerk/event/<node>                 QoS 1, agent -> coordinator AgentEvent (from the agent's outbox)
 *   ripwerk/ack/<node>                   QoS 1, coordinator -> agent EventAck
 *   ripwerk/coordinator/status           retained, coordinator       CoordinatorStatus
 *   ripwerk/keys/keystore                retained, coordinator -> agents  KeystoreMessage
 *   ripwerk/keys/keydb                   retained, coordinator -> agents  KeydbMessage
 *   ripwerk/keys/app_key                 retained, coordinator -> agents  AppKeyMessage
 */

import type { IClientOptions } from 'mqtt';
import type { DiscTitle, TitleEvidence, TitleRole } from './disc-titles.js';

export const TOPIC_ROOT = 'ripwerk';

export const topics = {
  agentStatus: (node: string) => `${TOPIC_ROOT}/agent/${node}/status`,
  agentStatusAll: `${TOPIC_ROOT}/agent/+/status`,
  driveState: (node: string, drive: string) => `${TOPIC_ROOT}/drive/${node}/${drive}/state`,
  driveStateAll: `${TOPIC_ROOT}/drive/+/+/state`,
  command: (node: string) => `${TOPIC_ROOT}/cmd/${node}`,
  event: (node: string) => `${TOPIC_ROOT}/event/${node}`,
  eventAll: `${TOPIC_ROOT}/event/+`,
  ack: (node: string) => `${TOPIC_ROOT}/ack/${node}`,
  coordinatorStatus: `${TOPIC_ROOT}/coordinator/status`,
  keystore: `${TOPIC_ROOT}/keys/keystore`,
  keydb: `${TOPIC_ROOT}/keys/keydb`,
  appKey: `${TOPIC_ROOT}/keys/app_key`,
} as const;

/**
 * Home Assistant (coordinator with the setting homeAssistantDiscovery; node and drive with every
 * character outside [a-zA-Z0-9_-] replaced by "_", see haId):
 *   ripwerk/ha/<node>/<drive>/state      retained, coordinator -> HA  the drive state its sensors read
 *   ripwerk/ha/<node>/<drive>/eject      QoS 1, HA's button -> coordinator  "EJECT"
 * The discovery configs themselves live under the HA prefix (homeassistant/<component>/...).
 */
export const haId = (s: string): string => s.replace(/[^a-zA-Z0-9_-]/g, '_');
export const haTopics = {
  driveState: (node: string, drive: string) => `${TOPIC_ROOT}/ha/${haId(node)}/${haId(drive)}/state`,
  eject: (node: string, drive: string) => `${TOPIC_ROOT}/ha/${haId(node)}/${haId(drive)}/eject`,
  ejectAll: `${TOPIC_ROOT}/ha/+/+/eject`,
  /** Retained, coordinator -> HA: the box-set session sensor's state ("2/4" and attributes). */
  sessionState: `${TOPIC_ROOT}/ha/sessions/state`,
  /** Not retained, coordinator -> HA: the session event entity's events (next_disc, session_ended). */
  sessionEvent: `${TOPIC_ROOT}/ha/sessions/event`,
} as const;

/** What an agent publishes on, read back from a topic of the tree above (null: no agent topic). */
export type AgentTopic = { kind: 'status'; node: string } | { kind: 'drive'; node: string; drive: string } | { kind: 'event'; node: string };

/** Reads ripwerk/agent/<node>/status, ripwerk/drive/<node>/<drive>/state and ripwerk/event/<node>; anything else is null. */
export function parseAgentTopic(topic: string): AgentTopic | null {
  const [root, kind, node, ...rest] = topic.split('/');
  if (root !== TOPIC_ROOT || !node) return null;
  if (kind === 'agent' && rest.length === 1 && rest[0] === 'status') return { kind: 'status', node };
  if (kind === 'drive' && rest.length === 2 && rest[1] === 'state') return { kind: 'drive', node, drive: rest[0] ?? '' };
  if (kind === 'event' && rest.length === 0) return { kind: 'event', node };
  return null;
}

export const TASKS = {
  ripDisc: 'worker.tasks.rip_disc',
  transcodeFiles: 'worker.tasks.transcode_files',
  scanTracks: 'worker.tasks.scan_tracks',
  pingWorker: 'worker.tasks.ping_worker',
  cancel: 'worker.tasks.cancel',
  /** The coordinator's word that a task an agent recovered after a restart is still its own: run it again. */
  resume: 'worker.tasks.resume',
  eject: 'worker.tasks.eject',
  /** One chunk of a long title, encoded video-only into a shared folder (issue 41). */
  encodeChunk: 'worker.tasks.encode_chunk',
  /** To a chunked title's lead: every chunk of the title is encoded, join them. */
  joinChunks: 'worker.tasks.join_chunks',
} as const;
export type TaskName = (typeof TASKS)[keyof typeof TASKS];

export interface Capabilities {
  encoders: string[];
  tools: Record<string, string | null>;
  /** Where the ripper gets its disc keys from (for example "makemkv", "libdvdread (unencrypted only)"). */
  key_source: string;
  schluessel: number;
  rip_backend: 'makemkv' | 'open-dvd' | 'none';
  transcode_only: boolean;
  /**
   * A native worker (the single-file build for desktops without containers, ripwerk-worker.cjs or
   * ripwerk-worker.exe): no drives, transcode queue only; it refuses rip and title-scan commands.
   */
  native: boolean;
  /** The transcoder's presets by category (`--preset-list`), the Hardware category included. */
  presets?: { category: string; presets: string[] }[];
}

export interface AgentStatus {
  node: string;
  state: 'online' | 'offline';
  name?: string;
  host?: string;
  ip?: string;
  slots?: number;
  /** Command ids the agent holds (running, waiting for a slot, or finished with the outcome still in its outbox): the reconnect handshake. */
  tasks?: string[];
  /**
   * Tasks a previous run of the agent left unfinished (a subset of `tasks`). None of them runs again
   * until the coordinator answers with `resume` (still this agent's work) or `cancel` (taken away).
   */
  recovered?: RecoveredTask[];
  capabilities?: Capabilities;
  started_at?: string;
  last_seen?: string;
}

/** A task left from an agent's previous run, waiting for the coordinator's word. */
export interface RecoveredTask {
  command_id: string;
  job_id: string;
}

export type DiscType = 'dvd' | 'bluray' | 'uhd' | 'cd' | 'unknown';

export interface DiscInfo {
  /** The raw volume label as read (UDF logical volume identifier, else ISO 9660); "" when there is none (audio CD). */
  label: string;
  /** Display title: the clear-text title of BDMV/META/DL/bdmt_*.xml when present, else the normalised label. */
  title: string;
  /** A year found in the label (MY_MOVIE_2003), else null. */
  year: number | null;
  type: DiscType;
  size_bytes: number;
  /**
   * The disc's identity, the key of its history, pre-scan cache and corrections: `dvd:<dvd_disc_id>`,
   * `aacs:<aacs_disc_id>`, `mb:<MusicBrainz disc id>` or `files:<file_fingerprint>`, the first the agent
   * could read; only where none can be read, `label_fingerprint` (label and size).
   */
  fingerprint: string;
  /** The fingerprint of label and size (16 hex digits): what `fingerprint` was before content ids; older records are found by it. */
  label_fingerprint?: string;
  /** What the agent read of the disc's content (without mounting or decrypting it); absent from older agents. */
  ids?: DiscIds | null;
  /** The image file/folder or device path the disc is read from. */
  source: string;
  /** Audio CD: number of audio tracks; null for other discs. */
  audio_tracks: number | null;
  /** Audio CD: its table of contents, MusicBrainz disc id and CD-Text, when the agent could read them. */
  audio_cd?: AudioCdInfo | null;
}

/** Ids computed from a disc's files, each null where it could not be read. */
export interface DiscIds {
  /** DVD: libdvdread's DVDDiscID (MD5 over VIDEO_TS.IFO and the title sets' IFOs), 32 hex digits, upper case as TheDiscDB stores it. */
  dvd_disc_id: string | null;
  /** Blu-ray and UHD: SHA-1 of AACS/Unit_Key_RO.inf, 40 hex digits upper case: the disc id of KEYDB.cfg and libbluray's bd_info. */
  aacs_disc_id: string | null;
  /** TheDiscDB's ContentHash: MD5 over the sizes of BDMV/STREAM/*.m2ts (Blu-ray) or of the files in VIDEO_TS (DVD), 32 hex digits upper case. */
  content_hash: string | null;
  /** matrix256 v1: SHA-256 over every file's path and size, 64 hex digits lower case. */
  file_fingerprint: string | null;
}

/** An audio CD as MusicBrainz identifies it, plus the CD-Text the disc (or a cue sheet) carries. */
export interface AudioCdInfo {
  /** Null when the TOC is one libdiscid refuses (a lead-out past 90 minutes): nothing to ask MusicBrainz. */
  musicbrainz_disc_id: string | null;
  /** MusicBrainz's toc parameter: first and last track, lead-out, then each track's offset (all LBA + 150), space separated; null with the disc id. */
  toc: string | null;
  cd_text: CdText | null;
}

export interface CdText {
  title: string | null;
  performer: string | null;
  tracks: { number: number; title: string | null; performer: string | null }[];
}

export interface DriveState {
  node: string;
  drive: string;
  kind: 'device' | 'image';
  path: string;
  vendor: string | null;
  model: string | null;
  status: 'no_disc' | 'tray_open' | 'disc_present' | 'unknown';
  disc: DiscInfo | null;
}

/** An audio stream of a title or file. */
export interface AudioStream {
  /** 1-based position among the title's audio streams (HandBrake's track number). */
  index: number;
  /** ISO 639-2/T ("deu"), "und" when the source does not say. */
  language: string;
  /** Lower-case codec name: ac3, eac3, dts, dtshd, truehd, aac, lpcm, mp2, flac … */
  codec: string;
  channels: number | null;
  /**
   * Track roles (languages.md, "Track roles"), present only when true: the disc or the file says so
   * (MakeMKV's stream flags, the DVD's audio content code, the Matroska track flags).
   * `commentary`: a commentary (director's comments).
   */
  commentary?: boolean;
  /** Audio description for the visually impaired. */
  visual_impaired?: boolean;
}

/** A subtitle stream of a title or file. */
export interface SubtitleStream {
  index: number;
  language: string;
  /** vobsub, pgs, srt, ssa … */
  codec: string;
  /**
   * The source marks it as forced (only the foreign-language parts); in a transcode also a track
   * recognised by its few events (FORCED_EVENT_SHARE in agent/tasks/stream-selection.ts).
   */
  forced: boolean;
  /** Subtitles for the hard of hearing (DVD closed-caption content codes, Matroska FlagHearingImpaired); present only when true. */
  hearing_impaired?: boolean;
  /** Subtitles of a commentary (DVD "Director" content codes, Matroska FlagCommentary); present only when true. */
  commentary?: boolean;
}

/** The streams of one finished output file (job_done). */
export interface FileStreams {
  file: string;
  audio: AudioStream[];
  subtitles: SubtitleStream[];
}

/** An audio-CD rip checked against the AccurateRip database (job_done of an audio CD). */
export interface AccurateRipReport {
  /** The database's name of the disc: `nnn-id1-id2-freedb`. */
  disc_id: string;
  /**
   * accurate: every track's checksum is in the database; partly_accurate: the rest are unknown to it;
   * inaccurate: a track differs from the database (a warning when the entry is confident);
   * not_in_database: the disc is unknown; unavailable: the database could not be asked (`reason`).
   */
  status: 'accurate' | 'partly_accurate' | 'inaccurate' | 'not_in_database' | 'unavailable';
  reason: string | null;
  /** The read offset (samples) the rip was corrected by, and where it came from. */
  read_offset: number;
  read_offset_source: 'setting' | 'assumed' | 'image';
  tracks: { number: number; v1: string; v2: string; status: 'accurate' | 'inaccurate' | 'unknown'; confidence: number | null }[];
}

export interface Track {
  number: number;
  seconds: number;
  size_bytes: number;
  chapters: number;
  /**
   * Where the title comes from on the disc, as TheDiscDB's SourceFile names it: Blu-ray the playlist
   * or clip (MakeMKV TINFO 16: "00800.mpls", "00006.m2ts", "00000.mpls(1)"), DVD the DVD title
   * number in two digits ("01": TINFO 24, or lsdvd's title number). Absent from older agents.
   */
  source_file?: string | null;
  /** MakeMKV TINFO 24: the DVD title number the title was made from ("01"); DVDs only. */
  original_title_id?: string | null;
  /** MakeMKV TINFO 25: how many segments (DVD cell ranges, Blu-ray clips) the title plays. */
  segment_count?: number | null;
  /** MakeMKV TINFO 26: the segments, "1-19,20-35" (DVD cells) or "14,15,16" (Blu-ray clips). */
  segment_map?: string | null;
  /** The title's audio and subtitle streams, as far as the scanning tool reports them. */
  audio?: AudioStream[];
  subtitles?: SubtitleStream[];
}

export interface RipArgs {
  drive: string;
  titles: number[];
  main_feature_only: boolean;
  raw_dir: string;
  target_dir: string;
  title: string;
  year: number | null;
  series: string | null;
  season: number | null;
  transcode: boolean;
  keep_original: boolean;
  auto_eject: boolean;
  /** Without chosen titles, titles shorter than this are not ripped (setting minTitleSeconds). */
  min_title_seconds?: number;
  /** Without chosen titles, a movie rip takes at most this many titles of near-identical length (setting maxSimilarTitles, shared/main-feature.ts). */
  max_similar_titles?: number;
  /** The film's runtime the metadata lookup knows (TMDB, minutes): evidence for the main feature; null when not known. */
  runtime_minutes?: number | null;
  /** Media-server files to write next to the output (only when the rip is the last stage). */
  library?: LibraryInfo | null;
  /** Audio CD: artist, album and track names for the files `<Artist>/<Album> (<Year>)/NN - <Title>.flac` and their tags. */
  album?: AlbumInfo | null;
  /**
   * A disc TheDiscDB recognised: every title it knows with its role, and whether this rip takes it.
   * The agent finds them in its own scan by their evidence (never the number): without chosen titles
   * it rips the ones to take; every ripped title it finds here is named by its role.
   */
  disc_titles?: PlannedTitle[] | null;
  /** A movie with titles in the library already: the folder they are in, where the missing ones join them. */
  library_folder?: string | null;
  /** Without a transcode stage: the media server's extras folder, and whether extras go to the folder of their kind (see TranscodeArgs). */
  extras_folder?: string;
  extras_by_kind?: boolean;
  /**
   * A careful re-read (a retry of a rip that had read errors): the ripper retries failing reads more
   * (MakeMKV: io_ErrorRetryCount for the run) or skips less around them (dvdbackup -r b). Slower.
   */
  careful?: boolean;
}

/** A title of a recognised disc in a rip: its evidence and role, and whether the rip takes it. */
export interface PlannedTitle extends DiscTitle {
  take: boolean;
}

/** A title a rip took: its number in the scan, its evidence, the raw file it became, and its role when the disc was recognised. */
export interface RippedTitle extends TitleEvidence {
  number: number;
  file: string;
  role: TitleRole | null;
  /** The main feature the rip chose by evidence (a movie disc TheDiscDB does not know, shared/main-feature.ts); absent otherwise. */
  main_feature?: boolean;
}

/** An audio CD's identity: from MusicBrainz, from CD-Text, or the "Unbekannter Interpret" fallback. */
export interface AlbumInfo {
  artist: string;
  album: string;
  year: number | null;
  /** The CD's position in a multi-disc release; 1 otherwise. */
  disc_number: number;
  /** MusicBrainz release id (MUSICBRAINZ_ALBUMID), null without a MusicBrainz match. */
  release_id: string | null;
  tracks: AlbumTrack[];
  /** Front cover to save as cover.jpg (Cover Art Archive), or null. */
  cover_url: string | null;
  source: 'musicbrainz' | 'cd-text' | 'none';
  /** How many discs the release has (DISCTOTAL); with more than one, every disc goes into the one album folder. Absent: 1. */
  disc_total?: number;
  /** What else Picard tags from a MusicBrainz release; absent or null without one. */
  details?: AlbumDetails | null;
}

/** A MusicBrainz release's tags beyond names and numbers (Picard's Vorbis names in brackets). */
export interface AlbumDetails {
  /** The release date as MusicBrainz has it, YYYY[-MM[-DD]] (DATE). */
  date: string | null;
  /** The release group's first release date (ORIGINALDATE, ORIGINALYEAR). */
  original_date: string | null;
  country: string | null;
  /** Lower case as Picard writes them: official, promotion, ... (RELEASESTATUS). */
  status: string | null;
  /** Primary and secondary release-group types, lower case: album, compilation, live, ... (RELEASETYPE). */
  types: string[];
  /** The medium's format: CD, Enhanced CD, ... (MEDIA). */
  media: string | null;
  labels: string[];
  catalog_numbers: string[];
  barcode: string | null;
  asin: string | null;
  script: string | null;
  /** MUSICBRAINZ_ALBUMARTISTID, ALBUMARTISTSORT. */
  artist_ids: string[];
  artist_sort: string | null;
  release_group_id: string | null;
  /** The CD's own disc id when the medium carries it (MUSICBRAINZ_DISCID). */
  disc_id: string | null;
  /** A Various Artists release (COMPILATION=1). */
  compilation: boolean;
}

export interface AlbumTrack {
  number: number;
  title: string;
  /** The track's artist when it differs from the album artist (samplers), else null. */
  artist: string | null;
  /** MusicBrainz recording id (written as MUSICBRAINZ_TRACKID, as Picard and the media servers read it). */
  recording_id: string | null;
  /** MusicBrainz track id (MUSICBRAINZ_RELEASETRACKID). */
  track_id: string | null;
  /** The track's credited artists' ids (MUSICBRAINZ_ARTISTID) and the credit in sort names (ARTISTSORT). */
  artist_ids?: string[];
  artist_sort?: string | null;
}

/** What a media-server profile needs to describe the output: movie.nfo or tvshow.nfo, and poster.jpg. */
export interface LibraryInfo {
  /** Jellyfin, Emby and Kodi read nfo files; Plex gets naming only, so it never gets a LibraryInfo. */
  profile: 'jellyfin' | 'emby' | 'kodi';
  kind: 'movie' | 'series';
  title: string;
  year: number | null;
  overview: string | null;
  /** Absolute URL of the poster to download, or null. */
  poster_url: string | null;
  /**
   * The rule for the address the poster fetch connects to (issue 42): null for a poster on the
   * configured image server (TMDB_IMAGE_BASE_URL, fetched wherever the admin put it, as the
   * coordinator's poster cache does); else the webhook target rules, loopback, link-local and this
   * machine's addresses allowed only with the setting allowPrivateWebhooks. Missing (an older
   * coordinator): the rules without that setting.
   */
  poster_policy?: { allow_private: boolean } | null;
  tmdb_id: number | null;
  imdb_id: string | null;
}

/** One episode of a season: its number and runtime from the metadata database. */
export interface EpisodeRuntime {
  episode: number;
  minutes: number | null;
}

export interface TranscodeArgs {
  raw_dir: string;
  files: string[];
  target_dir: string;
  title: string;
  year: number | null;
  series: string | null;
  season: number | null;
  preset: string;
  keep_original: boolean;
  /** A series rip: the season's episodes, to name the files SxxEyy when their durations match unambiguously. */
  episodes?: EpisodeRuntime[] | null;
  /** The disc's number in a season set (label "…D2"), for seasons with uniform runtimes. */
  disc_number?: number | null;
  library?: LibraryInfo | null;
  /** Audio languages to keep, ISO 639-2/T in order of preference (the first match is the default track). */
  audio_languages?: string[];
  /** Subtitle languages to keep as tracks, in order. */
  subtitle_languages?: string[];
  /** How kept audio and subtitles are encoded (absent: the old behaviour, the preset alone). */
  audio?: StreamOptions;
  /** The folder below a movie's folder for its extras, as the media server expects it ("Extras", Plex: "Other"). */
  extras_folder?: string;
  /** A movie with titles in the library already: the folder they are in (RipArgs.library_folder). */
  library_folder?: string | null;
  /**
   * The transcode is done again because its worker was lost: that worker's output may still be in the
   * title's folder (it removes it when it comes back), so a folder holding files is never joined as a
   * version of the movie; the job takes `Title (Year) [<job id>]` instead.
   */
  redone?: boolean;
  /** Per file (same order as files): its role on a recognised disc, null where it has none; absent for other discs. */
  titles?: (TitleRole | null)[] | null;
  /** A movie: the index in `files` of the main feature the rip chose by evidence, named `Title (Year).mkv` whatever its length; absent or null: the longest file. */
  main_file?: number | null;
  /** Extras of a known kind go to the folder of their kind (Featurettes, Trailers, ...) instead of extras_folder (not for Kodi). */
  extras_by_kind?: boolean;
  /** A disc of a box-set session: the episode number its first file continues with, where runtimes and TheDiscDB roles do not decide. */
  first_episode?: number | null;
  /**
   * Titles longer than `min_seconds` may be encoded in chunks by several agents (issue 41), this
   * agent leading them; absent or null: every title whole on this agent (setting chunkMinMinutes 0,
   * a chosen transcode node, no other agent with an encoder online, or an older coordinator).
   */
  chunking?: ChunkingArgs | null;
}

/**
 * One chunk of a title as the lead planned it (agent/tasks/chunk-plan.ts, in wire form): its frames
 * among the title's, and HandBrake's cut on its 90 kHz clock (null: from the start, to the end).
 */
export interface ChunkCut {
  index: number;
  first_frame: number;
  frames: number;
  start_ticks: number | null;
  duration_ticks: number | null;
}

/** What the coordinator allows a transcode's lead for its long titles (coordinator/dispatch/chunk-decision.ts). */
export interface ChunkingArgs {
  /** A title longer than this (seconds) is chunked (setting chunkMinMinutes × 60). */
  min_seconds: number;
  /** The online agents with an encoder when the transcode was handed out, the lead included: the plan cuts for them (CHUNKS_PER_AGENT each). */
  agents: number;
}

export interface StreamOptions {
  /** Multichannel AC-3, E-AC-3, DTS, DTS-HD and TrueHD pass through untouched. */
  keep_surround: boolean;
  /** Next to each passed-through surround track, a stereo AAC track of the same audio. */
  stereo_companion: boolean;
  /** Burn a forced subtitle track of the default audio language into the picture. */
  burn_forced_subtitles: boolean;
  /** The title's original language (from the metadata lookup), kept as well; null when unknown. */
  original_language: string | null;
  /** Keep commentary audio (and commentary subtitles) of the kept languages (setting keepCommentary; absent: off). */
  keep_commentary?: boolean;
  /** Keep audio description tracks of the kept languages (setting keepAudioDescription; absent: off). */
  keep_audio_description?: boolean;
}

/**
 * A rip or transcode command's args with the command's job id: what the agent's tasks work on. The job
 * id travels once, in the command; the agent adds it here.
 */
export type RipJob = RipArgs & { job_id: string };
export type TranscodeJob = TranscodeArgs & { job_id: string };

export type Command =
  | { id: string; task: typeof TASKS.ripDisc; job_id: string; args: RipArgs }
  | { id: string; task: typeof TASKS.transcodeFiles; job_id: string; args: TranscodeArgs }
  | { id: string; task: typeof TASKS.scanTracks; args: { drive: string } }
  | { id: string; task: typeof TASKS.pingWorker; args: Record<string, never> }
  | { id: string; task: typeof TASKS.cancel; job_id: string; args: { command_id: string } }
  /** `started_at` echoes the status it answers: a resume meant for an earlier run of the agent is ignored. */
  | { id: string; task: typeof TASKS.resume; job_id: string; args: { command_id: string; started_at: string } }
  | { id: string; task: typeof TASKS.eject; args: { drive: string } }
  | { id: string; task: typeof TASKS.encodeChunk; job_id: string; args: EncodeChunkArgs }
  | { id: string; task: typeof TASKS.joinChunks; job_id: string; args: JoinChunksArgs };

/** One chunk to encode: the raw file, the chunk file to write (container paths), the job's preset and the cut. */
export interface EncodeChunkArgs {
  input: string;
  output: string;
  preset: string;
  cut: ChunkCut;
}

/** To the lead: the chunk files of its title `title` (the index among its transcode's files) in join order. */
export interface JoinChunksArgs {
  /** The lead's transcode command. */
  command_id: string;
  title: number;
  files: string[];
}

export type Phase = 'rip' | 'transcode';

interface EventBase {
  event_id: string;
  node: string;
  ts: string;
  command_id?: string;
  job_id?: string;
}

export type AgentEvent = EventBase &
  (
    | { type: 'accepted' }
    | { type: 'rejected'; reason: string }
    /** `fps`: the encoder's speed in frames per second (a transcode, once measured; absent from older agents). */
    | { type: 'progress'; phase: Phase; progress: number; fps?: number }
    /** `read_errors`: on the rip's closing line about read errors, how many the ripper reported (the job's meta.read_errors). */
    | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string; read_errors?: number }
    | { type: 'rip_started'; raw_dir: string }
    /** `titles`: per file, the title it was ripped from (absent from older agents). */
    | { type: 'rip_done'; raw_dir: string; files: string[]; titles?: RippedTitle[] }
    | { type: 'transcode_started' }
    /** The transcode's last encoder run is expected to end within seconds: its successor may be sent ahead. */
    | { type: 'transcode_ending' }
    /** The transcode's last encoder run has ended: its slot is free while it checks and describes its output. */
    | { type: 'transcode_encoded' }
    /** `titles`: a rip without a transcode stage: per output file, the title it was ripped from. */
    | { type: 'job_done'; output_path: string; files: string[]; raw_removed: boolean; originals_dir?: string; streams?: FileStreams[]; episodes_guessed?: boolean; titles?: RippedTitle[]; accuraterip?: AccurateRipReport }
    | { type: 'job_failed'; phase: Phase; reason: string }
    | { type: 'job_canceled'; phase: Phase }
    | { type: 'tracks'; drive: string; tracks: Track[] }
    | { type: 'command_failed'; reason: string }
    | { type: 'ejected'; drive: string }
    | { type: 'pong'; capabilities: Capabilities }
    /**
     * A transcode's lead asks for help with a long title (command_id: its transcode command): the
     * chunks it cut, to be handed to agents; `folder` is where their files go (shared/chunking.ts).
     */
    | { type: 'chunk_plan'; title: number; input: string; folder: string; preset: string; cuts: ChunkCut[] }
    /** About the chunk handed out under command_id: frames encoded so far, done (its file written), or failed. */
    | { type: 'chunk_progress'; frames_done: number }
    | { type: 'chunk_done' }
    /** `unreadable`: this agent cannot read the chunk's raw file (it lies on another host's own disk): not the chunk's failure. */
    | { type: 'chunk_failed'; reason: string; unreadable?: boolean }
    | { type: 'aacs_dump'; name: string; data_base64: string }
  );
export type AgentEventType = AgentEvent['type'];

export interface EventAck {
  event_ids: string[];
}

/** Retained on ripwerk/keys/keystore: the hashed-key files (hkd_*.bin) of the uploaded key store; files [] when none is installed. */
export interface KeystoreMessage {
  sha256: string | null;
  installed_at: string | null;
  files: { name: string; data_base64: string }[];
}

/** Retained on ripwerk/keys/keydb: the content of KEYDB.cfg, or null when none is stored. */
export interface KeydbMessage {
  content: string | null;
}

/** Retained on ripwerk/keys/app_key: the ripper's application key (MakeMKV app_Key), or null. */
export interface AppKeyMessage {
  key: string | null;
}

export interface CoordinatorStatus {
  state: 'online' | 'offline';
  started_at?: string;
}

/**
 * The connect options of both sides' links (docs/mqtt.md, connection settings): MQTT 3.1.1,
 * keepalive 10 s (the broker sees a silent side gone within 15 s and publishes its will), a reconnect
 * every second with a 10 s connect timeout, QoS 0 messages not queued while offline, subscriptions
 * renewed on a reconnect, and a retained QoS 1 last will with the side's offline state. They differ
 * in the client id, the session (`clean`: an agent keeps its session, the coordinator starts clean)
 * and the will; `login` is null when the broker wants none.
 */
export function linkConnectOptions(link: { clientId: string; login: { username: string; password: string } | null; clean: boolean; will: { topic: string; state: AgentStatus | CoordinatorStatus } }): IClientOptions {
  return {
    clientId: link.clientId,
    ...(link.login ?? {}),
    clean: link.clean,
    protocolVersion: 4,
    keepalive: 10,
    reconnectPeriod: 1000,
    // A refused login (CONNACK ≠ 0) is tried again like a lost connection: mqtt.js gives up for good
    // otherwise, and a worker refused once (a client id held for a moment, credentials issued anew
    // while it logged in) stayed away until it was restarted.
    reconnectOnConnackError: true,
    connectTimeout: 10_000,
    queueQoSZero: false,
    resubscribe: true,
    will: { topic: link.will.topic, payload: Buffer.from(JSON.stringify(link.will.state)), qos: 1, retain: true },
  };
}

/** Turns off Nagle on an MQTT client's TCP socket: a command or event is a few hundred bytes and must not wait ~40 ms. */
export function sendImmediately(client: { stream?: unknown }): void {
  const stream = client.stream as { setNoDelay?: (on: boolean) => void } | undefined;
  stream?.setNoDelay?.(true);
}

/** MQTT topic filter matching: "+" is one level, a trailing "#" any number of levels (MQTT-4.7.1). */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}
