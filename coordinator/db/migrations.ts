import type { Migration } from '../../shared/sqlite.js';

export const coordinatorMigrations: Migration[] = [
  {
    version: 1,
    name: 'jobs, settings, history, workers, transcode queue, commands, events, logs',
    up: `
      CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        status TEXT NOT NULL,
        progress REAL NOT NULL DEFAULT 0,
        output_path TEXT,
        target_dir TEXT,
        meta TEXT,
        device TEXT,
        node TEXT,
        transcode_node TEXT,
        error TEXT,
        phase TEXT,
        eta_points TEXT,
        raw_state TEXT,
        raw_path TEXT,
        raw_size INTEGER,
        raw_checked_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        finished_at TEXT
      );
      CREATE INDEX jobs_status ON jobs(status);
      CREATE INDEX jobs_created ON jobs(created_at);
      CREATE TABLE job_logs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id TEXT NOT NULL,
        ts TEXT NOT NULL,
        level TEXT NOT NULL,
        message TEXT NOT NULL
      );
      CREATE INDEX job_logs_job ON job_logs(job_id);
      CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        fingerprint TEXT NOT NULL,
        title TEXT NOT NULL,
        job_id TEXT NOT NULL,
        finished_at TEXT NOT NULL
      );
      CREATE INDEX history_fp ON history(fingerprint);
      CREATE TABLE workers (
        node TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        host TEXT,
        ip TEXT,
        online INTEGER NOT NULL DEFAULT 0,
        status TEXT,
        capabilities TEXT,
        last_seen TEXT,
        last_ping TEXT,
        offline_since TEXT
      );
      CREATE TABLE transcode_queue (
        id TEXT PRIMARY KEY,
        job_id TEXT NOT NULL,
        args TEXT NOT NULL,
        preferred_node TEXT,
        state TEXT NOT NULL,
        assigned_node TEXT,
        created_at TEXT NOT NULL,
        assigned_at TEXT
      );
      CREATE INDEX transcode_queue_state ON transcode_queue(state, created_at);
      CREATE TABLE commands (
        id TEXT PRIMARY KEY,
        node TEXT NOT NULL,
        task TEXT NOT NULL,
        job_id TEXT,
        payload TEXT NOT NULL,
        state TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX commands_node_state ON commands(node, state);
      CREATE TABLE processed_events (event_id TEXT PRIMARY KEY, ts TEXT NOT NULL);
      CREATE TABLE logs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts TEXT NOT NULL,
        level TEXT NOT NULL,
        source TEXT NOT NULL,
        job_id TEXT,
        message TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'pre-scan cache and the last disc seen per device',
    up: `
      CREATE TABLE prescan_cache (
        fingerprint TEXT PRIMARY KEY,
        identity TEXT NOT NULL,
        confidence REAL NOT NULL,
        expires_at TEXT NOT NULL
      );
      CREATE TABLE device_discs (
        device TEXT PRIMARY KEY,
        fingerprint TEXT,
        seen_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'metadata corrections remembered by disc fingerprint',
    up: `
      CREATE TABLE metadata_overrides (
        fingerprint TEXT PRIMARY KEY,
        identity TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'storage mounts the service attaches under the media root',
    up: `
      CREATE TABLE storage_mounts (
        name TEXT PRIMARY KEY,
        protocol TEXT NOT NULL,
        host TEXT NOT NULL,
        port INTEGER,
        share TEXT NOT NULL,
        vers TEXT,
        mount_point TEXT NOT NULL,
        has_credentials INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL,
        read_only INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: 'MusicBrainz answers by disc id (audio CD lookups)',
    up: `
      CREATE TABLE musicbrainz_discs (
        disc_id TEXT PRIMARY KEY,
        releases TEXT NOT NULL,
        fetched_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: 'MQTT credentials of the workers and Home Assistant (password hashes only)',
    up: `
      CREATE TABLE mqtt_credentials (
        username TEXT PRIMARY KEY,
        role TEXT NOT NULL,
        hash TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 7,
    name: 'commands: a transcode whose encoder has finished no longer holds its slot',
    up: `ALTER TABLE commands ADD COLUMN encoded INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    version: 8,
    name: 'commands: a transcode whose encoder ends within seconds may have its successor sent ahead',
    up: `ALTER TABLE commands ADD COLUMN ending INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    version: 9,
    name: 'transcode_queue: looked up by job (every queueing ends the job\'s open rows first), not scanned',
    up: `CREATE INDEX transcode_queue_job ON transcode_queue(job_id, state);`,
  },
  {
    version: 10,
    // The same terms as CommandTable's slot count (state IN its OPEN list, encoded = 0), so SQLite
    // can prove the query's rows are all in the index.
    name: 'commands: the open ones indexed apart, so counting the taken slots (every hand-out does) reads only them, not the week of finished ones',
    up: `CREATE INDEX commands_open ON commands(node, ending) WHERE state IN ('sent','accepted') AND encoded = 0;`,
  },
  {
    version: 11,
    // Issue 36: fingerprints become content identities (dvd:…, aacs:…, mb:…, files:…). The rows
    // written before keep their label+size keys and are found through a disc's label fingerprint
    // (shared/disc-key.ts), so history, prescan_cache and metadata_overrides need no change. The
    // last disc of a device keeps its label fingerprint too: a disc seen once with and once without
    // its ids (the agent updated while it sat in the drive) is then no new insert.
    name: 'device_discs: the label fingerprint of the last disc beside its identity',
    up: `ALTER TABLE device_discs ADD COLUMN label_fingerprint TEXT;`,
  },
  {
    version: 12,
    // Each title a finished job put into the library, with the disc's identity and the title's own
    // source (playlist or DVD title, segment map, duration, size) and role: a disc inserted again
    // finds which of its titles are there already, and the automatic rip takes only the missing ones.
    name: 'library_titles: each ripped title of a disc with its source and role',
    up: `CREATE TABLE library_titles (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      fingerprint TEXT NOT NULL,
      job_id TEXT NOT NULL,
      source_file TEXT,
      segment_map TEXT,
      seconds INTEGER NOT NULL,
      size_bytes INTEGER NOT NULL,
      role TEXT,
      output_file TEXT,
      ripped_at TEXT NOT NULL
    );
    CREATE INDEX library_titles_fingerprint ON library_titles (fingerprint);
    CREATE INDEX library_titles_job ON library_titles (job_id);`,
  },
  {
    version: 13,
    // Issue 40: a box set fed disc after disc. The session and each of its discs live in SQLite only,
    // so a coordinator restart finds them as they were.
    name: 'sessions: box-set and multi-CD sessions and their discs',
    up: `CREATE TABLE sessions (
      id TEXT PRIMARY KEY,
      kind TEXT NOT NULL,
      series TEXT,
      season INTEGER,
      disc_total INTEGER,
      drive TEXT,
      release TEXT,
      origin TEXT NOT NULL,
      state TEXT NOT NULL,
      created_at TEXT NOT NULL,
      ended_at TEXT
    );
    CREATE TABLE session_discs (
      session_id TEXT NOT NULL,
      disc_number INTEGER NOT NULL,
      job_id TEXT NOT NULL,
      state TEXT NOT NULL,
      files INTEGER,
      episode_first INTEGER,
      episode_last INTEGER,
      waiting INTEGER NOT NULL DEFAULT 0,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (session_id, disc_number)
    );
    CREATE INDEX session_discs_job ON session_discs (job_id);`,
  },
  {
    version: 14,
    // Issue 38: a worker credential issued as `keller` acts as node `keller@<host>`, the node of its
    // first login (coordinator/mqtt/agent-node.ts); issuing it anew clears the binding.
    name: 'mqtt_credentials: the node a worker credential is bound to',
    up: `ALTER TABLE mqtt_credentials ADD COLUMN node TEXT;`,
  },
  {
    version: 15,
    // Issue 41: the chunks of a long title, encoded by several agents. A chunk row outlives a
    // coordinator restart, so a chunk handed out before it is still known (and re-queued when its
    // agent is lost); `attempts` counts failed encodes, `frames_done` the agent's last report.
    name: 'transcode_chunks: the chunks of a title encoded by several agents',
    up: `CREATE TABLE transcode_chunks (
      job_id TEXT NOT NULL,
      title INTEGER NOT NULL,
      idx INTEGER NOT NULL,
      lead_node TEXT NOT NULL,
      input TEXT NOT NULL,
      output TEXT NOT NULL,
      preset TEXT NOT NULL,
      cut TEXT NOT NULL,
      frames INTEGER NOT NULL,
      state TEXT NOT NULL,
      node TEXT,
      command_id TEXT,
      handed_at TEXT,
      frames_done INTEGER NOT NULL DEFAULT 0,
      attempts INTEGER NOT NULL DEFAULT 0,
      reason TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (job_id, title, idx)
    );
    CREATE INDEX transcode_chunks_state ON transcode_chunks (state, created_at);
    CREATE UNIQUE INDEX transcode_chunks_command ON transcode_chunks (command_id) WHERE command_id IS NOT NULL;`,
  },
];
