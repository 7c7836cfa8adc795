/**
 * Reading an uploaded list before it is sent: which column holds the addresses, whether the first
 * row names the columns, and what the list will cost (rows, duplicates, cells that do not look like
 * an address). `ListSession` streams the source with papaparse, a chunk at a time, so a file at the
 * batch limit (500,000 rows, 150 MiB) is never held as rows in memory; it runs inside a worker
 * (parse.worker.ts) so the page keeps answering while it reads.
 */
import Papa from 'papaparse';
import type { ColumnChoice, ListAnalysis, ListSource } from './list-types';

export type { ColumnChoice, ListAnalysis, ListSource };

/** Rows shown in the preview. */
export const PREVIEW_ROWS = 10;
/** Rows read before deciding which column holds the addresses. */
const SAMPLE_ROWS = 200;
const CHUNK_BYTES = 1024 * 1024;

// Loose on purpose: the engine's RFC 5321 parser is the judge; this only flags obvious junk.
const LOOKS_LIKE_ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@.]+$/;
const ADDRESS_HEADER = /^(e-?mail|mail|courriel|correo|email[\s_-]*address(es)?|e-?mails?)$/i;

export function looksLikeAddress(value: string): boolean {
  return LOOKS_LIKE_ADDRESS.test(value.trim());
}

/**
 * The column that holds the addresses: a header named like one (email, e-mail, mail...), else the
 * column whose sample values most look like addresses. The first row is a header when it named the
 * column, or when its cell there is not an address while the rows below mostly are.
 */
export function detectColumn(sample: readonly (readonly string[])[]): ColumnChoice {
  const first = sample[0] ?? [];
  const named = first.findIndex((cell) => ADDRESS_HEADER.test(cell.trim()) || /e-?mail/i.test(cell));
  if (named >= 0 && !looksLikeAddress(first[named] ?? '')) return { column: named, header: true };
  const width = Math.max(0, ...sample.map((row) => row.length));
  const body = sample.length > 1 ? sample.slice(1) : sample;
  let best = 0;
  let bestScore = -1;
  for (let column = 0; column < width; column++) {
    const score = body.filter((row) => looksLikeAddress(row[column] ?? '')).length;
    if (score > bestScore) {
      best = column;
      bestScore = score;
    }
  }
  const firstCell = first[best] ?? '';
  const header = sample.length > 1 && !looksLikeAddress(firstCell) && bestScore > body.length / 2;
  return { column: best, header };
}

/** Pasted text to a one-column list: one address per line, or separated by commas, semicolons or spaces. */
export function pastedToCsv(text: string): string {
  const addresses = text.split(/[\s,;]+/).filter((part) => part.length > 0);
  return Papa.unparse(
    addresses.map((address) => [address]),
    { newline: '\r\n' },
  );
}

const csvBlob = (text: string) => new Blob([text], { type: 'text/csv' });

function stripBom(row: string[]): string[] {
  if (row[0]?.charCodeAt(0) === 0xfeff) row[0] = row[0].slice(1);
  return row;
}

type Progress = (fraction: number) => void;

/** Streams `input` a chunk of rows at a time; resolves with the delimiter papaparse used. */
function streamRows(input: Blob, onRows: (rows: string[][]) => void, onProgress: Progress): Promise<string> {
  return new Promise((resolve, reject) => {
    let delimiter = ',';
    let first = true;
    const config: Papa.ParseLocalConfig<string[], File> = {
      skipEmptyLines: 'greedy',
      chunkSize: CHUNK_BYTES,
      chunk(results) {
        delimiter = results.meta.delimiter;
        if (first && results.data[0]) stripBom(results.data[0]);
        first = false;
        onRows(results.data);
        // The cursor counts characters and the size bytes: close enough for a progress bar.
        if (input.size > 0) onProgress(Math.min(1, results.meta.cursor / input.size));
      },
      complete: () => resolve(delimiter),
      error: (error: Error) => reject(error),
    };
    // papaparse reads any Blob in slices (its File path only uses slice() and a FileReader).
    Papa.parse(input as File, config);
  });
}

