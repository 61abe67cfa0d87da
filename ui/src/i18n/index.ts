/**
 * The UI's language: German or English, from the browser's languages unless the user chose one
 * (remembered in localStorage). t() looks a text up in the chosen catalog; a key that a catalog lacks
 * (possible only for keys built at run time) comes out as ⟦key⟧, which the Chromium test looks for.
 */
import { de, type MessageKey } from './de.js';
import { en } from './en.js';

export type Lang = 'de' | 'en';
export type { MessageKey };
export const LANGS: readonly Lang[] = ['de', 'en'];
export const STORAGE_KEY = 'ripwerk.lang';

const CATALOGS: Record<Lang, Record<string, string>> = { de, en };
type Params = Record<string, string | number>;

/** German for a browser whose first language is German, English for every other; a stored choice wins. */
export function chooseLang(stored: string | null, languages: readonly string[]): Lang {
  if (stored === 'de' || stored === 'en') return stored;
  return /^de\b/i.test(languages[0] ?? '') ? 'de' : 'en';
}

/** The locale for dates and numbers: the browser's own variant of the chosen language (en-GB stays en-GB). */
export function localeFor(lang: Lang, languages: readonly string[]): string {
  return languages.find((l) => l.toLowerCase().split('-')[0] === lang) ?? (lang === 'de' ? 'de-DE' : 'en-US');
}

let current: Lang = 'de';
let currentLocale = 'de-DE';

function browserLanguages(): readonly string[] {
  return typeof navigator === 'undefined' ? [] : navigator.languages?.length ? navigator.languages : [navigator.language];
}

function storedLang(): string | null {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/** Sets the language for t() and the formatters; `remember` stores the user's choice. */
export function setLang(lang: Lang, remember = false): void {
  current = lang;
  currentLocale = localeFor(lang, browserLanguages());
  if (typeof document !== 'undefined') document.documentElement.lang = lang;
  if (remember) {
    try {
      localStorage.setItem(STORAGE_KEY, lang);
    } catch {
      // A browser without storage keeps the choice for this page only.
    }
  }
}

/** The language at start: the stored choice, else the browser's. */
export function initLang(): Lang {
  setLang(chooseLang(storedLang(), browserLanguages()));
  return current;
}

export const lang = (): Lang => current;
export const locale = (): string => currentLocale;

export function isMessageKey(key: string): key is MessageKey {
  return Object.hasOwn(de, key);
}

function fill(text: string, params: Params | undefined): string {
  return params ? text.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m)) : text;
}

/** The text of a key in the chosen language with its {parameters} filled in. */
export function t(key: MessageKey, params?: Params): string {
  const text = CATALOGS[current][key];
  return text === undefined ? `⟦${key}⟧` : fill(text, params);
}

/** The text of a key built at run time (a status, a setting), or null when the catalog has none. */
export function tKnown(key: string, params?: Params): string | null {
  return isMessageKey(key) ? t(key, params) : null;
}

/** A counted text: `${base}.one` or `${base}.other` by the language's plural rule, {n} filled in. */
export function tCount(base: 'drive.audioTracks' | 'drive.moreReleases' | 'eta.minutes' | 'eta.hours' | 'meta.appliedJobs', n: number, params?: Params): string {
  const form = new Intl.PluralRules(currentLocale).select(n) === 'one' ? 'one' : 'other';
  return t(`${base}.${form}`, { ...params, n: number(n) });
}

/** A text whose parameters are elements (code, links): the pieces in order, for JSX to render. */
export function tParts<T>(key: MessageKey, parts: Record<string, T>): (string | T)[] {
  const text = CATALOGS[current][key] ?? `⟦${key}⟧`;
  return text.split(/(\{\w+\})/).filter(Boolean).map((piece) => {
    const name = /^\{(\w+)\}$/.exec(piece)?.[1];
    return name !== undefined && name in parts ? parts[name] : piece;
  });
}

export function number(n: number, digits = 0): string {
  return new Intl.NumberFormat(currentLocale, { maximumFractionDigits: digits, minimumFractionDigits: digits }).format(n);
}

/** "12 %" in German, "12%" in English: the number in the locale, the sign as the catalog writes it. */
export function percent(n: number, digits = 0): string {
  return t('common.percent', { n: number(n, digits) });
}

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '–';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '–' : new Intl.DateTimeFormat(currentLocale, { dateStyle: 'short', timeStyle: 'short' }).format(d);
}

/**
 * The remaining time in words, built from `eta_sekunden` (the API's `eta_text` is German only):
 * "noch etwa 12 Minuten" / "about 12 minutes left"; minutes rounded to the nearest whole minute.
 */
export function etaText(seconds: number | null): string | null {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return null;
  if (seconds < 60) return t('eta.underMinute');
  const total = Math.round(seconds / 60);
  if (total < 60) return t('eta.about', { time: tCount('eta.minutes', total) });
  const hours = Math.floor(total / 60);
  const minutes = total % 60;
  const time = minutes === 0 ? tCount('eta.hours', hours) : `${tCount('eta.hours', hours)} ${tCount('eta.minutes', minutes)}`;
  return t('eta.about', { time });
}

/**
 * A language's name in the UI's language ("deu" → "Deutsch" / "German"); the code itself where the
 * browser knows none. "und" (the disc does not say) is "ohne Sprachangabe" / "untagged": the
 * browser's own name for it is "root" or "Unknown language".
 */
export function languageName(code: string): string {
  if (code === 'und') return t('common.untagged');
  try {
    return new Intl.DisplayNames([currentLocale], { type: 'language' }).of(code) ?? code;
  } catch {
    return code;
  }
}
