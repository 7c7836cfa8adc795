/**
 * The one reader of the environment. Every setting is parsed and validated here, once, from
 * (in order of precedence) a CLI flag, a `MAILVERDICT_*` environment variable, or its default.
 * A bad value throws `ConfigError` naming the setting, and start-up stops with that message.
 */
import { SECOND, MINUTE, HOUR } from './clock.js';
import type { BatchEngineOptions } from './engine/batch/types.js';
import { parseSourceAddress } from './engine/net/egress.js';
import { DEFAULT_TIMEOUT_MS } from './engine/types.js';
import type { EngineOptions, Status } from './engine/types.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface BatchSettings {
  /** Global cap of SMTP sessions in flight across all jobs of one worker process. */
  concurrency: number;
  /** Cap of concurrent SMTP sessions per MX host (politeness). */
  perHostConcurrency: number;
  /** How many more times a greylisted address is retried inside its job. */
  greylistRetries: number;
  /** Delay before a greylisted address is retried. */
  greylistDelayMs: number;
  /** Addresses per stored chunk. */
  chunkSize: number;
  /** How long a worker's claim on a chunk lasts without a heartbeat. */
  leaseMs: number;
  /** How often an idle worker looks for work. */
  pollIntervalMs: number;
  /** Run workers inside `serve` (embedded mode). */
  embeddedWorkers: boolean;
  /** Chunks one worker process verifies at the same time. */
  chunkConcurrency: number;
  /** Demos and tests only: a pause after each test-mode chunk, so a test-key job takes visible time. */
  testModeChunkDelayMs: number;
}

/** The result cache of single verifications and batch jobs (services/result-cache.ts). */
export interface ResultCacheSettings {
  /** How long a result of each status is answered from the cache; 0: never cached. */
  ttlMs: Readonly<Record<Status, number>>;
  /** Results kept in this process's memory when there is no Redis; 0: no cache. */
  maxEntries: number;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /**
   * postgres://… selects PostgreSQL for the store (many API and worker processes share it); null
   * keeps the embedded SQLite file in `dataDir`.
   */
  databaseUrl: string | null;
  /** Connections in each process's PostgreSQL pool. */
  databasePoolSize: number;
  /**
   * redis://… or rediss://…: rate limits shared by every API process (and what else scale-out
   * keeps in Redis); null keeps them in each process.
   */
  redisUrl: string | null;
  /** Prepended to every Redis key, so that deployments (or test runs) sharing one Redis never meet. */
  redisKeyPrefix: string;
  /** Absolute base URL used to build links such as download_url, no trailing slash. */
  publicBaseUrl: string;
  testDomain: string;
  logLevel: string;
  /** Create an account and print a live and a test key on a brand-new data directory. */
  bootstrap: boolean;
  resultRetentionMs: number;
  idempotencyTtlMs: number;
  /** How long a process may answer usage reads from memory (services/usage-cache.ts); 0: never. */
  usageCacheTtlMs: number;
  engine: EngineOptions;
  batch: BatchSettings;
  resultCache: ResultCacheSettings;
  /** Allow http:// and internal webhook targets (development and tests only). */
  allowInsecureWebhooks: boolean;
  webhookTimeoutMs: number;
  /** smtp://user:pass@host:port of the relay for notification e-mails; null: notifications are skipped. */
  smtpRelayUrl: string | null;
  notifyFrom: string;
  /** JSON object of per-plan overrides, e.g. {"free":{"monthly_quota":500}}. Parsed by the plans module. */
  planOverrides: Record<string, unknown>;
  /** Failed authentications allowed per client address and second before 429; 0: unlimited. */
  authFailureRateLimit: number;
  /**
   * Whether X-Forwarded-For names the client (Fastify's trustProxy): false (the socket's peer is
   * the client), true (trust every hop), a hop count, or the addresses/CIDRs of trusted proxies.
   */
  trustProxy: boolean | number | string[];
  /** A dashboard session ends after this long without a request (docs/dashboard.md). */
  sessionIdleTimeoutMs: number;
  /** A dashboard session ends this long after sign-in, however much it is used. */
  sessionMaxAgeMs: number;
  /** Dashboard sign-ins (and password-reset requests) per client address and second; 0: unlimited. */
  signInRateLimit: number;
  /** Failed sign-ins for one address per 15 minutes, past which its sign-ins are refused; 0: unlimited. */
  signInFailureLimit: number;
}