/**
 * One list being prepared for upload. `load` reads it once and detects its address column;
 * `analyse` reads it again with the user's choice; `body` returns what POST /lists receives.
 */
export class ListSession {
  /** The list as CSV when it was converted (a paste, an XLSX sheet). */
  private converted: Blob | null = null;
  private delimiter = ',';

  constructor(private readonly source: ListSource) {}

  /** Reads the source (converting an XLSX sheet or a paste to CSV) and detects the address column. */
  async load(onProgress: Progress = () => {}): Promise<ListAnalysis> {
    if (this.source.kind === 'paste') this.converted = csvBlob(pastedToCsv(this.source.text));
    if (this.source.kind === 'xlsx') {
      // Loaded on demand: the XLSX reader is the largest dependency and most lists are CSV.
      const { xlsxToCsv } = await import('./xlsx');
      this.converted = csvBlob(await xlsxToCsv(this.source.file));
    }
    return this.analyse(null, onProgress);
  }

  /** Counts the list with `choice` (null: detect it from the first rows). */
  async analyse(choice: ColumnChoice | null, onProgress: Progress = () => {}): Promise<ListAnalysis> {
    const sample: string[][] = [];
    let decided: ColumnChoice | null = null;
    let detected: ColumnChoice = choice ?? { column: 0, header: false };
    let columns: string[] = [];
    const seen = new Set<string>();
    const preview: string[][] = [];
    const counts = { rows: 0, addresses: 0, duplicates: 0, invalid: 0, empty: 0 };

    const count = (row: string[], index: number, at: ColumnChoice) => {
      if (index === 0 && at.header) return;
      counts.rows++;
      if (preview.length < PREVIEW_ROWS) preview.push(row);
      const value = (row[at.column] ?? '').trim();
      if (value === '') {
        counts.empty++;
        return;
      }
      counts.addresses++;
      if (!looksLikeAddress(value)) counts.invalid++;
      const key = value.toLowerCase();
      if (seen.has(key)) counts.duplicates++;
      else seen.add(key);
    };
    let index = 0;
    const decide = () => {
      detected = detectColumn(sample);
      decided = choice ?? detected;
      const width = Math.max(decided.column + 1, ...sample.map((row) => row.length));
      columns = Array.from({ length: width }, (_, i) =>
        decided?.header && sample[0]?.[i]?.trim() ? sample[0][i].trim() : `Column ${i + 1}`,
      );
      sample.forEach((row, i) => count(row, i, decided as ColumnChoice));
      index = sample.length;
    };

    this.delimiter = await streamRows(
      this.input(),
      (rows) => {
        for (const row of rows) {
          if (decided) count(row, index++, decided);
          else {
            sample.push(row);
            if (sample.length >= SAMPLE_ROWS) decide();
          }
        }
      },
      onProgress,
    );
    if (!decided) decide();
    onProgress(1);
    return {
      columns,
      choice: decided ?? detected,
      detected,
      preview,
      ...counts,
      delimiter: this.delimiter,
    };
  }

  /**
   * The upload body: the file itself when it is already comma-separated, else the list written
   * as CSV (a pasted list, an XLSX sheet, a file separated by semicolons or tabs).
   */
  async body(): Promise<Blob> {
    if (this.delimiter === ',') return this.input();
    const parts: string[] = [];
    await streamRows(
      this.input(),
      (rows) => parts.push(Papa.unparse(rows, { newline: '\r\n' }) + '\r\n'),
      () => {},
    );
    return new Blob(parts, { type: 'text/csv' });
  }

  private input(): Blob {
    if (this.converted) return this.converted;
    if (this.source.kind === 'paste') throw new Error('the list is not loaded yet');
    return this.source.file;
  }
}
