/**
 * Every CSV the product writes (results downloads, `mailverdict batch --format csv`) goes through
 * here, following OWASP's CSV-injection guidance: a text cell that a spreadsheet would read as a
 * formula (starting with `=`, `+`, `-`, `@`, tab or carriage return) gets a leading `'`, and any
 * cell holding CR or LF is quoted so that no submitted string can start a row of its own. The
 * JSON forms are left byte-exact.
 */
import { stringify } from 'csv-stringify/sync';

const FORMULA_START = /^[=+\-@\t\r]/;

/** The cell as written: neutralised when a spreadsheet would evaluate it. */
export function safeCell(value: string | number): string | number {
  return typeof value === 'string' && FORMULA_START.test(value) ? `'${value}` : value;
}

/** CSV text of `rows` (CRLF line ends, RFC 4180 quoting, plus the two rules above). */
export function csvRows(rows: readonly (readonly (string | number)[])[]): string {
  return stringify(
    rows.map((row) => row.map(safeCell)),
    { record_delimiter: '\r\n', quoted_match: /[\r\n]/ },
  );
}
