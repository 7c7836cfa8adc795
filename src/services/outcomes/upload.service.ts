/**
 * A file of delivery outcomes uploaded on the dashboard's Outcomes page (docs/outcomes.md,
 * "Uploading a file"): read by its kind into events, then taken in like POST /v1/outcomes (each
 * event checked on its own, the events taken stored in one transaction), with source `upload`.
 *
 * Kinds: `csv` (address, type and an optional time; below) and `mbox` (bounce and complaint
 * messages, each read as POST /v1/outcomes reads one: bounce-mbox.ts). An mbox's messages that are
 * not bounces, and its recipients that became no event, are reported beside the events.
 */
import { parse } from 'csv-parse/sync';
import { AppError } from '../../errors.js';
import { refuseIfSuspended } from '../accounts/accounts.service.js';
import { recordAudit, type ChangeBy } from '../accounts/audit.service.js';
import { eventsFromMbox } from './bounce-mbox.js';
import type { IgnoredReason } from './bounce-status.js';
import {
  MAX_EVENTS_PER_REQUEST,
  takeOutcomes,
  type IntakeDeps,
  type IntakeReport,
  type OutcomeEventInput,
  type RefusalReason,
} from './intake.service.js';

export const OUTCOME_FILE_KINDS = ['csv', 'mbox'] as const;
export type OutcomeFileKind = (typeof OUTCOME_FILE_KINDS)[number];

/** The events of a file, each with its place in the file (a CSV row, an mbox message; from 1). */
export interface FileEvents {
  events: OutcomeEventInput[];
  items: number[];
  /** An mbox: what it held besides its events. */
  mbox?: MboxNotes;
}

/** An mbox's messages, and what of them became no event (message numbers from 1). */
export interface MboxNotes {
  messages: number;
  /** Recipients a bounce named that became no event (a refusal about the sender, say), and why. */
  ignored: { item: number; email?: string; reason: IgnoredReason; message: string }[];
  /** Messages that were no bounce or complaint, or could not be read. */
  rejected: { item: number; error: string; message: string }[];
}

/** Reads a file's bytes (an mbox is bytes, a CSV UTF-8 text). */
export type OutcomeFileReader = (raw: Buffer) => FileEvents | Promise<FileEvents>;

/** One refused event of a file: where it is in the file, and why. */
export interface FileRefusal {
  /** The CSV row (from 1, a header row counted) or the mbox message (from 1). */
  item: number;
  reason: RefusalReason;
  message: string;
}

export interface UploadReport extends Omit<IntakeReport, 'refusals'> {
  kind: OutcomeFileKind;
  refusals: FileRefusal[];
  /** An mbox only. */
  mbox?: MboxNotes;
}

/** An mbox of bounce and complaint messages: their events, each with its message (from 1). */
export async function eventsOfMbox(raw: Buffer): Promise<FileEvents> {
  const read = await eventsFromMbox(raw);
  const mbox: MboxNotes = {
    messages: read.messages,
    ignored: read.ignored.map(({ message_index, ...rest }) => ({ item: message_index + 1, ...rest })),
    rejected: read.rejected.map(({ message_index, ...rest }) => ({ item: message_index + 1, ...rest })),
  };
  if (read.events.length === 0)
    throw new AppError(
      'invalid_request',
      `the mbox holds no bounce or complaint that names a recipient's fate (${read.messages} messages: ${mbox.rejected.length} not bounces, ${mbox.ignored.length} recipients about the sender or unclassified)`,
    );
  return {
    events: read.events.map(({ status: _status, ...event }) => event),
    items: read.eventMessages.map((index) => index + 1),
    mbox,
  };
}

const ADDRESS_NAMES = new Set(['email', 'address', 'email_address', 'recipient']);
const TYPE_NAMES = new Set(['type', 'event', 'outcome']);
const AT_NAMES = new Set(['at', 'time', 'timestamp', 'date']);

