/**
 * What the page knows of a list being prepared, and the limits it is held to. Kept apart from
 * analyse.ts so that the page's bundle does not carry the CSV parser, which runs in the worker.
 */
/** The batch limits of the v1 API (docs/api.md): more is refused by the server. */
export const MAX_ADDRESSES = 500_000;
export const MAX_UPLOAD_BYTES = 150 * 1024 * 1024;

/** A list as the user gave it. A TXT file is a CSV of one column. */
export type ListSource =
  | { kind: 'file'; file: Blob; name: string }
  | { kind: 'xlsx'; file: Blob; name: string }
  | { kind: 'paste'; text: string };

export interface ColumnChoice {
  column: number;
  header: boolean;
}

export interface ListAnalysis {
  /** The header's cells, or "Column 1", "Column 2"... without a header. */
  columns: string[];
  /** What the list was read with (the user's choice, or the detected one). */
  choice: ColumnChoice;
  /** What the detection proposed. */
  detected: ColumnChoice;
  /** The first data rows. */
  preview: string[][];
  /** Data rows (blank lines skipped, the header row excluded): each is a row of the job (one
   *  without an address comes back `invalid_email_format`), and what a live job counts. */
  rows: number;
  /** Rows with something in the address column. */
  addresses: number;
  /** Addresses seen earlier in the list (compared trimmed and case-insensitively). */
  duplicates: number;
  /** Non-empty cells that do not look like an address (the server decides; this is a preview). */
  invalid: number;
  /** Rows whose address cell is empty. */
  empty: number;
  /** The delimiter papaparse found (the upload is re-written with commas when it is another). */
  delimiter: string;
}
