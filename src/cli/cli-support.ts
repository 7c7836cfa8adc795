/**
 * What the `serve`, `accounts` and `keys` commands share: the settings flags (one option per
 * setting of src/config.ts, read through loadConfig), opening the store, and output.
 */
import type { Command } from 'commander';
import { ConfigError, loadConfig, type Config, type Flags } from '../config.js';
import { isAppError } from '../errors.js';
import type { Executor } from '../store/executor.js';
import { openDatabase } from '../store/db.js';
import { migrateToLatest } from '../store/migrate.js';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** The store's settings and `--json`, which every command of this family takes. */
export function addCommonOptions(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', 'data directory (env MAILVERDICT_DATA_DIR, default ./data)')
    .option(
      '--database-url <url>',
      'postgres:// URL of a PostgreSQL store shared by many processes (env MAILVERDICT_DATABASE_URL; default: the SQLite file in --data-dir)',
    )
    .option('--database-pool-size <n>', 'PostgreSQL connections per process (default 10)')
    .option('--json', 'print JSON');
}

/** Every setting of the service as a flag; the environment variable is named in docs (README: Configuration). */
export function addSettingsOptions(cmd: Command): Command {
  return addCommonOptions(cmd)
    .option('--port <n>', 'port to listen on (default 8080; 0: any free port)')
    .option('--host <address>', 'address to listen on (default 127.0.0.1)')
    .option('--public-base-url <url>', 'absolute base URL used in links such as download_url')
    .option('--redis-url <url>', 'redis:// or rediss:// URL shared by every process (default: none)')
    .option('--redis-key-prefix <prefix>', 'prefix of every Redis key (default mailverdict:)')
    .option('--test-domain <domain>', 'domain of the test-key fixtures (default example.com)')
    .option(
      '--log-level <level>',
      'pino level: fatal, error, warn, info, debug, trace, silent (default info)',
    )
    .option('--no-bootstrap', 'do not create an account and keys on a brand-new data directory')
    .option('--plans <json>', 'plan overrides, e.g. {"free":{"monthly_quota":500}}')
    .option('--result-retention <duration>', 'how long batch results are kept (default 72h)')
    .option('--idempotency-ttl <duration>', 'how long Idempotency-Key values are kept (default 24h)')
    .option(
      '--usage-cache-ttl <duration>',
      'how far usage reads may lag counts made by other processes (default 1s; 0: no cache)',
    )
    .option('--dns-server <host[:port]>', 'DNS server to ask (repeatable or comma-separated)', collect)
    .option('--dns-timeout <duration>', 'DNS query timeout (default 2s)')
    .option('--dns-tries <n>', 'DNS attempts per query (default 2)')
    .option('--dns-cache-ttl <duration>', 'cache of DNS answers (default 10m)')
    .option('--dns-negative-cache-ttl <duration>', 'cache of DNS failures (default 1m)')
    .option('--smtp-port <n>', 'port of the mail servers probed (default 25)')
    .option('--helo <name>', 'name sent in EHLO/HELO (default localhost)')
    .option('--mail-from <address>', 'sender of MAIL FROM (default verify@<helo>)')
    .option('--proxy <url>', 'socks5://[user:pass@]host:port for SMTP probes (repeatable)', collect)
    .option(
      '--source-address <ip[=helo]>',
      'SMTP probes: source address to connect from, optionally with its own HELO name; several make an egress pool with politeness per (egress, MX host) (repeatable or comma-separated)',
      collect,
    )
    .option('--max-mx-hosts <n>', 'MX hosts tried per probe (default 3)')
    .option('--allow-internal-targets', 'probe mail hosts on loopback/private addresses (testing only)')
    .option('--catch-all-cache-ttl <duration>', 'cache of catch-all results per domain (default 1h)')
    .option('--result-cache-ttl-deliverable <duration>', 'result cache of deliverable (default 24h; 0: off)')
    .option('--result-cache-ttl-undeliverable <duration>', 'result cache of undeliverable (default 24h)')
    .option('--result-cache-ttl-risky <duration>', 'result cache of risky answers (default 1h; 0: off)')
    .option('--result-cache-ttl-unknown <duration>', 'result cache of unknown answers (default 0: off)')
    .option('--result-cache-size <n>', 'results kept in memory without Redis (default 50000; 0: off)')
    .option('--concurrency <n>', 'batch: SMTP sessions in flight per worker (default 200)')
    .option('--per-host-concurrency <n>', 'batch: SMTP sessions per MX host (default 5)')
    .option('--greylist-retries <n>', 'batch: retries of a greylisted address (default 2)')
    .option('--greylist-delay <duration>', 'batch: delay before such a retry (default 2m)')
    .option('--chunk-size <n>', 'batch: addresses per stored chunk (default 1000)')
    .option('--lease <duration>', 'batch: worker lease on a chunk (default 30s)')
    .option('--poll-interval <duration>', 'batch: idle worker poll interval (default 500ms)')
    .option('--no-embedded-workers', 'do not run batch workers inside serve')
    .option(
      '--allow-insecure-webhooks',
      'allow http:// and loopback (127.0.0.0/8, ::1) webhook targets; other internal ones stay refused (development only)',
    )
    .option('--webhook-timeout <duration>', 'timeout of one webhook delivery (default 15s)')
    .option('--smtp-relay-url <url>', 'smtp://user:pass@host:port for notification e-mails')
    .option('--notify-from <address>', 'sender of notification e-mails')
    .option(
      '--session-idle-timeout <duration>',
      'dashboard: a session ends after this long unused (default 12h)',
    )
    .option('--session-max-age <duration>', 'dashboard: a session ends this long after sign-in (default 7d)')
    .option(
      '--sign-in-rate-limit <n>',
      'dashboard: sign-ins per client address and second (default 5; 0: unlimited)',
    )
    .option(
      '--sign-in-failure-limit <n>',
      'dashboard: failed sign-ins per address and 15 minutes before its sign-ins are refused (default 10; 0: unlimited)',
    );
}

/**
 * commander's options as loadConfig flags. A `--no-x` option is true by default, which would hide
 * its environment variable, so only an explicit `false` is passed on.
 */
export function settingsFlags(options: Record<string, unknown>): Flags {
  const flags: Flags = { ...options };
  delete flags.json;
  for (const negatable of ['bootstrap', 'embeddedWorkers'])
    if (flags[negatable] !== false) delete flags[negatable];
  return flags;
}

/** The flags of addCommonOptions, as commander hands them over. */
export interface StoreFlags {
  dataDir?: string;
  databaseUrl?: string;
  databasePoolSize?: string;
  json?: boolean;
}

/** Opens and migrates the store of `--data-dir` / `--database-url` for the duration of `fn`. */
export async function withStore<T>(
  options: StoreFlags,
  fn: (db: Executor, config: Readonly<Config>) => Promise<T>,
): Promise<T> {
  const { dataDir, databaseUrl, databasePoolSize } = options;
  const config = loadConfig({ dataDir, databaseUrl, databasePoolSize });
  const db = openDatabase(config);
  try {
    await migrateToLatest(db);
    return await fn(db, config);
  } catch (err) {
    // A bad value given on the command line is a usage error (exit 2), like a bad setting.
    if (isAppError(err) && err.code === 'invalid_request') throw new ConfigError(err.message);
    throw err;
  } finally {
    await db.destroy();
  }
}

/** Parses a non-negative integer option, or throws a ConfigError naming it. */
export function integerOption(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw.trim()))
    throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  return Number(raw);
}

export function print(json: boolean | undefined, value: unknown, text: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}

/** Resolves with the first SIGTERM or SIGINT, then stops listening for either. */
export function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