/** `Hard Bounce`, `hard-bounce` and `HARD_BOUNCE` all read as `hard_bounce`. */
const typeOf = (cell: string): string =>
  cell
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

/**
 * A CSV of outcomes: columns address, type and (optional) at, in that order; or any order under a
 * header row that names them (`email` or `address`, `type`, `at`). Blank rows are skipped.
 */
export function eventsFromCsv(raw: string): FileEvents {
  let records: string[][];
  try {
    records = parse(raw, {
      bom: true,
      relax_column_count: true,
      skip_empty_lines: false,
      trim: true,
    }) as string[][];
  } catch (err) {
    throw new AppError('invalid_request', `the file is not valid CSV: ${(err as Error).message}`);
  }
  let columns = { email: 0, type: 1, at: 2 };
  let first = 0;
  const head = (records[0] ?? []).map((c) => c.toLowerCase());
  if (head.some((c) => ADDRESS_NAMES.has(c))) {
    const find = (names: ReadonlySet<string>) => head.findIndex((c) => names.has(c));
    columns = { email: find(ADDRESS_NAMES), type: find(TYPE_NAMES), at: find(AT_NAMES) };
    if (columns.type < 0) throw new AppError('invalid_request', 'the header row names no `type` column');
    first = 1;
  }
  const events: OutcomeEventInput[] = [];
  const items: number[] = [];
  records.forEach((record, i) => {
    if (i < first || record.every((cell) => cell === '')) return;
    const at = columns.at < 0 ? '' : (record[columns.at] ?? '');
    events.push({
      email: record[columns.email] ?? '',
      type: typeOf(record[columns.type] ?? ''),
      ...(at === '' ? {} : { at }),
    });
    items.push(i + 1);
  });
  return { events, items };
}

/** Each kind's reader; null: not taken (415). */
export const OUTCOME_FILE_READERS: Record<OutcomeFileKind, OutcomeFileReader | null> = {
  csv: (raw) => eventsFromCsv(raw.toString('utf8')),
  mbox: eventsOfMbox,
};

/**
 * Reads `raw` as a file of `kind` and takes its events in for the account, as a person does it
 * (the dashboard): the file is read first, then, in one transaction, a member's upload is refused
 * while the account is suspended, the events are stored and the `outcomes_uploaded` entry (its
 * counts, never an address) is written.
 */
export async function uploadOutcomes(
  deps: IntakeDeps & { readers?: Record<OutcomeFileKind, OutcomeFileReader | null> },
  input: { accountId: string; kind: OutcomeFileKind; raw: Buffer },
  by: ChangeBy,
): Promise<UploadReport> {
  const reader = (deps.readers ?? OUTCOME_FILE_READERS)[input.kind];
  if (reader === null)
    throw new AppError('unsupported_media_type', `${input.kind} files are not taken yet; upload a CSV`);
  const { events, items, mbox } = await reader(input.raw);
  if (events.length === 0) throw new AppError('invalid_request', 'the file holds no event');
  if (events.length > MAX_EVENTS_PER_REQUEST)
    throw new AppError(
      'invalid_request',
      `the file holds ${events.length} events; at most ${MAX_EVENTS_PER_REQUEST} per file, split it`,
    );
  const report = await takeOutcomes(deps, {
    accountId: input.accountId,
    source: 'upload',
    events,
    alongside: async (trx, counts) => {
      if (by.actor.kind === 'member') await refuseIfSuspended(trx, input.accountId);
      await recordAudit(trx, deps.clock, {
        accountId: input.accountId,
        type: 'outcomes_uploaded',
        ...by,
        details: { kind: input.kind, ...counts },
      });
    },
  });
  return {
    ...report,
    kind: input.kind,
    refusals: report.refusals.map((r) => ({ item: items[r.index]!, reason: r.reason, message: r.message })),
    ...(mbox === undefined ? {} : { mbox }),
  };
}
