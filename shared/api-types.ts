/**
 * The records of the HTTP API, as the routes build them, the web UI reads them (`import type`) and the
 * tests check them. Types only: nothing here runs, so the UI's bundle gains nothing from it.
 * docs/api.md lists every field with its meaning; German names are the spec's own.
 */
import type { AccurateRipReport, AlbumInfo, AudioStream, DiscIds, DiscInfo, DriveState, EpisodeRuntime, FileStreams, Phase, RippedTitle, SubtitleStream, Track } from './protocol.js';
import type { DiscTitle, TitleRole } from './disc-titles.js';
import type { LeftTitle, MainFeatureReason } from './main-feature.js';

export type { AlbumInfo, AudioStream, DiscIds, FileStreams, SubtitleStream, Track };

// ------------------------------------------------------------------ jobs

/** A job's status as the API names it (the store's `running` is shown as `processing`). */
export type JobStatusName = 'pending' | 'processing' | 'transcoding' | 'canceling' | 'failed' | 'completed' | 'canceled';

/**
 * What a job remembers besides its columns: the request, the disc and what the pipeline found. Every
 * key the code reads or writes is declared here; coordinator/jobs/job-meta.ts checks each one once,
 * where a row is read (a value of the wrong type is dropped), and keeps keys it does not know (rows of
 * older or newer versions).
 */
export interface JobMeta {
  /**
   * A title encoded in chunks by several agents (issue 41): the video frames each node has encoded
   * (finished chunks and the running ones' last reports), by node name.
   */
  chunk_frames?: Record<string, number>;
  poster_path?: string;
  titles?: number[];
  transcode_node?: string;
  work_dir?: string;
  rip_fertig?: boolean;
  /** The disc's identity (`dvd:…`, `aacs:…`, `mb:…`, `files:…`, or label+size without a colon): its history, pre-scan and corrections hang on it. */
  fingerprint?: string;
  /** The disc's label+size fingerprint (records made before content ids are keyed by it); absent on older jobs. */
  label_fingerprint?: string;
  /** The ids the agent read of the disc when the job was made; null when it read none, absent on older jobs. */
  disc_ids?: DiscIds | null;
  year?: number | null;
  series?: string | null;
  season?: number | null;
  main_feature_only?: boolean;
  disc_type?: string;
  disc_label?: string;
  /** The language choice of the job (ISO 639-2/T), kept by retries. */
  audio_languages?: string[];
  subtitle_languages?: string[];
  /** The title's original language from the metadata lookup. */
  original_language?: string;
  /** The streams of each finished file (from the transcode's scan of its output). */
  streams?: FileStreams[];
  /** Who named the job when it was made: the request, the disc's lookup, or its label. */
  title_source?: 'request' | 'lookup' | 'label';
  /** Who answered the disc's lookup (tmdb, jikan, omdb, override, label, none) and how sure it was. */
  metadata_source?: string;
  confidence?: number;
  overview?: string;
  tmdb_id?: number;
  imdb_id?: string;
  /** Series discs: the disc's number in the season set. */
  disc_number?: number;
  /** Series jobs: the season's episodes with their runtimes (TMDB), for the agent's episode matcher. */
  episodes?: EpisodeRuntime[];
  /** Audio CDs: the album the files are named by, and the disc's MusicBrainz id. */
  album?: AlbumInfo;
  musicbrainz_disc_id?: string;
  /** The rip's files in the raw folder (rip_done). */
  raw_files?: string[];
  /** The finished files, relative to the output folder (a metadata correction renames exactly these). */
  output_files?: string[];
  /** The transcode guessed the episode numbers (no runtimes to match). */
  episodes_guessed?: boolean;
  /** The job whose rip this job runs again (retry-rip). */
  retry_of?: string;
  /** How many read errors the ripper reported in this job's rip (absent: none, or not ripped yet); the UI offers a careful re-read then. */
  read_errors?: number;
  /** The rip is a careful re-read (retry-rip with careful: true). */
  careful?: boolean;
  /** Per raw file (same order as raw_files): the title it was ripped from, its source and, on a recognised disc, its role. */
  ripped_titles?: RippedTitle[];
  /** A recognised movie disc with titles in the library already: the folder they are in, where this job files the missing ones. */
  library_folder?: string;
  /** Audio CDs: each track's AccurateRip checksums and the database's verdict (job_done). */
  accuraterip?: AccurateRipReport;
  /** A disc of a box-set session: the session's id (GET /sessions). */
  session_id?: string;
  /** A disc of a box-set session: the episode number its first file continues with (set when its rip is done). */
  first_episode?: number;
  /** When the rip started (rip_started), ISO time; absent on jobs made before it was recorded. */
  rip_started_at?: string;
  /** How long the rip took in seconds (rip_started to rip_done, or to job_done without a transcode stage). */
  rip_seconds?: number;
  /** When the transcode started (transcode_started, the last one when it ran again), ISO time. */
  transcode_started_at?: string;
  /** How long the transcode took in seconds (transcode_started to job_done). */
  transcode_seconds?: number;
  /** Bytes of the rip's raw files, measured by the coordinator at rip_done; absent when it could not see them, and on older jobs. */
  raw_bytes?: number;
  /** Bytes of the finished files, measured by the coordinator at job_done; absent when it could not see them, and on older jobs. */
  output_bytes?: number;
}