/** Raw inputs: CLI flags by camelCase name (commander's shape). */
export type Flags = Record<string, unknown>;

type Parser<T> = (raw: string, name: string) => T;

const integer =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return n;
  };

const string: Parser<string> = (raw, name) => {
  if (raw.trim() === '') throw new ConfigError(`${name} must not be empty`);
  return raw.trim();
};

const boolean: Parser<boolean> = (raw, name) => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
};

const list: Parser<string[]> = (raw) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** Egress source addresses: a comma list of `ip` or `ip=helo-name` (engine/net/egress.ts). */
const sourceAddresses: Parser<string[]> = (raw, name) => {
  const entries = list(raw, name);
  for (const entry of entries) {
    try {
      parseSourceAddress(entry);
    } catch (error) {
      throw new ConfigError(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return entries;
};

/** "false", "true", a hop count, or a comma list of proxy addresses / CIDRs. */
const trustProxy: Parser<boolean | number | string[]> = (raw, name) => {
  const v = raw.trim().toLowerCase();
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  if (['true', 'yes', 'on'].includes(v)) return true;
  if (/^\d+$/.test(v)) return integer(1, 100)(v, name);
  const entries = list(raw, name);
  for (const e of entries) {
    if (!/^[0-9a-f:.]+(\/\d{1,3})?$/i.test(e))
      throw new ConfigError(
        `${name} must be true, false, a hop count or a list of proxy addresses/CIDRs, got "${e}"`,
      );
  }
  return entries;
};

const UNITS: Record<string, number> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR, d: 24 * HOUR };

/** Parses "72h", "15m", "2s", "500ms", "1d" (or a bare number of milliseconds). */
export function parseDuration(raw: string, name = 'duration'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(raw);
  if (!m) throw new ConfigError(`${name} must be a duration such as 500ms, 2s, 15m, 72h or 1d, got "${raw}"`);
  const ms = Number(m[1]) * UNITS[m[2] ?? 'ms']!;
  if (!Number.isFinite(ms) || ms <= 0) throw new ConfigError(`${name} must be positive, got "${raw}"`);
  return Math.round(ms);
}
const duration: Parser<number> = (raw, name) => parseDuration(raw, name);
/** A duration, or 0 / "off" for none. */
const durationOrOff: Parser<number> = (raw, name) =>
  /^\s*(0|off)\s*$/i.test(raw) ? 0 : parseDuration(raw, name);

/** The value with any `user:password@` part masked: URLs of stores and relays carry secrets. */
function withoutCredentials(raw: string): string {
  return raw.replace(/\/\/[^/?#]*@/, '//***@');
}

const url =
  (protocols: string[]): Parser<string> =>
  (raw, name) => {
    let u: URL;
    try {
      u = new URL(raw.trim());
    } catch {
      throw new ConfigError(`${name} must be a URL, got "${withoutCredentials(raw)}"`);
    }
    if (!protocols.includes(u.protocol)) {
      throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${u.protocol}"`);
    }
    return raw.trim().replace(/\/+$/, '');
  };

const json: Parser<Record<string, unknown>> = (raw, name) => {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw new ConfigError(`${name} must be a JSON object`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new ConfigError(`${name} must be a JSON object`);
  return v as Record<string, unknown>;
};

/**
 * Reads one setting: flag (already typed by commander, or a string) wins over the
 * environment, which wins over the default.
 */
function read<T>(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  flag: string,
  envName: string,
  parse: Parser<T>,
  def: T,
): T {
  const fromFlag = flags[flag];
  if (fromFlag !== undefined && fromFlag !== null) {
    if (typeof fromFlag === 'string') return parse(fromFlag, `--${kebab(flag)}`);
    if (Array.isArray(fromFlag)) return parse(fromFlag.join(','), `--${kebab(flag)}`);
    if (typeof fromFlag === 'number' || typeof fromFlag === 'boolean')
      return parse(String(fromFlag), `--${kebab(flag)}`);
    throw new ConfigError(`--${kebab(flag)} has an unexpected value`);
  }
  const fromEnv = env[envName];
  if (fromEnv !== undefined && fromEnv !== '') return parse(fromEnv, envName);
  return def;
}

function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export function loadConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const r = <T>(flag: string, envName: string, parse: Parser<T>, def: T): T =>
    read(flags, env, flag, `MAILVERDICT_${envName}`, parse, def);

  const port = r('port', 'PORT', integer(0, 65535), 8080);
  const host = r('host', 'HOST', string, '127.0.0.1');
  const heloName = r('helo', 'HELO_NAME', string, 'localhost');

  const config: Config = {
    port,
    host,
    dataDir: r('dataDir', 'DATA_DIR', string, './data'),
    databaseUrl: r<string | null>('databaseUrl', 'DATABASE_URL', url(['postgres:', 'postgresql:']), null),
    databasePoolSize: r('databasePoolSize', 'DATABASE_POOL_SIZE', integer(1, 1000), 10),
    redisUrl: r<string | null>('redisUrl', 'REDIS_URL', url(['redis:', 'rediss:']), null),
    redisKeyPrefix: r('redisKeyPrefix', 'REDIS_KEY_PREFIX', string, 'mailverdict:'),
    publicBaseUrl: r('publicBaseUrl', 'PUBLIC_BASE_URL', url(['http:', 'https:']), `http://${host}:${port}`),
    testDomain: r('testDomain', 'TEST_DOMAIN', string, 'example.com').toLowerCase(),
    logLevel: r('logLevel', 'LOG_LEVEL', string, 'info'),
    bootstrap: r('bootstrap', 'BOOTSTRAP', boolean, true),
    resultRetentionMs: r('resultRetention', 'RESULT_RETENTION', duration, 72 * HOUR),
    idempotencyTtlMs: r('idempotencyTtl', 'IDEMPOTENCY_TTL', duration, 24 * HOUR),
    usageCacheTtlMs: r('usageCacheTtl', 'USAGE_CACHE_TTL', duration, 1 * SECOND),
    engine: {
      dns: {
        servers: r('dnsServer', 'DNS_SERVERS', list, []),
        timeoutMs: r('dnsTimeout', 'DNS_TIMEOUT', duration, 2 * SECOND),
        tries: r('dnsTries', 'DNS_TRIES', integer(1, 10), 2),
        positiveTtlMs: r('dnsCacheTtl', 'DNS_CACHE_TTL', duration, 10 * MINUTE),
        negativeTtlMs: r('dnsNegativeCacheTtl', 'DNS_NEGATIVE_CACHE_TTL', duration, 1 * MINUTE),
        // The service takes addresses from untrusted callers: never knock on port 25 inside our own network.
        allowInternalTargets: r('allowInternalTargets', 'ALLOW_INTERNAL_TARGETS', boolean, false),
      },
      smtp: {
        port: r('smtpPort', 'SMTP_PORT', integer(1, 65535), 25),
        heloName,
        mailFrom: r('mailFrom', 'MAIL_FROM', string, `verify@${heloName}`),
        proxies: r('proxy', 'PROXIES', list, []),
        sourceAddresses: r('sourceAddress', 'SOURCE_ADDRESSES', sourceAddresses, []),
        maxMxHosts: r('maxMxHosts', 'MAX_MX_HOSTS', integer(1, 10), 3),
      },
      catchAllTtlMs: r('catchAllCacheTtl', 'CATCH_ALL_CACHE_TTL', duration, 1 * HOUR),
    },
    batch: {
      concurrency: r('concurrency', 'CONCURRENCY', integer(1, 10_000), 200),
      perHostConcurrency: r('perHostConcurrency', 'PER_HOST_CONCURRENCY', integer(1, 1000), 5),
      greylistRetries: r('greylistRetries', 'GREYLIST_RETRIES', integer(0, 10), 2),
      greylistDelayMs: r('greylistDelay', 'GREYLIST_DELAY', duration, 2 * MINUTE),
      chunkSize: r('chunkSize', 'CHUNK_SIZE', integer(10, 100_000), 1000),
      leaseMs: r('lease', 'WORKER_LEASE', duration, 30 * SECOND),
      pollIntervalMs: r('pollInterval', 'WORKER_POLL_INTERVAL', duration, 500),
      embeddedWorkers: r('embeddedWorkers', 'EMBEDDED_WORKERS', boolean, true),
      chunkConcurrency: r('chunkConcurrency', 'CHUNK_CONCURRENCY', integer(1, 64), 4),
      testModeChunkDelayMs: r('testModeChunkDelay', 'TEST_MODE_CHUNK_DELAY_MS', integer(0, 60_000), 0),
    },
    resultCache: {
      ttlMs: {
        deliverable: r('resultCacheTtlDeliverable', 'RESULT_CACHE_TTL_DELIVERABLE', durationOrOff, 24 * HOUR),
        undeliverable: r(
          'resultCacheTtlUndeliverable',
          'RESULT_CACHE_TTL_UNDELIVERABLE',
          durationOrOff,
          24 * HOUR,
        ),
        risky: r('resultCacheTtlRisky', 'RESULT_CACHE_TTL_RISKY', durationOrOff, 1 * HOUR),
        // "Could not find out" is worth asking again: never cached unless the operator says so.
        unknown: r('resultCacheTtlUnknown', 'RESULT_CACHE_TTL_UNKNOWN', durationOrOff, 0),
      },
      maxEntries: r('resultCacheSize', 'RESULT_CACHE_SIZE', integer(0, 10_000_000), 50_000),
    },
    allowInsecureWebhooks: r('allowInsecureWebhooks', 'ALLOW_INSECURE_WEBHOOKS', boolean, false),
    webhookTimeoutMs: r('webhookTimeout', 'WEBHOOK_TIMEOUT', duration, 15 * SECOND),
    smtpRelayUrl: r<string | null>('smtpRelayUrl', 'SMTP_RELAY_URL', url(['smtp:', 'smtps:']), null),
    notifyFrom: r('notifyFrom', 'NOTIFY_FROM', string, `mailverdict@${heloName}`),
    planOverrides: r('plans', 'PLANS', json, {}),
    authFailureRateLimit: r('authFailureRateLimit', 'AUTH_FAILURE_RATE_LIMIT', integer(0, 100_000), 10),
    trustProxy: r('trustProxy', 'TRUST_PROXY', trustProxy, false),
    sessionIdleTimeoutMs: r('sessionIdleTimeout', 'SESSION_IDLE_TIMEOUT', duration, 12 * HOUR),
    sessionMaxAgeMs: r('sessionMaxAge', 'SESSION_MAX_AGE', duration, 7 * 24 * HOUR),
    signInRateLimit: r('signInRateLimit', 'SIGN_IN_RATE_LIMIT', integer(0, 100_000), 5),
    signInFailureLimit: r('signInFailureLimit', 'SIGN_IN_FAILURE_LIMIT', integer(0, 100_000), 10),
  };

  for (const s of config.engine.smtp.proxies) url(['socks5:', 'socks:'])(s, '--proxy');
  return deepFreeze(config);
}

function deepFreeze<T>(o: T): Readonly<T> {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** The batch engine's options from the service's settings (jobs, `mailverdict batch`, the bench). */
export function batchEngineOptions(
  config: Readonly<Config>,
  overrides: Partial<Pick<BatchEngineOptions, 'timeoutMs' | 'mode'>> = {},
): BatchEngineOptions {
  return {
    ...config.engine,
    concurrency: config.batch.concurrency,
    perHostConcurrency: config.batch.perHostConcurrency,
    greylistRetries: config.batch.greylistRetries,
    greylistDelayMs: config.batch.greylistDelayMs,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    ...overrides,
  };
}
