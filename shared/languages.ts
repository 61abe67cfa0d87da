import { iso6392 } from 'iso-639-2';

/**
 * Language codes as Ripwerk stores and compares them: ISO 639-2, terminology form ("deu", "fra",
 * "zho"), the form HandBrake's scan reports. Discs and containers use other forms for the same
 * language: Matroska and DVDs via ffmpeg write the bibliographic form ("ger"), DVD IFOs and TMDB use
 * ISO 639-1 ("de"). Every code is normalised here before it is compared.
 */

/** 639-2/B, 639-2/T and 639-1 → 639-2/T (or the one 639-2 code where B and T are the same). */
const CANONICAL = new Map<string, string>();
for (const entry of iso6392) {
  if (entry.iso6392B.includes('-')) continue; // the reserved range qaa-qtz is no single language
  const canonical = entry.iso6392T ?? entry.iso6392B;
  CANONICAL.set(entry.iso6392B, canonical);
  CANONICAL.set(canonical, canonical);
  if (entry.iso6391) CANONICAL.set(entry.iso6391, canonical);
}
// Deprecated ISO 639-1 code still written by old DVD authoring tools.
CANONICAL.set('iw', 'heb');

/** The code for "the disc does not say". */
export const UNDETERMINED = 'und';

/** Any ISO 639-2 (B or T) or 639-1 code → the 639-2/T form; "und" for what is not a language code. */
export function normaliseLanguage(code: string | null | undefined): string {
  const c = (code ?? '').trim().toLowerCase();
  return CANONICAL.get(c) ?? UNDETERMINED;
}

/** The ISO 639-2/B form that Matroska and ffmpeg write ("deu" → "ger"); "und" stays "und". */
export function matroskaLanguage(code: string): string {
  const canonical = normaliseLanguage(code);
  const entry = iso6392.find((e) => (e.iso6392T ?? e.iso6392B) === canonical);
  return entry?.iso6392B ?? UNDETERMINED;
}

/** True for a three-letter ISO 639-2 code (either form) of a real language ("und", "mul", "zxx" are not choosable). */
export function isChoosableLanguage(code: string): boolean {
  return /^[a-z]{3}$/.test(code) && CANONICAL.has(code) && !['und', 'mul', 'zxx', 'mis'].includes(code);
}

/**
 * A list of ISO 639-2 codes from a request or a setting: the normalised codes in the given order,
 * duplicates dropped, or the plain reason naming every code that is not one.
 */
export function parseLanguageList(value: unknown, field: string): { ok: true; codes: string[] } | { ok: false; reason: string } {
  if (!Array.isArray(value)) return { ok: false, reason: `${field} must be a list of ISO 639-2 language codes, for example ["deu", "eng"]` };
  if (value.length > 50) return { ok: false, reason: `${field} may name at most 50 languages` };
  const unknown: string[] = [];
  const codes: string[] = [];
  for (const item of value) {
    const code = typeof item === 'string' ? item.trim().toLowerCase() : '';
    if (!isChoosableLanguage(code)) {
      unknown.push(typeof item === 'string' ? JSON.stringify(item.slice(0, 20)) : String(JSON.stringify(item) ?? item).slice(0, 20));
      continue;
    }
    const canonical = normaliseLanguage(code);
    if (!codes.includes(canonical)) codes.push(canonical);
  }
  if (unknown.length > 0) return { ok: false, reason: `${field}: ${unknown.join(', ')} ${unknown.length === 1 ? 'is not an' : 'are not'} ISO 639-2 language code${unknown.length === 1 ? '' : 's'} (three letters, for example "deu" or "eng")` };
  return { ok: true, codes };
}
