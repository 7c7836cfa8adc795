/**
 * `mailverdict batch FILE`: verifies a list with the local batch engine (grouped by domain,
 * SMTP sessions reused, PIPELINING where offered) and writes the rows in the API's format.
 */
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import type { Command } from 'commander';
import { Option } from 'commander';
import { parse as parseCsv } from 'csv-parse/sync';
import cliProgress from 'cli-progress';
import { batchEngineOptions } from '../../config.js';
import { createBatchEngine } from '../../engine/batch/batch-engine.js';
import { csvRows } from '../../services/csv-export.js';
import type { VerificationResult } from '../../engine/types.js';
import {
  addSettingsOptions,
  commandResolverTrust,
  timeoutOption,
  loadProberConfig,
  warnIfUntrusted,
} from '../cli-support.js';

type Format = 'csv' | 'json' | 'jsonl';

interface BatchFlags {
  out?: string;
  format: Format;
  json?: boolean;
  timeoutMs: number;
  progress: boolean;
  /** The batch engine's settings (SETTINGS rows naming `batch`). */
  [setting: string]: unknown;
}

/** One output row: the API's result row. */
interface Row {
  index: number;
  email: string;
  status: string;
  score: number;
  reason: string | null;
}

const HELP_AFTER = `
Input: one address per line (blank lines skipped, surrounding spaces trimmed), or a CSV
file whose header has an "email" column (other columns are ignored).

Output (to --out, or stdout), one row per input address in input order:
  csv    header email,status,score,reason; RFC 4180 quoting; empty reason when null
  json   {"results":[{"index":0,"email":...,"status":...,"score":...,"reason":...}]}
  jsonl  one {"index","email","status","score","reason"} object per line
Progress (done/total, rate, ETA) goes to stderr; --no-progress turns it off.

Ctrl-C (SIGINT) stops cleanly: probing stops, and the output is completed with the rows
verified so far, in input order; rows not verified are left out (the json/jsonl "index"
says which input each row is). A summary on stderr says how many are missing. Exit code
130 after an interrupt, 0 when every address was checked, whatever the verdicts.`;

export function registerBatchCommand(program: Command): void {
  addSettingsOptions(
    program
      .command('batch')
      .description('Verify a list of addresses (a file) with the local engine; results as CSV or JSON.')
      .argument('<file>', 'one address per line, or a CSV with an "email" column')
      .option('--out <path>', 'write the results to this file instead of stdout')
      .addOption(
        new Option('--format <format>', 'output format').choices(['csv', 'json', 'jsonl']).default('csv'),
      )
      .option('--json', 'shorthand for --format json')
      .option('--no-progress', 'no progress bar on stderr')
      .addOption(timeoutOption()),
  )
    .addHelpText('after', HELP_AFTER)
    .action(async (file: string, flags: BatchFlags) => {
      process.exitCode = await runBatch(file, flags);
    });
}

async function runBatch(file: string, flags: BatchFlags): Promise<number> {
  const config = await loadProberConfig(flags);
  const format: Format = flags.json === true ? 'json' : flags.format;
  const emails = parseInputList(await readFile(file, 'utf8'));

  const trust = commandResolverTrust(config);
  const engine = createBatchEngine(batchEngineOptions(config, { timeoutMs: flags.timeoutMs }), { trust });
  const out: Writable = flags.out === undefined ? process.stdout : createWriteStream(flags.out);
  const writer = new OrderedRowWriter(out, format, emails);
  const progress = flags.progress ? startProgress(emails.length) : null;

  const controller = new AbortController();
  let interrupted = false;
  const onSigint = (): void => {
    interrupted = true;
    controller.abort(new Error('interrupted'));
  };
  process.once('SIGINT', onSigint);
  let done = 0;
  try {
    await engine.verifyMany(emails, {
      signal: controller.signal,
      onResult: (index, result) => {
        writer.add(index, result);
        done += 1;
        progress?.update(done);
      },
    });
  } catch (err) {
    if (!interrupted) throw err;
  } finally {
    process.removeListener('SIGINT', onSigint);
    progress?.stop();
    await engine.close();
    await trust.close();
  }
  warnIfUntrusted('batch', trust);

  writer.finish();
  if (out !== process.stdout) {
    out.end();
    await once(out, 'finish');
  }
  if (interrupted) {
    process.stderr.write(
      `mailverdict batch: interrupted; ${done} of ${emails.length} addresses verified and written, ` +
        `${emails.length - done} left out\n`,
    );
    return 130;
  }
  return 0;
}

