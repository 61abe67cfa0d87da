/**
 * The kind of a failed or canceled job's reason (the statistics group by it; the jobs page names it in
 * the UI's language above the reason's English words). The patterns are the reasons Ripwerk's own
 * parts write (agent/output/output-proof.ts, the ripper and transcoder parsers, coordinator/dispatch);
 * the first that matches wins, so "the transcoder could not read the input" is the encoder's.
 */
import type { FailureKind } from './api-types.js';

export const FAILURE_PATTERNS: readonly [Exclude<FailureKind, 'canceled' | 'other'>, RegExp][] = [
  ['worker_lost', /\bthe worker \S+ (went offline|was removed|no longer runs|did not answer)/i],
  ['no_space', /not enough free space|no space left/i],
  ['output_proof', /\bthe output (is|has|ends|cannot)\b|\bis missing from the output\b|\bof the output is\b/i],
  ['encoder', /\btranscoder\b|\bencode failed\b|HandBrake|\bpreset\b/i],
  ['disc_key', /\bvolume key\b|\bkey store\b|KEYDB|LibreDrive|\bdisc key/i],
  ['read_error', /\bread errors?\b|could not read|cannot be read|\bunreadable\b|\bthe rip is broken\b|no titles the ripper could read/i],
];

export function failureKind(status: string, error: string | null): FailureKind {
  if (status === 'canceled') return 'canceled';
  const text = error ?? '';
  return FAILURE_PATTERNS.find(([, re]) => re.test(text))?.[0] ?? 'other';
}
