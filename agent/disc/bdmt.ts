import { XMLParser } from 'fast-xml-parser';

/**
 * Parser for Blu-ray disc metadata files, BDMV/META/DL/bdmt_<lang>.xml: the clear-text disc title in
 * discinfo/title/name. Element names are matched without their namespace, as libbluray does.
 */

/** libbluray skips metadata files of this size or more. */
export const BDMT_MAX_BYTES = 1024 * 1024;

const PLACEHOLDER_TITLES = /^(blu-?ray( disc)?|bd-?rom|bdmv|disc|title|untitled)$/i;

const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  parseTagValue: false,
  trimValues: true,
});

/** Language code of a metadata file name ("bdmt_eng.xml" → "eng"); null for other names. */
export function bdmtLanguage(fileName: string): string | null {
  const match = /^bdmt_([a-z]{3})\.xml$/i.exec(fileName);
  return match ? match[1].toLowerCase() : null;
}

/** The text of an element value as fast-xml-parser gives it (string, repeated element, or element with children). */
function textOf(value: unknown): string | null {
  if (Array.isArray(value)) return value.length > 0 ? textOf(value[0]) : null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (value && typeof value === 'object' && '#text' in value) return textOf((value as Record<string, unknown>)['#text']);
  return null;
}

function findKey(node: unknown, key: string, depth = 0): unknown {
  if (depth > 8 || !node || typeof node !== 'object') return undefined;
  if (Array.isArray(node)) {
    for (const item of node) {
      const found = findKey(item, key, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  const record = node as Record<string, unknown>;
  if (key in record) return record[key];
  for (const child of Object.values(record)) {
    const found = findKey(child, key, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Decodes the file bytes: UTF-8, or UTF-16 when it starts with a byte order mark. */
export function decodeBdmt(data: Buffer): string {
  if (data[0] === 0xff && data[1] === 0xfe) return data.subarray(2).toString('utf16le');
  if (data[0] === 0xfe && data[1] === 0xff) return Buffer.from(data.subarray(2, data.length - (data.length % 2))).swap16().toString('utf16le');
  return data.toString('utf8').replace(/^\uFEFF/, '');
}

/**
 * The disc title of one bdmt file: discinfo/title/name, whitespace collapsed, NFC. Null when the file is
 * not well-formed XML, has no name, or names only a placeholder such as "Blu-ray".
 */
export function parseBdmtTitle(xml: string): string | null {
  let doc: unknown;
  try {
    doc = parser.parse(xml, true);
  } catch {
    return null;
  }
  const discinfo = findKey(doc, 'discinfo');
  const title = findKey(Array.isArray(discinfo) ? discinfo[0] : discinfo, 'title');
  const name = title && typeof title === 'object' ? textOf(findKey(Array.isArray(title) ? title[0] : title, 'name')) : null;
  const clean = name?.normalize('NFC').replace(/\s+/gu, ' ').trim() ?? '';
  if (clean.length === 0 || PLACEHOLDER_TITLES.test(clean)) return null;
  return clean;
}

export interface BdmtFile {
  fileName: string;
  xml: string;
}

/** The disc title from a set of bdmt files: English first, then the others in file name order. */
export function pickBdmtTitle(files: readonly BdmtFile[]): string | null {
  const ordered = files
    .filter((f) => bdmtLanguage(f.fileName) !== null)
    .sort((a, b) => Number(bdmtLanguage(b.fileName) === 'eng') - Number(bdmtLanguage(a.fileName) === 'eng') || a.fileName.localeCompare(b.fileName));
  for (const file of ordered) {
    const title = parseBdmtTitle(file.xml);
    if (title) return title;
  }
  return null;
}