/**
 * One address per line, or a CSV whose header names an `email` column. A header cell reading
 * exactly "email" is what tells the two apart, so a list whose first line is an address is
 * never mistaken for a header.
 */
export function parseInputList(text: string): string[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const firstLine = body.slice(0, (body.indexOf('\n') + 1 || body.length + 1) - 1);
  const header =
    firstLine.includes('"') || firstLine.includes(',') ? csvHeader(firstLine) : [firstLine.trim()];
  const column = header.findIndex((cell) => cell.trim().toLowerCase() === 'email');
  if (column === -1) {
    return body
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
  }
  const records = parseCsv(body, {
    from_line: 2,
    relax_column_count: true,
    skip_empty_lines: true,
  }) as string[][];
  return records.map((record) => (record[column] ?? '').trim());
}

function csvHeader(line: string): string[] {
  const rows = parseCsv(line, { relax_quotes: true, relax_column_count: true }) as string[][];
  return rows[0] ?? [];
}

function toRow(index: number, input: string, result: VerificationResult): Row {
  return { index, email: input, status: result.status, score: result.score, reason: result.reason };
}

/**
 * Writes rows in input order as they settle: a row is written as soon as every row before it
 * is, so the output grows during the run. `finish` writes the settled rows still waiting
 * behind an unsettled one (after an interrupt) and closes the document.
 */
class OrderedRowWriter {
  readonly #out: Writable;
  readonly #format: Format;
  readonly #inputs: readonly string[];
  readonly #settled: (VerificationResult | undefined)[];
  #next = 0;
  #written = 0;

  constructor(out: Writable, format: Format, inputs: readonly string[]) {
    this.#out = out;
    this.#format = format;
    this.#inputs = inputs;
    this.#settled = new Array<VerificationResult | undefined>(inputs.length);
    if (format === 'csv') out.write(csvRows([['email', 'status', 'score', 'reason']]));
    if (format === 'json') out.write('{"results":[');
  }

  add(index: number, result: VerificationResult): void {
    this.#settled[index] = result;
    let chunk = '';
    while (this.#next < this.#inputs.length) {
      const ready = this.#settled[this.#next];
      if (ready === undefined) break;
      chunk += this.#render(this.#next, ready);
      this.#settled[this.#next] = undefined;
      this.#next += 1;
    }
    if (chunk !== '') this.#out.write(chunk);
  }

  finish(): void {
    let chunk = '';
    for (let i = this.#next; i < this.#inputs.length; i++) {
      const ready = this.#settled[i];
      if (ready !== undefined) chunk += this.#render(i, ready);
    }
    if (this.#format === 'json') chunk += ']}\n';
    if (chunk !== '') this.#out.write(chunk);
  }

  #render(index: number, result: VerificationResult): string {
    const row = toRow(index, this.#inputs[index]!, result);
    const first = this.#written === 0;
    this.#written += 1;
    switch (this.#format) {
      case 'csv':
        return csvRows([[row.email, row.status, row.score, row.reason ?? '']]);
      case 'json':
        return (first ? '' : ',') + JSON.stringify(row);
      case 'jsonl':
        return JSON.stringify(row) + '\n';
    }
  }
}

function startProgress(total: number): { update(done: number): void; stop(): void } {
  const bar = new cliProgress.SingleBar({
    stream: process.stderr,
    format: 'verifying [{bar}] {value}/{total} addresses | {rate}/s | ETA {eta_formatted}',
    noTTYOutput: true,
    notTTYSchedule: 1000,
    etaBuffer: 200,
    hideCursor: false,
  });
  const started = Date.now();
  const rate = (done: number): string => {
    const seconds = (Date.now() - started) / 1000;
    return seconds > 0 ? (done / seconds).toFixed(0) : '0';
  };
  bar.start(total, 0, { rate: '0' });
  return {
    update: (done) => bar.update(done, { rate: rate(done) }),
    stop: () => bar.stop(),
  };
}
