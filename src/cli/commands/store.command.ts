/**
 * `mailverdict store copy --from <data dir> --to <postgres url>`: moves the embedded SQLite store
 * to PostgreSQL (services/operators/store-copy.service.ts; docs/scaling.md, "Moving from SQLite to
 * PostgreSQL"). Exit 2 when it refuses (no store in --from, source not migrated, target not empty
 * without --force), 1 when the copy fails while running, 0 when every row was copied.
 */
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { ConfigError } from '../../config.js';
import { isAppError } from '../../errors.js';
import { copyStore, type StoreCopyProgress } from '../../services/operators/store-copy.service.js';
import { openSqliteSource } from '../../store/copy.store.js';
import { databasePath, openDatabase } from '../../store/db.js';
import { print } from '../cli-support.js';

interface CopyFlags {
  from: string;
  to: string;
  force?: boolean;
  json?: boolean;
  progress: boolean;
}

/** The copy runs one statement at a time: a small pool is enough. */
const TARGET_POOL_SIZE = 2;

const HELP_AFTER = `
The source is opened read-only and read as one consistent snapshot. Stop the processes that
write to it (serve, worker) before the copy you switch over with. A copy made while they ran is
brought up to date by running it again with --force once they are stopped: rows already copied
take the source's values, nothing is duplicated. See docs/scaling.md.
Progress goes to stderr; --json prints the rows copied per table on stdout.`;

export function registerStoreCommand(program: Command): void {
  const store = program.command('store').description('Move the store between backends.');
  store
    .command('copy')
    .description('Copy an embedded SQLite store into PostgreSQL (accounts, keys, usage, jobs, deliveries).')
    .requiredOption('--from <dir>', 'data directory of the SQLite store to copy (opened read-only)')
    .requiredOption('--to <url>', 'postgres:// URL of the target store (migrated to the latest schema first)')
    .option('--force', 'copy into a target that already holds data (rows with the same key are overwritten)')
    .option('--json', 'print the summary as JSON')
    .option('--no-progress', 'no progress bar on stderr')
    .addHelpText('after', HELP_AFTER)
    .action(async (flags: CopyFlags) => {
      await runCopy(flags);
    });
}

async function runCopy(flags: CopyFlags): Promise<void> {
  if (!/^postgres(ql)?:\/\//i.test(flags.to.trim()))
    throw new ConfigError(`--to must be a postgres:// or postgresql:// URL, got "${flags.to}"`);
  const source = openSqliteSource(flags.from);
  if (source === undefined)
    throw new ConfigError(
      `--from: no mailverdict store in ${flags.from} (${databasePath(flags.from)} does not exist)`,
    );
  const target = openDatabase({
    dataDir: flags.from,
    databaseUrl: flags.to.trim(),
    databasePoolSize: TARGET_POOL_SIZE,
  });
  const progress = flags.progress ? startProgress() : null;
  const started = performance.now();
  try {
    const summary = await copyStore(
      { source, target, ...(progress ? { onProgress: progress.update } : {}) },
      { force: flags.force === true },
    );
    progress?.stop();
    const seconds = (performance.now() - started) / 1000;
    const out = {
      rows: summary.rows,
      tables: summary.tables,
      target_migrations_applied: summary.targetMigrationsApplied,
      seconds: Number(seconds.toFixed(3)),
    };
    print(flags.json, out, () =>
      [
        `copied ${summary.rows} rows from ${databasePath(flags.from)} to PostgreSQL in ${seconds.toFixed(1)} s`,
        ...Object.entries(summary.tables).map(([table, n]) => `  ${table.padEnd(24)}${n}`),
      ].join('\n'),
    );
  } catch (err) {
    // A refusal (source not migrated, target not empty) is a usage error, exit 2.
    if (isAppError(err) && err.code === 'invalid_request') throw new ConfigError(err.message);
    throw err;
  } finally {
    progress?.stop();
    await source.destroy();
    await target.destroy();
  }
}

interface CopyProgressBar {
  update: (p: StoreCopyProgress) => void;
  stop: () => void;
}

function startProgress(): CopyProgressBar {
  const bar = new cliProgress.SingleBar({
    stream: process.stderr,
    format: 'copying [{bar}] {value}/{total} rows | {table} {tableCopied}/{tableRows} | {rate} rows/s',
    noTTYOutput: true,
    notTTYSchedule: 1000,
    hideCursor: false,
  });
  const started = performance.now();
  let running = false;
  return {
    update: (p) => {
      const seconds = (performance.now() - started) / 1000;
      const payload = {
        table: p.table,
        tableCopied: p.tableCopied,
        tableRows: p.tableRows,
        rate: seconds > 0 ? (p.copied / seconds).toFixed(0) : '0',
      };
      if (!running) {
        running = true;
        bar.start(p.rows, p.copied, payload);
      } else bar.update(p.copied, payload);
    },
    stop: () => {
      if (running) bar.stop();
      running = false;
    },
  };
}
