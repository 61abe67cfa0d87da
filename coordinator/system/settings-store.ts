import path from 'node:path';
import { parseLanguageList } from '../../shared/languages.js';
import { RIP_TITLE_KINDS, type RipTitleKind } from '../../shared/disc-titles.js';
import { CHUNK_MIN_MINUTES_MAX, DEFAULT_CHUNK_MIN_MINUTES } from '../../shared/chunking.js';
import { DEFAULT_MAX_SIMILAR_TITLES, MAX_SIMILAR_TITLES_MAX, MAX_SIMILAR_TITLES_MIN } from '../../shared/main-feature.js';
import type { Db } from '../../shared/sqlite.js';

/** Every setting with its default. Names of the spec are kept (workDir, transcodeEnabled, ...). */
export const SETTING_DEFAULTS = {
  workDir: '',
  transcodeEnabled: true,
  keepOriginal: false,
  autoRipStart: false,
  ripperAppKey: '',
  transcodePreset: 'Fast 1080p30',
  autoEject: true,
  mainFeatureOnly: false,
  mediaServerType: '',
  mediaServerUrl: '',
  mediaServerKey: '',
  webhookUrl: '',
  webhookKind: 'auto',
  tmdbApiKey: '',
  omdbApiKey: '',
  quickPickMovies: 'Filme',
  quickPickSeries: 'Serien',
  quickPickMusic: 'Musik',
  /** ISO 3166-1 country whose release of an audio CD is preferred when MusicBrainz knows several. */
  musicCountry: 'DE',
  setupComplete: false,
  homeAssistantDiscovery: false,
  homeAssistantPrefix: 'homeassistant',
  /** Audio languages the transcode keeps, ISO 639-2 in order of preference (the first found is the default track). */
  audioLanguages: ['deu', 'eng'],
  /** Subtitle languages kept as tracks (never burned in). */
  subtitleLanguages: ['deu'],
  /** Multichannel AC-3, E-AC-3, DTS, DTS-HD and TrueHD pass through untouched. */
  keepSurround: true,
  /** A stereo AAC track beside each passed-through surround track. */
  stereoCompanion: false,
  /** Also keep the title's original-language audio when the metadata lookup knows it. */
  originalLanguage: true,
  /** Burn a forced subtitle track of the default audio language into the picture. */
  burnForcedSubtitles: false,
  /** Keep the commentary tracks (audio, and commentary subtitles) of the kept languages; off: left out. */
  keepCommentary: false,
  /** Keep the audio description tracks (for the visually impaired) of the kept languages; off: left out. */
  keepAudioDescription: false,
  /** A rip without chosen titles leaves titles shorter than this out (seconds; like MakeMKV's minimum length). */
  minTitleSeconds: 120,
  /** An automatic rip of a movie takes at most this many titles of near-identical length (playlist obfuscation: the best one, the rest left). */
  maxSimilarTitles: DEFAULT_MAX_SIMILAR_TITLES,
  /** Webhooks may go to loopback, link-local and this machine's addresses (off: refused). */
  allowPrivateWebhooks: false,
  /** Folder of an offline copy of TheDiscDB's data repository (absolute; empty: none); checked on save to exist. */
  thediscdbMirror: '',
  /** Which titles of a disc TheDiscDB recognised the automatic rip takes (and the dialog preselects): main_feature, episodes, extras. */
  ripTitleKinds: ['main_feature', 'episodes', 'extras'],
  /**
   * A title longer than this (minutes, decimals taken: 0.5 is 30 s) is encoded in chunks by every free
   * agent that reads its raw file, unless the job chose its transcode node; 0: every title whole (issue 41).
   */
  chunkMinMinutes: DEFAULT_CHUNK_MIN_MINUTES,
} as const;

type SettingValue<T> = T extends boolean ? boolean : T extends readonly string[] ? readonly string[] : T extends number ? number : string;
export type Settings = { -readonly [K in keyof typeof SETTING_DEFAULTS]: SettingValue<(typeof SETTING_DEFAULTS)[K]> };
export type SettingName = keyof Settings;

/** Settings whose values never reach an API answer or a log line. */
export const SECRET_SETTINGS: ReadonlySet<SettingName> = new Set(['ripperAppKey', 'mediaServerKey', 'tmdbApiKey', 'omdbApiKey', 'webhookUrl']);
export const SECRET_MASK = '********';

/** Settings that are URLs: credentials written into them (http://user:password@kodi:8080) are shown masked. */
export const URL_SETTINGS: ReadonlySet<SettingName> = new Set(['mediaServerUrl']);

const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*)@/i;

/** The URL with the password of its user part masked (a user part without a password is masked whole: it may be a token). */
export function maskUrlCredentials(url: string): string {
  return url.replace(USERINFO, (_all, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return `${scheme}${colon >= 0 ? `${userinfo.slice(0, colon)}:${SECRET_MASK}` : SECRET_MASK}@`;
  });
}

