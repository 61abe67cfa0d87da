/**
 * The languages the rip dialog offers (pure; the unit test reads it): those found on the chosen
 * titles, the settings' languages first in their order of preference, then the others in the disc's
 * order; the settings' languages are ticked. What is sent is the ticked ones in that order.
 */
import type { ScannedDiscTrack, Track } from './api.js';

export type StreamKind = 'audio' | 'subtitles';

export interface LanguageOption {
  code: string;
  /** Ticked at first: the settings name it. */
  preferred: boolean;
}

/** The languages of one kind on the given titles, in disc order, each once; "und" (the disc does not say) left out. */
export function foundLanguages(tracks: Track[], numbers: number[], kind: StreamKind): string[] {
  const out: string[] = [];
  for (const track of tracks) {
    if (!numbers.includes(track.number)) continue;
    for (const s of track[kind] ?? []) if (s.language !== 'und' && !out.includes(s.language)) out.push(s.language);
  }
  return out;
}

/**
 * Streams without a language tag ("und") on the chosen titles: the most one title has. The agent keeps
 * untagged main audio always (agent/tasks/stream-selection.ts) and takes subtitles by language only,
 * so the dialog says so instead of "none".
 */
export function untaggedStreams(tracks: Track[], numbers: number[], kind: StreamKind): number {
  let most = 0;
  for (const track of tracks) if (numbers.includes(track.number)) most = Math.max(most, (track[kind] ?? []).filter((s) => s.language === 'und').length);
  return most;
}

/** The options for the found languages: the settings' languages first, in their order. */
export function languageOptions(found: string[], preferred: readonly string[]): LanguageOption[] {
  const first = preferred.filter((code) => found.includes(code));
  const rest = found.filter((code) => !preferred.includes(code));
  return [...first.map((code) => ({ code, preferred: true })), ...rest.map((code) => ({ code, preferred: false }))];
}

/** The list for POST /jobs: the ticked languages in the order shown. */
export function chosenLanguages(options: LanguageOption[], ticked: ReadonlySet<string>): string[] {
  return options.filter((o) => ticked.has(o.code)).map((o) => o.code);
}

/**
 * The titles a rip takes as the dialog stands: with main feature only the one the scan marks as the
 * main feature (else the longest), else the ticked ones, else (none ticked: the backend takes every
 * title long enough) all of them.
 */
export function ripTitles(tracks: ScannedDiscTrack[], chosen: ReadonlySet<number>, mainFeatureOnly: boolean): number[] {
  if (!mainFeatureOnly) {
    const ticked = tracks.filter((x) => chosen.has(x.number)).map((x) => x.number);
    return ticked.length ? ticked : tracks.map((x) => x.number);
  }
  const main = tracks.find((x) => x.main_feature !== undefined) ?? tracks.reduce<Track | null>((a, b) => (a && a.seconds >= b.seconds ? a : b), null);
  return main ? [main.number] : [];
}

/** A stream role the dialog names beside a language (from the disc: MakeMKV's flags, lsdvd's content codes). */
export type StreamRole = 'forced' | 'commentary' | 'visual_impaired' | 'hearing_impaired';

const ROLE_ORDER: StreamRole[] = ['forced', 'hearing_impaired', 'commentary', 'visual_impaired'];

/** Per language of one kind on the given titles: the roles its streams carry, in a fixed order. */
export function languageRoles(tracks: Track[], numbers: number[], kind: StreamKind): Map<string, StreamRole[]> {
  const found = new Map<string, Set<StreamRole>>();
  for (const track of tracks) {
    if (!numbers.includes(track.number)) continue;
    for (const s of track[kind] ?? []) {
      const roles = found.get(s.language) ?? new Set<StreamRole>();
      found.set(s.language, roles);
      const flags = s as { forced?: boolean; commentary?: boolean; visual_impaired?: boolean; hearing_impaired?: boolean };
      for (const role of ROLE_ORDER) if (flags[role]) roles.add(role);
    }
  }
  return new Map([...found].map(([code, roles]) => [code, ROLE_ORDER.filter((r) => roles.has(r))]));
}
