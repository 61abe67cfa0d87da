import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toCsv } from '../../../../coordinator/http/csv.js';

const BOM = '\uFEFF';

describe('toCsv', () => {
  it('starts with a byte-order mark, separates by semicolon and ends every line with CRLF', () => {
    const csv = toCsv(['id', 'title', 'progress'], [
      ['a1', 'The Matrix', 100],
      ['b2', 'Alien', 42.5],
    ]);
    assert.equal(csv, `${BOM}id;title;progress\r\na1;The Matrix;100\r\nb2;Alien;42.5\r\n`);
  });

  it('writes the header alone for no rows', () => {
    assert.equal(toCsv(['a', 'b'], []), `${BOM}a;b\r\n`);
  });

  it('encodes the mark as UTF-8 EF BB BF', () => {
    const encoded = Buffer.from(toCsv(['a'], []), 'utf8');
    assert.deepEqual([...encoded.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
  });

  it('quotes fields with a semicolon, a quote, CR or LF and doubles quotes', () => {
    const csv = toCsv(['x'], [['a;b'], ['say "hi"'], ['line\nbreak'], ['cr\rhere'], ['plain']]);
    assert.equal(csv, `${BOM}x\r\n"a;b"\r\n"say ""hi"""\r\n"line\nbreak"\r\n"cr\rhere"\r\nplain\r\n`);
  });

  it('leaves commas and non-ASCII letters alone', () => {
    assert.equal(toCsv(['x'], [['Amélie, die Brücke']]), `${BOM}x\r\nAmélie, die Brücke\r\n`);
  });

  it('writes empty fields for null and undefined', () => {
    assert.equal(toCsv(['a', 'b', 'c'], [[null, undefined, '']]), `${BOM}a;b;c\r\n;;\r\n`);
  });

  it('writes booleans as true and false', () => {
    assert.equal(toCsv(['a', 'b'], [[true, false]]), `${BOM}a;b\r\ntrue;false\r\n`);
  });

  it('guards text fields that a spreadsheet would run as a formula', () => {
    const csv = toCsv(['x'], [['=HYPERLINK("http://evil")'], ['+1'], ['-2+3'], ['@SUM(A1)'], ['\tx'], ['a=b']]);
    assert.equal(csv, `${BOM}x\r\n"'=HYPERLINK(""http://evil"")"\r\n'+1\r\n'-2+3\r\n'@SUM(A1)\r\n'\tx\r\na=b\r\n`);
  });

  it('guards a formula start that also needs quotes', () => {
    assert.equal(toCsv(['x'], [['=1;2']]), `${BOM}x\r\n"'=1;2"\r\n`);
  });

  it('keeps numbers as numbers, a negative one included', () => {
    assert.equal(toCsv(['a', 'b', 'c'], [[-5, 0, 1.25]]), `${BOM}a;b;c\r\n-5;0;1.25\r\n`);
  });

  it('writes an empty field for a non-finite number', () => {
    assert.equal(toCsv(['a', 'b'], [[Number.NaN, Number.POSITIVE_INFINITY]]), `${BOM}a;b\r\n;\r\n`);
  });

  it('applies the same rules to the header', () => {
    assert.equal(toCsv(['=x', 'a;b'], []), `${BOM}'=x;"a;b"\r\n`);
  });
});