/** GET /jobs, GET /jobs/{id}: one job. */
export interface Job {
  id: string;
  title: string;
  status: JobStatusName;
  progress: number;
  output_path: string | null;
  target_dir: string | null;
  meta: JobMeta | null;
  /** The raw rip is still there, so the job can be transcoded again. */
  can_retry: boolean;
  eta_sekunden: number | null;
  eta_text: string | null;
  device: string | null;
  node: string | null;
  transcode_node: string | null;
  phase: Phase | null;
  error: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** A line of a job's log. */
export interface JobLogLine {
  ts: string;
  level: string;
  message: string;
}

/** GET /jobs/{id}/detail: the job with its disc, raw rip, languages, streams and log. */
export interface JobDetail extends Job {
  /** The disc in the job's drive when it is still the job's disc. */
  disc: DiscInfo | null;
  raw: { state: 'present' | 'absent' | 'unclear'; path: string | null; size_bytes: number | null; checked_at: string | null };
  audio_languages: string[] | null;
  subtitle_languages: string[] | null;
  streams: FileStreams[];
  logs: JobLogLine[];
}

// ------------------------------------------------------------------ drives and discs

/** Audio CDs: another MusicBrainz release with the same disc id. */
export interface AlbumSuggestion {
  release_id: string;
  artist: string;
  album: string;
  year: number | null;
  country: string | null;
  disc_number: number;
  exact: boolean;
}

/** What the pre-scan calls a disc. */
export type DiscKindGuess = 'movie' | 'series' | 'music' | 'unknown';

/** The disc object of GET /devices. */
export interface Disc {
  title: string;
  label: string;
  year: number | null;
  type: DiscInfo['type'];
  size_bytes: number;
  /** The disc's identity: `dvd:…`, `aacs:…`, `mb:…`, `files:…`, or (nothing could be read, older agents) label+size. */
  fingerprint: string;
  /** Label+size (16 hex digits): the key of records made before content ids; null when unknown. */
  label_fingerprint: string | null;
  /** The ids the agent read of the disc's content; null from older agents. */
  ids: DiscIds | null;
  confidence: number | null;
  poster: string | null;
  /** The poster as Ripwerk serves it (/api/posters/<key>), fetched once from the movie database. */
  poster_url: string | null;
  already_ripped: boolean;
  audio_tracks: number | null;
  /** What the pre-scan found: movie, series, music or unknown; a series' season from the label. */
  kind: DiscKindGuess | null;
  season: number | null;
  /** The TMDB id of the match, for the season runtimes of a series. */
  tmdb_id: number | null;
  /** Audio CDs: artist, album, year, tracks and MusicBrainz ids, and where they came from (album.source). */
  album: AlbumInfo | null;
  /** Audio CDs: the other MusicBrainz releases with this disc id. */
  suggestions: AlbumSuggestion[];
  /** Who answered the disc's lookup: thediscdb, tmdb, jikan, omdb, musicbrainz, override, label, none; null before the pre-scan. */
  metadata_source: string | null;
  /** Set when a disc database recognised the disc exactly by its content ids (no guess from a title). */
  recognised: DiscRecognition | null;
  /** The disc's titles as the disc database knows them, each with its role and whether it is in the library; [] when none knows them. */
  titles: KnownDiscTitle[];
  /** How many titles of each kind the disc has and how many of them are in the library; null when its titles are not known. */
  library: DiscLibrarySummary | null;
  /** The latest finished rip of this disc (its history), with the name it was filed as; null when it was never ripped. */
  previous_rip: PreviousRip | null;
  /** When the coordinator saw this disc go into the drive (ISO time); null when not known. A job made before it ripped an earlier insert. */
  inserted_at: string | null;
}

/** A disc's latest finished rip: when, and the name and folder it was filed as (the job's, as corrected since). */
export interface PreviousRip {
  /** The job; null when the job was deleted since (the history keeps the rest). */
  job_id: string | null;
  /** When its rip finished. */
  ripped_at: string;
  title: string;
  year: number | null;
  series: string | null;
  season: number | null;
  /** The folder the job filed into; null when not known (a deleted job). */
  target_dir: string | null;
  output_path: string | null;
}

/** How a disc was recognised exactly. */
export interface DiscRecognition {
  source: 'thediscdb';
  /** The offline copy (setting thediscdbMirror) or the live API. */
  from: 'mirror' | 'api';
  matched_by: 'content_hash' | 'global_disc_id';
  /** TheDiscDB's slug of the release ("2011-dvd") and the disc's number in it. */
  release: string | null;
  disc_number: number | null;
}

/** A title of a recognised disc (evidence and role, shared/disc-titles.ts) with its state. */
export interface KnownDiscTitle extends DiscTitle {
  /** A finished job of this disc ripped the title (same source, segments, duration or size). */
  in_library: boolean;
  /** The automatic rip (and the dialog's preselection) takes it: a kind the setting ripTitleKinds wants, not in the library. */
  wanted: boolean;
}

export interface TitleCount {
  total: number;
  in_library: number;
}

/** Per kind of title: how many the disc has and how many are in the library. */
export interface DiscLibrarySummary {
  main_feature: TitleCount;
  episodes: TitleCount;
  extras: TitleCount;
}

/** GET /devices: one drive of a worker. */
export interface Device extends Omit<DriveState, 'disc'> {
  /** `<WORKER_NAME>-<drive>`. */
  name: string;
  worker: string | null;
  worker_online: boolean;
  /** The pending or processing job ripping from this drive. */
  busy_job: string | null;
  disc: Disc | null;
}

/** GET /devices/{name}/tracks: the last title scan of a drive. */
export interface DeviceTracks {
  device: string;
  scanned_at: string | null;
  scanning: boolean;
  error: string | null;
  /**
   * The scanned titles; on a recognised disc each one TheDiscDB knows carries its role, in_library and
   * wanted; on a movie disc it does not know, the main feature its reasons and the titles an automatic
   * rip leaves why.
   */
  tracks: ScannedDiscTrack[];
}

/** A scanned title, with what the disc database says of it when the disc was recognised. */
export interface ScannedDiscTrack extends Track {
  role?: TitleRole | null;
  in_library?: boolean;
  wanted?: boolean;
  /** A movie disc TheDiscDB does not know: on the main feature only, why it is (shared/main-feature.ts); absent on every other title. */
  main_feature?: MainFeatureReason[];
  /** A movie disc TheDiscDB does not know: an automatic rip leaves this title, why and for which title; absent when it takes it. */
  left?: LeftTitle;
}

// ------------------------------------------------------------------ workers

/** The disc kinds a worker can rip, each with what is missing. */
export type DiscKind = 'audio_cd' | 'dvd' | 'dvd_protected' | 'bluray' | 'uhd';

/** What is missing, as a code the UI translates: a tool, the libdvdcss library, a key store, or "native" (a native worker never rips). */
export type MissingPart = 'abcde' | 'cdparanoia' | 'lsdvd' | 'dvdbackup' | 'ffmpeg' | 'libdvdcss' | 'makemkvcon' | 'keystore' | 'native';

export interface DiscKindAbility {
  can: boolean;
  /** The first thing missing; null when `can` is true. */
  missing: MissingPart | null;
}

export type DiscKinds = Record<DiscKind, DiscKindAbility>;

/** GET /capabilities: one worker. */
export interface Worker {
  name: string;
  node: string;
  host: string | null;
  ip: string | null;
  online: boolean;
  /** Transcode slots of the worker. */
  slots: number | null;
  encoders: string[];
  tools: Record<string, string | null>;
  key_source: string | null;
  schluessel: number;
  rip_backend: 'makemkv' | 'open-dvd' | 'none' | null;
  transcode_only: boolean | null;
  /** A native worker (desktop without containers): transcode queue only. */
  native: boolean;
  disc_kinds: DiscKinds;
  last_seen: string | null;
  last_ping: string | null;
  /** Slots its rips and transcodes take now (a transcode whose encoder has finished takes none). */
  slots_used: number;
  /** What it runs now: its open rips and transcodes, oldest first. */
  jobs: WorkerJob[];
}

/** One rip or transcode a worker runs now, or one chunk of a long title it encodes (GET /capabilities, `jobs`). */
export interface WorkerJob {
  id: string;
  title: string;
  phase: Phase;
  status: JobStatusName;
  /** Percent of the phase, 0..100; of a chunk: percent of the chunk's frames. */
  progress: number;
  /** The encoder's speed in frames per second (HandBrake's rate), null when the tool does not tell it or has not measured it yet; of a chunk: its frames done over the time since it was handed out. */
  fps: number | null;
  /** When the coordinator sent it to the worker (a chunk: when it was handed out). */
  started_at: string;
  elapsed_seconds: number;
  /** Remaining seconds of the phase (as the job's eta_sekunden), null without an honest estimate; of a chunk: its frames left at its rate, null before 60 s or its first frames. */
  eta_seconds: number | null;
  /** A transcode whose encoder has finished: it checks its output, and its slot is free. */
  encoded: boolean;
  /** Present when this is one chunk of a title encoded on several workers (issue 41): which of the title's chunks, and its frames. */
  chunk?: WorkerChunk;
}

/** The chunk a worker encodes (WorkerJob.chunk). */
export interface WorkerChunk {
  /** The chunk's place in its title, 1 = the first. */
  number: number;
  /** How many chunks the title was cut into. */
  of: number;
  /** The index of the title among the job's files (0 = the first), for a job with several titles. */
  title_index: number;
  frames: number;
  frames_done: number;
}

/** GET /transcode-queue: one transcode that waits for a worker, in the order they are handed out. */
export interface QueuedTranscode {
  position: number;
  job_id: string;
  title: string;
  queued_at: string;
  waiting_seconds: number;
  /** The worker chosen for it (its node), or null for any. */
  preferred_node: string | null;
  /** The workers (names) that may take it now: the chosen one while it is online, else every online worker with an encoder. */
  may_take: string[];
}

// ------------------------------------------------------------------ storage

/** Total and free bytes of the file system holding a folder. */
export interface DiskSpace {
  name: string;
  path: string;
  total_bytes: number | null;
  free_bytes: number | null;
  /** Set below 60 GB free, or when the folder cannot be read. */
  warning: string | null;
}

/** GET /storage-targets: one folder a job can write to. */
export interface StorageTarget extends DiskSpace {
  exists: boolean;
  /** The folder sits on a file system mounted into the media root (or is that mount point). */
  mounted: boolean;
  /** That file system is a network share. */
  network: boolean;
  /** The storage mount (GET /storage-mounts) holding it. */
  mount?: string;
}

/** GET /storage-mounts: one network share. Credentials never appear, only whether there are some. */
export interface Mount {
  name: string;
  protocol: 'SMB' | 'NFS';
  host: string;
  port: number | null;
  share: string;
  source: string;
  mount_point: string;
  mounted: boolean;
  reachable: boolean;
  read_only: boolean;
  has_credentials: boolean;
  free_bytes: number | null;
  total_bytes: number | null;
  /** The read-only warning, or why the mount is not reachable (English). */
  warning: string | null;
  /** The same warning as a code of shared/reasons.ts with its parameters, for a client that words it in its own language. */
  warning_code: 'mountNotMounted' | 'mountNotMountedBecause' | 'mountNotAnswering' | 'mountReadOnly' | null;
  warning_params: Record<string, string> | null;
  last_error: string | null;
}

/** GET /worker-setup/pfad-map: what an external worker puts into RIPWERK_PATH_MAP. */
export interface PathMapAdvice {
  variable: 'RIPWERK_PATH_MAP';
  /** The whole value, ready to paste; "" when nothing needs mapping. */
  value: string;
  entries: { name: string; protocol: 'SMB' | 'NFS'; mount_point: string; source: string; value: string }[];
  /** Plain words: what to do with the value, or why there is none and the remedy. */
  hint: string;
}


// ------------------------------------------------------------------ system

/** GET /system/keystore. */
export interface KeystoreStatus {
  installed: boolean;
  /** Number of hashed-key files: the disc keys the coordinator hands to every worker. */
  schluessel: number;
  files: string[];
  sha256: string | null;
  installed_at: string | null;
}

/** GET /system/keydb. */
export interface KeydbStatus {
  present: boolean;
  file: 'KEYDB.cfg';
  size_bytes: number | null;
  modified_at: string | null;
  /** Non-empty lines that are not comments. */
  entries: number | null;
}

/** GET /system/aacs-dumps: one dump file. */
export interface DumpFile {
  name: string;
  size_bytes: number;
  modified_at: string;
}

/** GET /system/updates: one tool (the answer is `{ tools: UpdateEntry[] }`). */
export interface UpdateEntry {
  tool: string;
  installed: string | null;
  latest: string | null;
  update_available: boolean | null;
  source: string;
  checked_at: string | null;
  /** Set when the last attempt failed: the answer shown is the one from checked_at (stale), or none. */
  error: string | null;
}

/** The last notification the webhook sent. */
export interface NotificationOutcome {
  at: string;
  ok: boolean;
  message: string;
}

/** GET /system/info. */
export interface SystemInfo {
  /** The coordinator's Node.js version. */
  node: string;
  workers: { name: string; node: string; online: boolean; tools: Record<string, string | null>; disc_kinds: DiscKinds }[];
  disks: DiskSpace[];
  keys: { keystore: KeystoreStatus; keydb: KeydbStatus; ripper_app_key: 'set' | 'not set' };
  webhook: { configured: boolean; kind: string | null; last: NotificationOutcome | null };
  media_server: { type: string | null; configured: boolean };
}

/** The mount guard's last round (GET /health/vorraete `mount_guard`). */
export interface GuardState {
  active: boolean;
  mounts: number;
  alter_sekunden: number | null;
  /** True when the last round found a mount that was not reachable. */
  mit_treffer: boolean;
  unreachable: string[];
  repaired: string[];
  /** Why an unreachable mount was left alone in the last round. */
  held_back: string | null;
}

/** GET /logs: one entry, newest first. */
export interface LogEntry {
  ts: string;
  level: 'info' | 'warn' | 'error';
  source: string;
  job_id: string | null;
  message: string;
}

/** GET /browse: a folder under the media root. */
export interface BrowseListing {
  path: string;
  root: string;
  parent: string | null;
  entries: { name: string; type: 'dir' | 'file'; size: number | null }[];
  /** More entries than the answer holds. */
  truncated: boolean;
}

// ------------------------------------------------------------------ metadata

/** GET /metadata/search: one answer of a metadata database. */
export interface Match {
  source: 'tmdb' | 'jikan' | 'omdb' | 'thediscdb';
  /** The source's own id: TMDB's number, MyAnimeList's mal_id, the IMDb id for OMDb. */
  id: string;
  kind: 'movie' | 'series';
  title: string;
  original_title: string | null;
  /** ISO 639-2/T of the title's original language (TMDB's original_language), null when the source does not say. */
  original_language?: string | null;
  year: number | null;
  /** TMDB: relative to its image base (/abc.jpg); OMDb and Jikan: an absolute URL. */
  poster_path: string | null;
  /** Always absolute, for showing it. */
  poster_url: string | null;
  overview: string | null;
  tmdb_id: number | null;
  imdb_id: string | null;
  /** 0..1 against the title searched for; set by the chain and the search route. */
  similarity?: number;
}

/** GET /metadata/search: the answers, each scored against the title searched for, best first. */
export type ScoredMatch = Match & { similarity: number };

/** GET /metadata/status: one metadata source. */
export interface SourceStatus {
  source: Match['source'];
  configured: boolean;
  ok: boolean;
  /** TMDB only: which kind of key is in use. */
  auth?: 'v3' | 'v4' | null;
  message: string;
  latency_ms: number | null;
}

/** GET /metadata/search. */
export interface SearchAnswer {
  query: string;
  results: ScoredMatch[];
  /** Sources that could not answer, with the reason. */
  errors: { source: Match['source']; message: string }[];
}

// ------------------------------------------------------------------ statistics

/** A failed or canceled job's reason, grouped into a few kinds (shared/failure-kinds.ts failureKind). */
export type FailureKind = 'output_proof' | 'read_error' | 'encoder' | 'no_space' | 'disc_key' | 'worker_lost' | 'canceled' | 'other';

/** The disc kinds the statistics count apart: the job's meta.disc_type, anything else as unknown. */
export type StatsDiscKind = 'dvd' | 'bluray' | 'uhd' | 'cd' | 'unknown';

/** Times of one stage over the jobs whose time is known. */
export interface StageTimes {
  /** Jobs with a known time of this stage. */
  jobs: number;
  median_seconds: number | null;
  total_seconds: number;
}

/** GET /stats: history figures of the jobs that ended in the last `weeks` ISO weeks (UTC). */
export interface JobStats {
  weeks: number;
  /** Monday of the first week counted (YYYY-MM-DD) and the moment the figures were made. */
  from: string;
  generated_at: string;
  /** Oldest week first; every week of the span, also those without jobs. */
  per_week: { week: string; starts: string; completed: number; failed: number; canceled: number }[];
  /** Completed jobs per disc kind with their rip and transcode times; kinds without jobs are left out. */
  per_kind: { kind: StatsDiscKind; jobs: number; rip: StageTimes; transcode: StageTimes }[];
  /** Completed jobs whose raw and finished bytes are both known; the others are counted as without_sizes. */
  space: { jobs: number; raw_bytes: number; output_bytes: number; saved_bytes: number; without_sizes: number };
  /** Failed and canceled jobs by kind of reason, most frequent first, each with its latest reason as an example. */
  failures: { kind: FailureKind; count: number; example: string | null; job_id: string }[];
}
