import { distance } from 'fastest-levenshtein';

/** Lower case, accents and punctuation gone, "&" as "and", single spaces: the form titles are compared in. */
export function normaliseTitle(title: string): string {
  return title
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/ß/g, 'ss')
    .replace(/&/g, ' and ')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .replace(/\s+/g, ' ');
}

/** 0..1: one minus the edit distance of the normalised titles over the longer one's length. */
export function titleSimilarity(a: string, b: string): number {
  const x = normaliseTitle(a);
  const y = normaliseTitle(b);
  if (!x || !y) return 0;
  if (x === y) return 1;
  return 1 - distance(x, y) / Math.max(x.length, y.length);
}

/** Search candidates of a disc title: the whole title, then with trailing words stripped one by one down to one word. */
export function searchCandidates(title: string): string[] {
  const words = title.trim().split(/\s+/).filter(Boolean);
  const out: string[] = [];
  for (let n = words.length; n >= 1; n--) out.push(words.slice(0, n).join(' '));
  return out;
}
