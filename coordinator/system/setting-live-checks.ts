import { SourceError } from '../metadata/match.js';
import { OmdbClient } from '../metadata/omdb.js';
import { TmdbClient } from '../metadata/tmdb.js';

/** A key refused by its service, or a service that could not be asked: English text, code and parameters for the UI. */
export interface LiveRefusal {
  text: string;
  code: 'tmdbKeyRefused' | 'omdbKeyRefused' | 'keyCheckUnreachable';
  params: Record<string, string>;
}

/**
 * A metadata key is tried before it is saved (issue 38: a made-up TMDB key was saved and every later
 * lookup failed): TMDB's /3/configuration answers only with a valid key (v3 key or v4 token), OMDb
 * answers a known IMDb id only with one. A service that cannot be asked now refuses the key as well,
 * with its reason: a key nobody checked would fail unseen later, and the household can save again
 * when the service is reachable. The empty key (switching the source off) is never checked.
 */
export async function keyRefusal(setting: 'tmdbApiKey' | 'omdbApiKey', key: string, bases: { tmdb: string; tmdbImages: string; omdb: string }): Promise<LiveRefusal | null> {
  if (!key.trim()) return null;
  const service = setting === 'tmdbApiKey' ? 'TMDB' : 'OMDb';
  try {
    if (setting === 'tmdbApiKey') await new TmdbClient(bases.tmdb, () => key, bases.tmdbImages).check();
    else await new OmdbClient(bases.omdb, () => key).check();
    return null;
  } catch (err) {
    if (!(err instanceof SourceError)) throw err;
    // An answer of the service (401, or OMDb's "Invalid API key!") is a refusal of the key; no answer is no check.
    const answered = err.status !== null || setting === 'omdbApiKey' && /answered/.test(err.message);
    if (answered) {
      return { code: setting === 'tmdbApiKey' ? 'tmdbKeyRefused' : 'omdbKeyRefused', params: { answer: err.message }, text: `${setting} refused: ${service} did not take the key (${err.message}); the stored key is kept` };
    }
    return { code: 'keyCheckUnreachable', params: { service, reason: err.message }, text: `${setting} not saved: ${service} could not be asked to check the key (${err.message}); try again when it is reachable` };
  }
}
