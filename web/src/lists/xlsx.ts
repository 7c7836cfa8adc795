/**
 * An XLSX workbook's first sheet as CSV text, so that an Excel list is uploaded like any other.
 * read-excel-file is the reader: maintained, no dependencies beyond an unzipper and an XML
 * tokenizer, and it reads cells without evaluating anything. This module is only loaded (by a
 * dynamic import) when an XLSX file is chosen, so it is not part of the first page's JavaScript.
 */
import Papa from 'papaparse';
import { readSheet } from 'read-excel-file/universal';

function cellText(value: unknown): string {
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return '';
}

export async function xlsxToCsv(file: Blob): Promise<string> {
  // Numbers keep their text as written (a phone number or a zip code must not lose its zeros).
  const rows = await readSheet<string>(file, { parseNumber: (text) => text });
  return Papa.unparse(
    rows.map((row) => row.map(cellText)),
    { newline: '\r\n' },
  );
}
