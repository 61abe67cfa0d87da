/**
 * How the coordinator's records find a disc (issue 36). A disc is known by its content identity,
 * `DiscInfo.fingerprint` (`dvd:…`, `aacs:…`, `mb:…`, `files:…`). Records written before that (and
 * records of a disc whose ids could not be read) are keyed by the label+size fingerprint: 16 hex
 * digits, no colon: a "legacy" key.
 *
 * The rule: a disc is looked up under its identity first. Only when nothing is found there, it is
 * looked up under its label fingerprint, and that finds legacy records only (a key with a colon is
 * never a label fingerprint). So a new record of disc 1 (`dvd:AAA`) never marks its twin disc 2
 * (`dvd:BBB`, same label and size) as ripped; a legacy record of either twin still matches both
 * until it ages out (docs/api.md, "Already ripped").
 *
 * Pure functions without imports: the web UI uses them too.
 */

/** What names a disc: its identity and, from agents that send it, its label fingerprint. */
export interface DiscKey {
  fingerprint: string;
  label_fingerprint?: string | null;
}

/** A key written before content ids: label and size only (no colon). */
export function isLegacyKey(key: string): boolean {
  return !key.includes(':');
}

/**
 * The label fingerprint of a disc, if it has one: the one the agent sent, else (older agents) its
 * fingerprint when that is a legacy key itself. Never a key with a colon.
 */
export function labelKey(disc: DiscKey): string | null {
  const label = disc.label_fingerprint ?? (isLegacyKey(disc.fingerprint) ? disc.fingerprint : null);
  return label && isLegacyKey(label) ? label : null;
}

/**
 * The keys a disc's records are looked up under, in order: its identity, then (when it differs)
 * its label fingerprint for legacy records. Use the second only when the first finds nothing.
 */
export function lookupKeys(disc: DiscKey): string[] {
  const label = labelKey(disc);
  return label && label !== disc.fingerprint ? [disc.fingerprint, label] : [disc.fingerprint];
}

/**
 * Whether a record keyed `key` is a record of this disc: the same identity, or a legacy key equal to
 * the disc's label fingerprint. For one record compared with one disc (the job of the disc in the
 * drive); a lookup of many records prefers the identity (lookupKeys).
 */
export function keyMatches(key: string | null | undefined, disc: DiscKey): boolean {
  if (key === null || key === undefined) return false;
  if (key === disc.fingerprint) return true;
  return isLegacyKey(key) && key === labelKey(disc);
}

/**
 * Whether two sightings of a drive's disc are the same disc: the same identity, or one of them a
 * legacy key (an older agent, or ids not read this time) equal to the other's label fingerprint.
 */
export function sameDisc(a: DiscKey, b: DiscKey): boolean {
  return a.fingerprint === b.fingerprint || keyMatches(a.fingerprint, b) || keyMatches(b.fingerprint, a);
}