/** The host name of a URL setting, lower case; null for an empty or unparsable one. */
export function urlHost(url: string): string | null {
  return URL.canParse(url) ? new URL(url).hostname.toLowerCase() || null : null;
}

/**
 * A URL sent back with its credentials masked gets the stored credentials again, but only for the
 * host they were saved for (port, path and user name may change): a password kept for another host
 * would be sent there (issue 42). Throws a SettingsError when nothing is stored to put back, or the
 * stored password belongs to another host.
 */
export function restoreMaskedUrl(name: string, incoming: string, stored: string): string {
  const m = USERINFO.exec(incoming);
  if (!m) return incoming;
  const userinfo = m[2];
  const colon = userinfo.indexOf(':');
  const maskedPassword = colon >= 0 && userinfo.slice(colon + 1) === SECRET_MASK;
  if (!maskedPassword && userinfo !== SECRET_MASK) return incoming;
  const old = USERINFO.exec(stored)?.[2];
  if (old === undefined) throw new SettingsError(`${name} holds the mask ${SECRET_MASK} where its password belongs, and none is stored: type the password`);
  const [from, to] = [urlHost(stored), urlHost(incoming)];
  if (from !== to) throw new SettingsError(`${name} holds the mask ${SECRET_MASK} where its password belongs, but the stored password is for ${from}, not ${to}: type the password for the new host`);
  const oldColon = old.indexOf(':');
  const restored = userinfo === SECRET_MASK ? old : `${userinfo.slice(0, colon)}:${oldColon >= 0 ? old.slice(oldColon + 1) : ''}`;
  return `${m[1]}${restored}@${incoming.slice(m[0].length)}`;
}

/**
 * The media server key belongs to the host of mediaServerUrl it was saved with: a change of that
 * host (port and path may change) must bring its own key, else the key would go to the new host at
 * the next library refresh (issue 42). Refused with a SettingsError naming both hosts; an empty
 * mediaServerKey sent along removes the key. An emptied mediaServerUrl takes the key along, so a
 * URL set later cannot inherit it. Returns the values to store.
 */
export function keepKeyForHost(values: Partial<Settings>, stored: Settings): Partial<Settings> {
  if (values.mediaServerUrl === undefined || values.mediaServerKey !== undefined || !stored.mediaServerKey) return values;
  const [from, to] = [urlHost(stored.mediaServerUrl), urlHost(values.mediaServerUrl)];
  if (from === to) return values;
  if (to === null) return { ...values, mediaServerKey: '' };
  // A key saved while no URL was stored: the first host it is used with is its host.
  if (from === null) return values;
  throw new SettingsError(`mediaServerKey was saved for the media server at ${from}: send the key for ${to} together with the new mediaServerUrl (or an empty mediaServerKey to remove it)`);
}

export function isSettingName(name: string): name is SettingName {
  return Object.prototype.hasOwnProperty.call(SETTING_DEFAULTS, name);
}

export class SettingsError extends Error {}

/** A non-empty list of title kinds without repeats, in the order RIP_TITLE_KINDS names them. */
function ripTitleKinds(value: unknown): RipTitleKind[] {
  const known = RIP_TITLE_KINDS.join(', ');
  if (!Array.isArray(value)) throw new SettingsError(`setting "ripTitleKinds" must be a list of title kinds (${known})`);
  const bad = value.findIndex((v) => typeof v !== 'string' || !(RIP_TITLE_KINDS as readonly string[]).includes(v));
  if (bad >= 0) throw new SettingsError(`setting "ripTitleKinds": "${String(value[bad]).slice(0, 40)}" is no title kind (${known})`);
  if (value.length === 0) throw new SettingsError(`setting "ripTitleKinds" must name at least one title kind (${known}): a recognised disc would otherwise never be ripped automatically`);
  return RIP_TITLE_KINDS.filter((k) => value.includes(k));
}

