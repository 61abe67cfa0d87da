/**
 * CSV for spreadsheet programs with German defaults: semicolon separated, UTF-8 with a byte-order mark,
 * CRLF line ends.
 */

export type CsvCell = string | number | boolean | null | undefined;

export const CSV_BOM = '\uFEFF';
const SEPARATOR = ';';
const LINE_END = '\r\n';

/** Characters that make a spreadsheet treat the start of a text cell as a formula (tab and CR included). */
const FORMULA_START = /^[=+\-@\t\r]/u;
const NEEDS_QUOTES = /[;"\r\n]/u;

function cellText(value: CsvCell): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  const text = String(value);
  return FORMULA_START.test(text) ? `'${text}` : text;
}

function field(value: CsvCell): string {
  const text = cellText(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/gu, '""')}"` : text;
}

/**
 * Builds the CSV text. Every record ends with CRLF. A field holding `;`, `"`, CR or LF is quoted with
 * inner quotes doubled. A text field starting with `=`, `+`, `-`, `@`, tab or CR gets a leading `'` so a
 * spreadsheet does not run it as a formula; numbers are written as numbers (a negative number keeps its
 * minus). null and undefined give an empty field, a non-finite number too.
 */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  const lines = [header, ...rows].map((row) => row.map(field).join(SEPARATOR) + LINE_END);
  return CSV_BOM + lines.join('');
}