/** Validates one value against the type of its default. */
export function validateSetting(name: string, value: unknown): Settings[SettingName] {
  if (!isSettingName(name)) throw new SettingsError(`unknown setting "${name}"`);
  if (name === 'ripTitleKinds') return ripTitleKinds(value);
  if (Array.isArray(SETTING_DEFAULTS[name])) {
    // The list settings are language lists.
    const list = parseLanguageList(value, `setting "${name}"`);
    if (!list.ok) throw new SettingsError(list.reason);
    return list.codes as Settings[SettingName];
  }
  if (name === 'mediaServerType' && typeof value === 'string') {
    // People write the product's name ("Jellyfin", " Plex "): the kind is stored as the lower-case word
    // the route checks against (jellyfin, emby, plex, kodi or empty).
    return value.trim().toLowerCase();
  }
  if (name === 'musicCountry') {
    if (typeof value !== 'string' || !/^[A-Za-z]{2}$/.test(value.trim())) throw new SettingsError('setting "musicCountry" must be a two-letter country code (ISO 3166-1, e.g. "DE")');
    return value.trim().toUpperCase();
  }
  if (name === 'thediscdbMirror') {
    if (typeof value !== 'string') throw new SettingsError('setting "thediscdbMirror" must be a folder path (a string; empty switches the offline copy off)');
    const folder = value.trim();
    if (folder !== '' && !path.isAbsolute(folder)) throw new SettingsError(`setting "thediscdbMirror" must be an absolute folder path, got "${folder}"`);
    if (folder.length > 4096) throw new SettingsError('setting "thediscdbMirror" is longer than 4096 characters');
    return folder;
  }
  if (name === 'maxSimilarTitles') {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < MAX_SIMILAR_TITLES_MIN || value > MAX_SIMILAR_TITLES_MAX) {
      throw new SettingsError(`setting "maxSimilarTitles" must be a whole number of titles from ${MAX_SIMILAR_TITLES_MIN} to ${MAX_SIMILAR_TITLES_MAX}`);
    }
    return value;
  }
  if (name === 'chunkMinMinutes') {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > CHUNK_MIN_MINUTES_MAX) {
      throw new SettingsError(`setting "chunkMinMinutes" must be a number of minutes from 0 (never split a title) to ${CHUNK_MIN_MINUTES_MAX}; decimals are taken (0.5 is 30 seconds)`);
    }
    return value;
  }
  if ((name === 'webhookUrl' || name === 'mediaServerUrl') && typeof value === 'string') {
    // A pasted URL often brings a line break or spaces around it: they go. Inside, they are refused
    // (a URL parser would quietly drop or encode them, and the stored text would not be what is used).
    const url = value.trim();
    if (/[\s\u0000-\u001f\u007f-\u009f]/.test(url)) throw new SettingsError(`setting "${name}" must be one URL without spaces or control characters inside`);
    if (url.length > 4096) throw new SettingsError(`setting "${name}" is longer than 4096 characters`);
    return url;
  }
  const expected = typeof SETTING_DEFAULTS[name];
  if (expected === 'number' && (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 36_000)) {
    throw new SettingsError(`setting "${name}" must be a whole number of seconds from 0 to 36000`);
  }
  if (typeof value !== expected) throw new SettingsError(`setting "${name}" must be a ${expected}`);
  if (typeof value === 'string' && value.length > 4096) throw new SettingsError(`setting "${name}" is longer than 4096 characters`);
  return value as Settings[SettingName];
}

export class SettingsStore {
  /**
   * The parsed settings, kept until the next write: they are read on hot paths (every MQTT packet the
   * embedded broker authorises asks for the Home Assistant prefix, every queued transcode for the
   * preset), and the table also holds large internal entries (tracks:<device>) skipped on each read.
   * Every write to the table goes through this store.
   */
  private cache: Settings | null = null;
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      all: db.prepare<[], { key: string; value: string }>('SELECT key, value FROM settings'),
      getRaw: db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?'),
      put: db.prepare<[string, string]>('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
    };
  }

  /** Every setting (a copy: the caller may change it; the lists are read-only by their type). */
  all(): Settings {
    return { ...this.read() };
  }

  get<K extends SettingName>(name: K): Settings[K] {
    return this.read()[name];
  }

  private read(): Settings {
    if (this.cache) return this.cache;
    const out: Record<string, unknown> = { ...SETTING_DEFAULTS };
    for (const row of this.stmts.all.all()) {
      // Internal keys (tracks:<device>, ...) live in the same table but are no settings.
      if (!isSettingName(row.key)) continue;
      try {
        out[row.key] = JSON.parse(row.value);
      } catch {
        out[row.key] = row.value;
      }
    }
    this.cache = out as Settings;
    return this.cache;
  }

  set(values: Partial<Settings>): void {
    this.cache = null;
    this.db.transaction(() => {
      for (const [k, v] of Object.entries(values)) this.stmts.put.run(k, JSON.stringify(v));
    })();
  }

  /** Free-form keys such as tracks:<device>. */
  getRaw(key: string): unknown {
    const row = this.stmts.getRaw.get(key);
    if (!row) return undefined;
    try {
      return JSON.parse(row.value);
    } catch {
      return undefined;
    }
  }

  setRaw(key: string, value: unknown): void {
    if (isSettingName(key)) this.cache = null;
    this.stmts.put.run(key, JSON.stringify(value));
  }

  /** The settings as the API shows them: secrets masked, and credentials inside URLs too. */
  publicView(): Record<string, unknown> {
    const all = this.all() as Record<string, unknown>;
    for (const name of SECRET_SETTINGS) if (all[name]) all[name] = SECRET_MASK;
    for (const name of URL_SETTINGS) if (typeof all[name] === 'string') all[name] = maskUrlCredentials(all[name]);
    return all;
  }
}
