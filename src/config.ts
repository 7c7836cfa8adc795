/**
 * The one reader of the environment. Every setting is parsed and validated here, once, from
 * (in order of precedence) a CLI flag, a `MAILVERDICT_*` environment variable, or its default.
 * A bad value throws `ConfigError` naming the setting, and start-up stops with that message.
 * Each setting is one row of SETTINGS: the commands' flags and docs/configuration.md come from it.
 */
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import ipaddr from 'ipaddr.js';
import { SECOND, MINUTE, HOUR, DAY } from './clock.js';
import type { BatchEngineOptions } from './engine/batch/types.js';
import { DEFAULT_PROVIDER_CONCURRENCY, DEFAULT_PROVIDER_SESSIONS_PER_SECOND } from './engine/batch/types.js';
import { parseSourceAddress } from './engine/egress/egress.js';
import { isFullyQualified } from './engine/net/host-name.js';
import { STARTTLS_MODES, type StarttlsMode } from './engine/smtp/session.js';
import { WARM_DEFAULTS } from './engine/sessions/warm-pool.js';
import { DEFAULT_CONCURRENCY, DEFAULT_PER_HOST_CONCURRENCY, DEFAULT_TIMEOUT_MS } from './engine/types.js';
import type { EngineOptions, SmtpOptions, Status } from './engine/types.js';

/** The base of links when `--public-base-url` is not set: the address `serve` listens on. */
export function defaultPublicBaseUrl(host: string, port: number): string {
  return `http://${host}:${port}`;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * The session caps, read by single verifications and the batch engine alike: stored once, in
 * `engine.smtp`, always set (the engine's own defaults when no flag is given).
 * - `concurrency`: SMTP sessions in flight per process (batches, and apart single verifications);
 * - `perHostConcurrency`: per MX host address and egress (politeness);
 * - `providerConcurrency`: to all the MX hosts of one mail provider, per egress;
 * - `providerSessionsPerSecond`: new sessions per second to one provider's MX hosts, per egress.
 */
export type SessionCaps = Required<
  Pick<
    SmtpOptions,
    'concurrency' | 'perHostConcurrency' | 'providerConcurrency' | 'providerSessionsPerSecond'
  >
>;

/** The engine's options as the service sets them: the session caps always present. */
export interface EngineSettings extends EngineOptions {
  smtp: SmtpOptions & SessionCaps;
}

export interface BatchSettings {
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

/** The result cache of single verifications and batch jobs (services/verify/result-cache.ts). */
export interface ResultCacheSettings {
  /** How long a result of each status is answered from the cache; 0: never cached. */
  ttlMs: Readonly<Record<Status, number>>;
  /** Results kept in this process's memory when there is no Redis; 0: no cache. */
  maxEntries: number;
  /** Bytes those results may take at most (services/verify/result-memory-store.ts); 0: no cache. */
  maxBytes: number;
}

/** `mailverdict doctor`'s own settings (services/prober/doctor.service.ts). */
export interface DoctorSettings {
  /** The domain whose MX hosts the port-25 check greets. */
  referenceDomain: string;
  /** DNSBL zones each egress address is looked up on. */
  dnsblZones: readonly string[];
}

export interface PublishableDefaults {
  /** Requests per second from one visitor's address with one key. */
  visitorRateLimit: number;
  /** Requests per second of one key, all visitors together. */
  keyRateLimit: number;
  /** Verifications per UTC day of one key whose account has no monthly quota. */
  dailyCap: number;
  /** Percent of the account's monthly quota one key may spend per UTC day (services/keys/publishable-keys.ts). */
  dailySharePercent: number;
}

/** Whether the DNS resolver tells the truth (engine/dns/resolver-trust.ts; docs/prober.md). */
export interface DnsTrustSettings {
  /** Names that must have records: `.` is asked for NS, any other name for MX. */
  names: readonly string[];
  /** A TLD under which a random label must not exist. */
  absentZone: string;
  /** Between two checks while trusted; 0: no checks, every answer believed. */
  intervalMs: number;
}

/** The reputation guard (engine/egress/egress-guard.ts; docs/prober.md, "The reputation guard"). */
export interface GuardSettings {
  /** Between two blocklist checks of each egress; 0: none. */
  checkIntervalMs: number;
  /** Distinct mail hosts refusing an egress by policy within `blockWindowMs` that degrade it. */
  blockHosts: number;
  blockWindowMs: number;
  /** How long a degraded egress rests. */
  blockRestMs: number;
}

/**
 * Where the secret key comes from: the key itself (base64) or a file holding it; neither given:
 * `<dataDir>/secret.key` on SQLite (made at first start), and a refusal to start on PostgreSQL.
 * The previous key (either way) only opens values sealed before a rotation.
 */
export interface SecretKeySettings {
  key: string | null;
  keyFile: string | null;
  previousKey: string | null;
  previousKeyFile: string | null;
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
  /** The key that seals secrets at rest (store/secret-keys.ts; docs/security.md, "Secrets at rest"). */
  secrets: SecretKeySettings;
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
  /** The plan of the bootstrap account (services/usage/plans.ts; checked by createRuntime). */
  bootstrapPlan: string;
  resultRetentionMs: number;
  /** How long the security log's entries are kept (services/accounts/audit.service.ts). */
  auditRetentionMs: number;
  /** How long delivery outcomes are kept (services/outcomes/). */
  outcomeRetentionMs: number;
  idempotencyTtlMs: number;
  /** How long a process may answer usage reads from memory (services/usage/usage-cache.ts); 0: never. */
  usageCacheTtlMs: number;
  engine: EngineSettings;
  doctor: DoctorSettings;
  dnsTrust: DnsTrustSettings;
  guard: GuardSettings;
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
  /** The defaults of a publishable key's limits, where the key sets none (docs/widget.md). */
  publishable: PublishableDefaults;
  /**
   * Whether X-Forwarded-For names the client (Fastify's trustProxy): false (the socket's peer is
   * the client), a hop count, or the addresses/CIDRs of trusted proxies. Never "every hop".
   */
  trustProxy: false | number | string[];
  /**
   * `GET /metrics` apart from the public listener (issue 26): its own listener (`host`, `port`;
   * then the main one has no /metrics), and/or a bearer token it asks for. Null: neither.
   */
  metrics: { listen: { host: string; port: number } | null; token: string | null };
  /** A dashboard session ends after this long without a request (docs/dashboard.md). */
  sessionIdleTimeoutMs: number;
  /** A dashboard session ends this long after sign-in, however much it is used. */
  sessionMaxAgeMs: number;
  /** Dashboard sign-ins (and password-reset requests) per client address and second; 0: unlimited. */
  signInRateLimit: number;
  /** log2 of scrypt's N for new password hashes (services/people/passwords.ts). */
  passwordHashCost: number;
  /** Failed sign-ins for one (address, client address) pair per 15 minutes, past which that pair is refused; 0: unlimited. */
  signInFailureLimit: number;
  /** `mailverdict mcp`: the server it calls and the key it calls with (docs/mcp.md). */
  mcp: McpSettings;
}

/** What `mailverdict mcp` talks to: a mailverdict server's API, with one of its API keys. */
export interface McpSettings {
  /** Base URL, no trailing slash. */
  url: string;
  /** null: not given (`mcp` refuses to start). */
  apiKey: string | null;
}

/**
 * What a start-up lookup learnt of this host's names (services/prober/host-identity.service.ts), for the
 * HELO names when `--helo` is not set: each source address's forward-confirmed reverse-DNS name,
 * and the host's fully qualified name.
 */
export interface HostIdentity {
  /** The host's FQDN, or null when it has none (or the lookup did not answer in time). */
  fqdn: string | null;
  /** Source address -> its forward-confirmed PTR name. */
  reverseNames: Readonly<Record<string, string>>;
}

/** Raw inputs: CLI flags by camelCase name (commander's shape). */
export type Flags = Record<string, unknown>;

type Parser<T> = (raw: string, name: string) => T;

/** How a setting's text becomes its value, and how a value is shown in help and docs. */
export interface ValueType<T> {
  parse(raw: string, name: string): T;
  show(value: T): string;
  /** The flag may be given more than once; its values join into one comma list. */
  repeatable?: true;
}

const integer = (min: number, max: number): ValueType<number> => ({
  parse: (raw, name) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return n;
  },
  show: String,
});

const parseString: Parser<string> = (raw, name) => {
  if (raw.trim() === '') throw new ConfigError(`${name} must not be empty`);
  return raw.trim();
};
const string: ValueType<string> = { parse: parseString, show: (s) => s };
/** A domain name, kept in lower case. */
const domain: ValueType<string> = {
  parse: (raw, name) => parseString(raw, name).toLowerCase(),
  show: (s) => s,
};

const boolean: ValueType<boolean> = {
  parse: (raw, name) => {
    const v = raw.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  },
  show: String,
};

const splitList: Parser<string[]> = (raw) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
const list: ValueType<string[]> = { parse: splitList, show: (v) => v.join(','), repeatable: true };

/** Egress source addresses: a comma list of `ip` or `ip=helo-name` (engine/egress/egress.ts). */
const sourceAddresses: ValueType<string[]> = {
  ...list,
  parse: (raw, name) => {
    const entries = splitList(raw, name);
    for (const entry of entries) {
      try {
        parseSourceAddress(entry);
      } catch (error) {
        throw new ConfigError(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return entries;
  },
};

/** Names proxy-addr takes for well-known ranges (loopback, link-local, unique local). */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** A trusted proxy's address or CIDR (`10.0.0.5`, `10.0.0.0/8`, `2001:db8::/32`), or a range's name. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry.toLowerCase())) return true;
  // Written out in full (node:net), not inet_aton's shorthands such as `10.0.0`.
  if (isIP(entry.split('/')[0] ?? '') === 0) return false;
  if (!entry.includes('/')) return true;
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

/** What to set instead, in every refusal of a --trust-proxy value. */
const trustProxyChoices = (name: string): string =>
  `set ${name} to the number of proxies in front of mailverdict (${name}${name.startsWith('--') ? ' ' : '='}1 behind one nginx or Caddy that appends the address it saw), or to the addresses/CIDRs of the proxies you run (e.g. 10.0.0.5,10.0.1.0/24); false when no proxy sets X-Forwarded-For`;

/**
 * `false`, a hop count, or a comma list of proxy addresses / CIDRs. `true` (also the flag alone)
 * is refused: it believes the left-most X-Forwarded-For entry, which the client writes, so that
 * every per-client limit would count whatever the client claims (issue 26).
 */
const trustProxy: ValueType<false | number | string[]> = {
  parse: (raw, name) => {
    const v = raw.trim().toLowerCase();
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    if (['true', 'yes', 'on', ''].includes(v))
      throw new ConfigError(
        `${name} ${v === '' ? 'needs a value' : `"${raw}" is refused`}: trusting every hop believes the left-most X-Forwarded-For entry, which the client writes; ${trustProxyChoices(name)}`,
      );
    if (/^\d+$/.test(v)) return integer(1, 100).parse(v, name);
    const entries = splitList(raw, name);
    for (const e of entries) {
      if (!isProxyAddress(e))
        throw new ConfigError(
          `${name} "${e}" is not a hop count, an IP address or a CIDR: ${trustProxyChoices(name)}`,
        );
    }
    return entries;
  },
  show: (v) => (Array.isArray(v) ? v.join(',') : String(v)),
};

/** `host:port` (`[::1]:9464` for IPv6) of a listener. */
const listenAddress: ValueType<{ host: string; port: number }> = {
  parse: (raw, name) => {
    const m = /^\s*(\[[0-9a-f:.]+\]|[^\s:[\]]+):(\d{1,5})\s*$/i.exec(raw);
    const port = Number(m?.[2]);
    if (!m || port > 65535)
      throw new ConfigError(`${name} must be host:port, e.g. 127.0.0.1:9464 or [::1]:9464, got "${raw}"`);
    return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
  },
  show: (v) => (v.host.includes(':') ? `[${v.host}]:${v.port}` : `${v.host}:${v.port}`),
};

/** A secret token of at least 16 printable characters; shown masked. */
const token: ValueType<string> = {
  parse: (raw, name) => {
    const v = raw.trim();
    if (!/^[\x21-\x7e]{16,}$/.test(v))
      throw new ConfigError(`${name} must be at least 16 printable characters without spaces`);
    return v;
  },
  show: () => '***',
};

const UNITS: Record<string, number> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR, d: DAY };

/** Parses "72h", "15m", "2s", "500ms", "1d" (or a bare number of milliseconds). */
export function parseDuration(raw: string, name = 'duration'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(raw);
  if (!m) throw new ConfigError(`${name} must be a duration such as 500ms, 2s, 15m, 72h or 1d, got "${raw}"`);
  const ms = Number(m[1]) * UNITS[m[2] ?? 'ms']!;
  if (!Number.isFinite(ms) || ms <= 0) throw new ConfigError(`${name} must be positive, got "${raw}"`);
  return Math.round(ms);
}

/** A duration in the largest unit that states it exactly (hours up to 72h, the figures people know): 72h, 7d, 500ms. */
export function formatDuration(ms: number): string {
  if (ms > 3 * DAY && ms % DAY === 0) return `${ms / DAY}d`;
  for (const unit of ['h', 'm', 's'] as const)
    if (ms >= UNITS[unit]! && ms % UNITS[unit]! === 0) return `${ms / UNITS[unit]!}${unit}`;
  return `${ms}ms`;
}

const duration: ValueType<number> = { parse: (raw, name) => parseDuration(raw, name), show: formatDuration };
/** A duration, or 0 / "off" for none. */
const durationOrOff: ValueType<number> = {
  parse: (raw, name) => (/^\s*(0|off)\s*$/i.test(raw) ? 0 : parseDuration(raw, name)),
  show: (ms) => (ms === 0 ? 'off' : formatDuration(ms)),
};

/** One of a fixed list of words. */
const oneOf = <T extends string>(words: readonly T[]): ValueType<T> => ({
  parse: (raw, name) => {
    const v = raw.trim().toLowerCase();
    if (!(words as readonly string[]).includes(v))
      throw new ConfigError(`${name} must be one of ${words.join(', ')}, got "${raw}"`);
    return v as T;
  },
  show: (v) => v,
});

/** A 32-byte key in base64 (store/secret-box.ts reads it); shown masked. */
const secretKey: ValueType<string> = {
  parse: (raw, name) => {
    const v = raw.trim();
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(v) || Buffer.from(v, 'base64').length !== 32)
      throw new ConfigError(
        `${name} must be a 32-byte key in base64 (mailverdict secrets generate-key prints one)`,
      );
    return v;
  },
  show: () => '***',
};

/** The value with any `user:password@` part masked: URLs of stores and relays carry secrets. */
function withoutCredentials(raw: string): string {
  return raw.replace(/\/\/[^/?#]*@/, '//***@');
}

const url = (protocols: string[]): ValueType<string> => ({
  parse: (raw, name) => {
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
  },
  show: withoutCredentials,
});

/** An API key (`svc_live_…`): one word, never echoed (not in an error, not in help). */
const apiKey: ValueType<string> = {
  parse: (raw, name) => {
    const v = raw.trim();
    if (!/^[\x21-\x7e]+$/.test(v))
      throw new ConfigError(`${name} must be an API key (one word, svc_live_… or svc_test_…)`);
    return v;
  },
  show: () => '***',
};

const json: ValueType<Record<string, unknown>> = {
  parse: (raw, name) => {
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch {
      throw new ConfigError(`${name} must be a JSON object`);
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      throw new ConfigError(`${name} must be a JSON object`);
    return v as Record<string, unknown>;
  },
  show: (v) => JSON.stringify(v),
};

/**
 * The commands that take settings, by their path (`members invite`). A setting for `members`
 * is taken by each of its sub-commands.
 */
export type CommandName =
  | 'serve'
  | 'worker'
  | 'verify'
  | 'batch'
  | 'doctor'
  | 'egresses'
  | 'migrate'
  | 'accounts'
  | 'keys'
  | 'members'
  | 'audit'
  | 'secrets rotate'
  | 'operators'
  | 'accounts create'
  | 'members invite'
  | 'members reset'
  | 'operators add'
  | 'mcp'
  | 'keys create';

/** What a derived default is computed from. */
interface BaseSettings {
  host: string;
  port: number;
  helo: string;
}

/**
 * One setting: its flag, its environment variable, how its text is parsed, its default, its
 * help, and the commands that take it. The commands' options (cli/cli-support.ts) and
 * docs/configuration.md (`npm run docs:config`) are made from these rows.
 */
export type Setting<T> = {
  /**
   * commander's flag: `--name <value>`; `--name [value]` when the flag alone means true; `--no-name`
   * for a setting that is on by default.
   */
  flag: string;
  env: `MAILVERDICT_${string}`;
  parser: ValueType<T>;
  /** Help of the flag and of docs/configuration.md (Markdown: `code` and [links](…)). */
  help: string;
  commands: readonly CommandName[];
} & (
  | { default: T; defaultText?: string }
  | {
      default: (base: BaseSettings) => T;
      /** What the derived default is, for help and docs. */ defaultText: string;
    }
);

const setting = <T>(s: Setting<T>): Setting<T> => s;

/**
 * The HELO name without `--helo`: the host's name when it is fully qualified (servers refuse
 * anything else in HELO), otherwise `localhost`, which `serve` and `worker` warn about.
 */
export function defaultHeloName(host: string): string {
  return isFullyQualified(host) ? host.toLowerCase().replace(/\.$/, '') : 'localhost';
}

/** The store: every command that opens it. */
const STORE: readonly CommandName[] = [
  'serve',
  'worker',
  'migrate',
  'accounts',
  'keys',
  'members',
  'audit',
  'secrets rotate',
  'operators',
];
/** log2 of scrypt's N for new password hashes: the `passwordHashCost` setting's default and bounds. */
export const PASSWORD_HASH_COST = { default: 15, min: 10, max: 20 } as const;

/** The service's processes. */
const SERVICE: readonly CommandName[] = ['serve', 'worker'];
/** The verification engine: the service, the commands that verify locally, and `doctor`, which checks its set-up. */
const ENGINE: readonly CommandName[] = ['serve', 'worker', 'verify', 'batch', 'doctor', 'egresses'];
/** The reputation guard: the service runs it, `egresses` shows it. */
const GUARD: readonly CommandName[] = ['serve', 'worker', 'egresses'];
/** The batch engine. */
const BATCH: readonly CommandName[] = ['serve', 'worker', 'batch'];
/** Links and e-mails to people: the service, and the members commands that send a link. */
const LINKS: readonly CommandName[] = [
  'serve',
  'worker',
  'accounts create',
  'members invite',
  'members reset',
  'operators add',
];

/** Every setting, one row each, in the order of docs/configuration.md. */
export const SETTINGS = {
  port: setting({
    flag: '--port <n>',
    env: 'MAILVERDICT_PORT',
    parser: integer(0, 65535),
    default: 8080,
    help: 'port to listen on; `0`: any free port',
    commands: ['serve'],
  }),
  host: setting({
    flag: '--host <address>',
    env: 'MAILVERDICT_HOST',
    parser: string,
    default: '127.0.0.1',
    help: 'address to listen on',
    commands: ['serve'],
  }),
  dataDir: setting({
    flag: '--data-dir <dir>',
    env: 'MAILVERDICT_DATA_DIR',
    parser: string,
    default: './data',
    help: 'data directory: holds `mailverdict.db` (SQLite, WAL)',
    commands: STORE,
  }),
  databaseUrl: setting<string | null>({
    flag: '--database-url <url>',
    env: 'MAILVERDICT_DATABASE_URL',
    parser: url(['postgres:', 'postgresql:']),
    default: null,
    defaultText: 'none',
    help: '`postgres://user:pass@host:5432/db`: the store on PostgreSQL, shared by many API and worker processes (a schema other than `public`: `?options=-c%20search_path%3Dname`). None: the SQLite file in `--data-dir`',
    commands: STORE,
  }),
  databasePoolSize: setting({
    flag: '--database-pool-size <n>',
    env: 'MAILVERDICT_DATABASE_POOL_SIZE',
    parser: integer(1, 1000),
    default: 10,
    help: 'PostgreSQL connections per process',
    commands: STORE,
  }),
  secretKeyFile: setting<string | null>({
    flag: '--secret-key-file <path>',
    env: 'MAILVERDICT_SECRET_KEY_FILE',
    parser: string,
    default: null,
    defaultText: '<data-dir>/secret.key with SQLite (made at first start, mode 0600); none with PostgreSQL',
    help: 'file holding the 32-byte key (base64) that seals the webhook signing secrets and TOTP secrets in the store; with `--database-url` every process needs the same key, and `serve`/`worker` refuse to start without one ([docs/security.md](security.md#secrets-at-rest); `mailverdict secrets generate-key` prints a key)',
    commands: STORE,
  }),
  secretKey: setting<string | null>({
    flag: '--secret-key <base64>',
    env: 'MAILVERDICT_SECRET_KEY',
    parser: secretKey,
    default: null,
    defaultText: 'none',
    help: 'the secret key itself instead of `--secret-key-file` (prefer the environment variable: a flag shows in the process list)',
    commands: STORE,
  }),
  secretKeyPreviousFile: setting<string | null>({
    flag: '--secret-key-previous-file <path>',
    env: 'MAILVERDICT_SECRET_KEY_PREVIOUS_FILE',
    parser: string,
    default: null,
    defaultText: 'none',
    help: 'during a key rotation: file holding the previous (or next) key, used only to open secrets sealed with it; `mailverdict secrets rotate` seals them again with the current key',
    commands: STORE,
  }),
  secretKeyPrevious: setting<string | null>({
    flag: '--secret-key-previous <base64>',
    env: 'MAILVERDICT_SECRET_KEY_PREVIOUS',
    parser: secretKey,
    default: null,
    defaultText: 'none',
    help: 'the previous key itself instead of `--secret-key-previous-file`',
    commands: STORE,
  }),
  publicBaseUrl: setting({
    flag: '--public-base-url <url>',
    env: 'MAILVERDICT_PUBLIC_BASE_URL',
    parser: url(['http:', 'https:']),
    default: ({ host, port }) => defaultPublicBaseUrl(host, port),
    defaultText: 'http://<host>:<port>',
    help: 'absolute base of links: `download_url`, the dashboard invitation and password-reset links, the widget’s address in the snippet of `keys create --publishable`',
    commands: [...LINKS, 'keys create'],
  }),
  redisUrl: setting<string | null>({
    flag: '--redis-url <url>',
    env: 'MAILVERDICT_REDIS_URL',
    parser: url(['redis:', 'rediss:']),
    default: null,
    defaultText: 'none',
    help: '`redis://[user:pass@]host:port[/db]` or `rediss://…` (TLS), Redis 6.2 or later: per-account rate limits shared by every API process (precise sliding second; fail open with a metric while Redis is unreachable, see [docs/api.md](api.md#rate-limit)), and the per-MX-host session cap, host back-off, catch-all and negative DNS answers shared by every worker (these never fail open), and the result cache of verifications shared by every process (a miss while Redis is unreachable); `/readyz` checks it. None: each process counts its own limits and applies its own caps',
    commands: [...SERVICE, 'egresses'],
  }),
  redisKeyPrefix: setting({
    flag: '--redis-key-prefix <prefix>',
    env: 'MAILVERDICT_REDIS_KEY_PREFIX',
    parser: string,
    default: 'mailverdict:',
    help: 'prefix of every Redis key, so that deployments sharing one Redis never meet',
    commands: [...SERVICE, 'egresses'],
  }),
  testDomain: setting({
    flag: '--test-domain <domain>',
    env: 'MAILVERDICT_TEST_DOMAIN',
    parser: domain,
    default: 'example.com',
    help: 'domain of the test-key fixtures',
    commands: SERVICE,
  }),
  logLevel: setting({
    flag: '--log-level <level>',
    env: 'MAILVERDICT_LOG_LEVEL',
    parser: string,
    default: 'info',
    help: 'pino level: `fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`',
    commands: SERVICE,
  }),
  bootstrap: setting({
    flag: '--no-bootstrap',
    env: 'MAILVERDICT_BOOTSTRAP',
    parser: boolean,
    default: true,
    help: 'create nothing on a store without an account; without the flag, `serve` creates the operator’s account, its keys and the owner’s dashboard invitation once it listens (and completes them on the next start when a start failed before showing the keys)',
    commands: ['serve'],
  }),
  bootstrapPlan: setting({
    flag: '--bootstrap-plan <slug>',
    env: 'MAILVERDICT_BOOTSTRAP_PLAN',
    parser: string,
    default: 'unlimited',
    help: 'the plan of the account the first start creates, the operator’s own: `unlimited` has no monthly quota; any plan of `--plans`',
    commands: ['serve'],
  }),
  plans: setting({
    flag: '--plans <json>',
    env: 'MAILVERDICT_PLANS',
    parser: json,
    default: {},
    help: 'plan overrides (JSON), e.g. `{"free":{"monthly_quota":500}}`',
    commands: [...SERVICE, 'keys'],
  }),
  helo: setting({
    flag: '--helo <name>',
    env: 'MAILVERDICT_HELO_NAME',
    parser: string,
    default: defaultHeloName(hostname()),
    defaultText:
      'each source address’s forward-confirmed reverse-DNS name; else the host’s fully qualified name; else `localhost` ([docs/prober.md](prober.md#identity-the-helo-name))',
    help: 'EHLO/HELO name of probes: use a real, resolvable host name (a domain you own, with matching reverse DNS); `mailverdict doctor` checks it ([docs/prober.md](prober.md))',
    commands: ENGINE,
  }),
  mailFrom: setting({
    flag: '--mail-from <address>',
    env: 'MAILVERDICT_MAIL_FROM',
    parser: string,
    default: ({ helo }) => `verify@${helo}`,
    defaultText: 'verify@<helo>',
    help: 'MAIL FROM of probes',
    commands: ENGINE,
  }),
  smtpPort: setting({
    flag: '--smtp-port <n>',
    env: 'MAILVERDICT_SMTP_PORT',
    parser: integer(1, 65535),
    default: 25,
    help: 'port of the mail servers probed',
    commands: ENGINE,
  }),
  proxy: setting({
    flag: '--proxy <url>',
    env: 'MAILVERDICT_PROXIES',
    parser: list,
    default: [],
    defaultText: 'none',
    help: '`socks5://[user:pass@]host:port` for probes (repeatable or comma list); each proxy is an egress',
    commands: ENGINE,
  }),
  sourceAddress: setting({
    flag: '--source-address <ip[=helo]>',
    env: 'MAILVERDICT_SOURCE_ADDRESSES',
    parser: sourceAddresses,
    default: [],
    defaultText: 'none (the system picks)',
    help: 'egress pool: `ip` or `ip=helo-name` (repeatable or comma list); politeness (per-host cap, back-off, reject budget) holds per (egress, MX host), and an egress refused by policy rests for that host ([docs/batch-engine.md](batch-engine.md#egress-pools))',
    commands: ENGINE,
  }),
  maxMxHosts: setting({
    flag: '--max-mx-hosts <n>',
    env: 'MAILVERDICT_MAX_MX_HOSTS',
    parser: integer(1, 10),
    default: 3,
    help: 'MX hosts tried per probe',
    commands: ENGINE,
  }),
  starttls: setting<StarttlsMode>({
    flag: '--starttls <mode>',
    env: 'MAILVERDICT_STARTTLS',
    parser: oneOf(STARTTLS_MODES),
    default: 'opportunistic',
    help: 'STARTTLS of probes: `opportunistic` (when offered; 3 more round trips per new session), `never` (clear text: the recipient address crosses the network readable by anyone on the path), `required` (a host without working STARTTLS is not asked: `unknown` / `smtp_unavailable`) ([docs/prober.md](prober.md#starttls))',
    commands: ENGINE,
  }),
  smtpSessionIdle: setting({
    flag: '--smtp-session-idle <duration>',
    env: 'MAILVERDICT_SMTP_SESSION_IDLE',
    parser: durationOrOff,
    default: WARM_DEFAULTS.idleMs,
    help: 'single verifications: how long an SMTP session stays open unused for the next verification at the same MX host (a warm one costs 1 round trip instead of 4-7); `off`: QUIT after each ([docs/batch-engine.md](batch-engine.md#warm-sessions-for-single-verifications))',
    commands: ENGINE,
  }),
  smtpSessionMaxAge: setting({
    flag: '--smtp-session-max-age <duration>',
    env: 'MAILVERDICT_SMTP_SESSION_MAX_AGE',
    parser: duration,
    default: WARM_DEFAULTS.maxAgeMs,
    help: 'single verifications: the oldest a warm SMTP session gets before it is closed',
    commands: ENGINE,
  }),
  smtpSessionMaxVerifications: setting({
    flag: '--smtp-session-max-verifications <n>',
    env: 'MAILVERDICT_SMTP_SESSION_MAX_VERIFICATIONS',
    parser: integer(1, 1000),
    default: WARM_DEFAULTS.maxVerifications,
    help: 'single verifications: verifications one warm SMTP session carries at most',
    commands: ENGINE,
  }),
  allowInternalTargets: setting({
    flag: '--allow-internal-targets',
    env: 'MAILVERDICT_ALLOW_INTERNAL_TARGETS',
    parser: boolean,
    // The service takes addresses from untrusted callers: never knock on port 25 inside our own network.
    default: false,
    help: 'probe mail hosts on loopback/private/link-local addresses (tests and local use only)',
    commands: ENGINE,
  }),
  referenceDomain: setting({
    flag: '--reference-domain <domain>',
    env: 'MAILVERDICT_REFERENCE_DOMAIN',
    parser: domain,
    default: 'gmail.com',
    help: '`doctor`: the domain whose MX hosts the port-25 check greets from each egress (a large provider that answers everyone; [docs/prober.md](prober.md))',
    commands: ['doctor'],
  }),
  dnsblZone: setting({
    flag: '--dnsbl-zone <zone>',
    env: 'MAILVERDICT_DNSBL_ZONES',
    parser: list,
    default: ['zen.spamhaus.org', 'b.barracudacentral.org', 'bl.spamcop.net', 'psbl.surriel.com'],
    help: '`doctor` and the reputation guard: DNS blocklists each egress address is looked up on (repeatable or comma list); Spamhaus and Barracuda refuse queries through public resolvers, so point `--dns-server` at a resolver of your own ([docs/prober.md](prober.md#blocklists))',
    commands: ['doctor', ...GUARD],
  }),
  egressCheckInterval: setting({
    flag: '--egress-check-interval <duration>',
    env: 'MAILVERDICT_EGRESS_CHECK_INTERVAL',
    parser: durationOrOff,
    default: 1 * HOUR,
    help: 'reputation guard: how often each source address is looked up on the `--dnsbl-zone` lists; a listed egress rests until delisted. With `--redis-url` one process per interval asks for all. `0` or `off`: no checks ([docs/prober.md](prober.md#the-reputation-guard))',
    commands: GUARD,
  }),
  egressBlockHosts: setting({
    flag: '--egress-block-hosts <n>',
    env: 'MAILVERDICT_EGRESS_BLOCK_HOSTS',
    parser: integer(1, 1000),
    default: 3,
    help: 'reputation guard: distinct mail hosts refusing an egress by policy (5xx at the greeting; 5.7.x, a blocklist or the client address named, at any stage) within `--egress-block-window` that mark it degraded',
    commands: GUARD,
  }),
  egressBlockWindow: setting({
    flag: '--egress-block-window <duration>',
    env: 'MAILVERDICT_EGRESS_BLOCK_WINDOW',
    parser: duration,
    default: 10 * MINUTE,
    help: 'reputation guard: the window of `--egress-block-hosts`',
    commands: GUARD,
  }),
  egressBlockRest: setting({
    flag: '--egress-block-rest <duration>',
    env: 'MAILVERDICT_EGRESS_BLOCK_REST',
    parser: duration,
    default: 1 * HOUR,
    help: 'reputation guard: how long a degraded egress opens no new sessions',
    commands: GUARD,
  }),
  dnsServer: setting({
    flag: '--dns-server <host[:port]>',
    env: 'MAILVERDICT_DNS_SERVERS',
    parser: list,
    default: [],
    defaultText: 'system resolvers',
    help: 'DNS server to ask, `ip[:port]` (repeatable or comma list)',
    commands: ENGINE,
  }),
  dnsTrustName: setting({
    flag: '--dns-trust-name <name>',
    env: 'MAILVERDICT_DNS_TRUST_NAMES',
    parser: list,
    default: ['.', 'gmail.com', 'outlook.com', 'yahoo.com'],
    help: 'names that must exist, asked to judge whether the DNS resolver tells the truth: `.` is asked for the root’s NS, any other name for MX (repeatable or comma list; [docs/prober.md](prober.md#a-resolver-that-tells-the-truth))',
    commands: ENGINE,
  }),
  dnsTrustAbsentZone: setting({
    flag: '--dns-trust-absent-zone <zone>',
    env: 'MAILVERDICT_DNS_TRUST_ABSENT_ZONE',
    parser: domain,
    default: 'com',
    help: 'a TLD under which a random label is asked: a resolver that answers for it invents answers',
    commands: ENGINE,
  }),
  dnsTrustInterval: setting({
    flag: '--dns-trust-interval <duration>',
    env: 'MAILVERDICT_DNS_TRUST_INTERVAL',
    parser: durationOrOff,
    default: 5 * MINUTE,
    help: 'how often the resolver is checked while trusted (every 30 s while not, and after a burst of NXDOMAIN answers); while not trusted, NXDOMAIN and “no mail host” answers are unknown / `dns_error`. `0` or `off`: no checks, every answer believed',
    commands: ENGINE,
  }),
  dnsTimeout: setting({
    flag: '--dns-timeout <duration>',
    env: 'MAILVERDICT_DNS_TIMEOUT',
    parser: duration,
    default: 2 * SECOND,
    help: 'per DNS try; a query gives up after timeout × tries',
    commands: ENGINE,
  }),
  dnsTries: setting({
    flag: '--dns-tries <n>',
    env: 'MAILVERDICT_DNS_TRIES',
    parser: integer(1, 10),
    default: 2,
    help: 'attempts per DNS query',
    commands: ENGINE,
  }),
  dnsCacheTtl: setting({
    flag: '--dns-cache-ttl <duration>',
    env: 'MAILVERDICT_DNS_CACHE_TTL',
    parser: duration,
    default: 10 * MINUTE,
    help: 'cache of DNS answers',
    commands: ENGINE,
  }),
  dnsNegativeCacheTtl: setting({
    flag: '--dns-negative-cache-ttl <duration>',
    env: 'MAILVERDICT_DNS_NEGATIVE_CACHE_TTL',
    parser: duration,
    default: 1 * MINUTE,
    help: 'cache of NXDOMAIN / no mail host / null MX (SERVFAIL and timeouts: at most 5 s)',
    commands: ENGINE,
  }),
  catchAllCacheTtl: setting({
    flag: '--catch-all-cache-ttl <duration>',
    env: 'MAILVERDICT_CATCH_ALL_CACHE_TTL',
    parser: duration,
    default: 1 * HOUR,
    help: 'cache of catch-all results per domain',
    commands: ENGINE,
  }),
  resultCacheTtlDeliverable: setting({
    flag: '--result-cache-ttl-deliverable <duration>',
    env: 'MAILVERDICT_RESULT_CACHE_TTL_DELIVERABLE',
    parser: durationOrOff,
    default: 24 * HOUR,
    help: 'how long a deliverable answer is given again without a probe, per account and address ([docs/api.md](api.md#result-cache)); `0` or `off`: not cached',
    commands: SERVICE,
  }),
  resultCacheTtlUndeliverable: setting({
    flag: '--result-cache-ttl-undeliverable <duration>',
    env: 'MAILVERDICT_RESULT_CACHE_TTL_UNDELIVERABLE',
    parser: durationOrOff,
    default: 24 * HOUR,
    help: 'the same for undeliverable answers',
    commands: SERVICE,
  }),
  resultCacheTtlRisky: setting({
    flag: '--result-cache-ttl-risky <duration>',
    env: 'MAILVERDICT_RESULT_CACHE_TTL_RISKY',
    parser: durationOrOff,
    default: 1 * HOUR,
    help: 'the same for risky answers (catch-all, mailbox full, disposable)',
    commands: SERVICE,
  }),
  resultCacheTtlUnknown: setting({
    flag: '--result-cache-ttl-unknown <duration>',
    env: 'MAILVERDICT_RESULT_CACHE_TTL_UNKNOWN',
    parser: durationOrOff,
    // "Could not find out" is worth asking again: never cached unless the operator says so.
    default: 0,
    help: 'the same for unknown answers: "could not find out" is worth asking again',
    commands: SERVICE,
  }),
  resultCacheSize: setting({
    flag: '--result-cache-size <n>',
    env: 'MAILVERDICT_RESULT_CACHE_SIZE',
    parser: integer(0, 10_000_000),
    default: 50_000,
    help: 'answers kept in each process’s memory when there is no Redis (least recently used dropped first); with `--redis-url` the cache is in Redis, shared by every process; `0`: no cache without Redis',
    commands: SERVICE,
  }),
  resultCacheMemory: setting({
    flag: '--result-cache-memory <mb>',
    env: 'MAILVERDICT_RESULT_CACHE_MEMORY',
    parser: integer(0, 1_000_000),
    default: 16,
    help: 'megabytes (10^6 bytes) those answers may take at most, whichever of the two bounds comes first (about 0.5 KB an answer for a short address, 1 KB for one of 254 characters); `0`: no cache without Redis',
    commands: SERVICE,
  }),
  resultRetention: setting({
    flag: '--result-retention <duration>',
    env: 'MAILVERDICT_RESULT_RETENTION',
    parser: duration,
    default: 72 * HOUR,
    help: 'how long batch results are kept',
    commands: SERVICE,
  }),
  auditRetention: setting({
    flag: '--audit-retention <duration>',
    env: 'MAILVERDICT_AUDIT_RETENTION',
    parser: duration,
    default: 365 * DAY,
    help: 'how long the entries of each account’s security log are kept (docs/dashboard.md); older ones are deleted by the retention sweep',
    commands: SERVICE,
  }),
  outcomeRetention: setting({
    flag: '--outcome-retention <duration>',
    env: 'MAILVERDICT_OUTCOME_RETENTION',
    parser: duration,
    default: 730 * DAY,
    help: 'how long delivery outcomes (bounces, deliveries, complaints; docs/outcomes.md) are kept; older ones are deleted by the retention sweep and refused at intake',
    commands: SERVICE,
  }),
  idempotencyTtl: setting({
    flag: '--idempotency-ttl <duration>',
    env: 'MAILVERDICT_IDEMPOTENCY_TTL',
    parser: duration,
    default: 24 * HOUR,
    help: 'how long `Idempotency-Key`s are kept',
    commands: SERVICE,
  }),
  usageCacheTtl: setting({
    flag: '--usage-cache-ttl <duration>',
    env: 'MAILVERDICT_USAGE_CACHE_TTL',
    parser: duration,
    default: 1 * SECOND,
    help: 'how far `GET /v1/account/usage` may lag counts made by *other* processes (a process’s own counts show at once); `0` turns the cache off',
    commands: ['serve'],
  }),
  concurrency: setting({
    flag: '--concurrency <n>',
    env: 'MAILVERDICT_CONCURRENCY',
    parser: integer(1, 10_000),
    default: DEFAULT_CONCURRENCY,
    help: 'SMTP sessions in flight per process: of batches, and (counted apart) of single verifications',
    commands: BATCH,
  }),
  perHostConcurrency: setting({
    flag: '--per-host-concurrency <n>',
    env: 'MAILVERDICT_PER_HOST_CONCURRENCY',
    parser: integer(1, 1000),
    default: DEFAULT_PER_HOST_CONCURRENCY,
    help: 'SMTP sessions per MX host address and egress: batches and single verifications together (the session broker), across processes through Redis',
    commands: BATCH,
  }),
  providerConcurrency: setting({
    flag: '--provider-concurrency <n>',
    env: 'MAILVERDICT_PROVIDER_CONCURRENCY',
    parser: integer(1, 1000),
    default: DEFAULT_PROVIDER_CONCURRENCY,
    help: 'SMTP sessions to all the MX hosts of one mail provider (Google, Microsoft 365, Yahoo… by MX host name) at once, per egress: batches and single verifications together; shared through Redis like the per-host cap',
    commands: BATCH,
  }),
  providerSessionRate: setting({
    flag: '--provider-session-rate <n>',
    env: 'MAILVERDICT_PROVIDER_SESSION_RATE',
    parser: integer(1, 1000),
    default: DEFAULT_PROVIDER_SESSIONS_PER_SECOND,
    help: 'batch: new SMTP sessions per second to one mail provider’s MX hosts, per egress; single verifications’ new sessions count too (they do not wait); shared through Redis',
    commands: BATCH,
  }),
  greylistRetries: setting({
    flag: '--greylist-retries <n>',
    env: 'MAILVERDICT_GREYLIST_RETRIES',
    parser: integer(0, 10),
    default: 2,
    help: 'batch: retries of a greylisted address',
    commands: BATCH,
  }),
  greylistDelay: setting({
    flag: '--greylist-delay <duration>',
    env: 'MAILVERDICT_GREYLIST_DELAY',
    parser: duration,
    default: 2 * MINUTE,
    help: 'batch: delay before such a retry',
    commands: BATCH,
  }),
  chunkSize: setting({
    flag: '--chunk-size <n>',
    env: 'MAILVERDICT_CHUNK_SIZE',
    parser: integer(10, 100_000),
    default: 1000,
    help: 'batch: addresses per stored chunk',
    commands: SERVICE,
  }),
  lease: setting({
    flag: '--lease <duration>',
    env: 'MAILVERDICT_WORKER_LEASE',
    parser: duration,
    default: 30 * SECOND,
    help: 'batch: a worker’s lease on a chunk without a heartbeat',
    commands: SERVICE,
  }),
  pollInterval: setting({
    flag: '--poll-interval <duration>',
    env: 'MAILVERDICT_WORKER_POLL_INTERVAL',
    parser: duration,
    default: 500,
    help: 'batch: idle worker poll interval',
    commands: SERVICE,
  }),
  chunkConcurrency: setting({
    flag: '--chunk-concurrency <n>',
    env: 'MAILVERDICT_CHUNK_CONCURRENCY',
    parser: integer(1, 64),
    default: 4,
    help: 'batch: chunks one worker process verifies at once',
    commands: SERVICE,
  }),
  testModeChunkDelay: setting({
    flag: '--test-mode-chunk-delay <ms>',
    env: 'MAILVERDICT_TEST_MODE_CHUNK_DELAY_MS',
    parser: integer(0, 60_000),
    default: 0,
    help: 'batch: pause in milliseconds after each test-key chunk (lets demos and tests watch a job run; keep 0)',
    commands: SERVICE,
  }),
  embeddedWorkers: setting({
    flag: '--no-embedded-workers',
    env: 'MAILVERDICT_EMBEDDED_WORKERS',
    parser: boolean,
    default: true,
    help: 'run no batch workers inside `serve`: only the API and the dashboard (run `mailverdict worker` processes beside it); without the flag, `serve` runs them too',
    commands: ['serve'],
  }),
  authFailureRateLimit: setting({
    flag: '--auth-failure-rate-limit <n>',
    env: 'MAILVERDICT_AUTH_FAILURE_RATE_LIMIT',
    parser: integer(0, 100_000),
    default: 10,
    help: 'failed authentications per client address and second before 429 `rate_limit_exceeded`; `0`: unlimited',
    commands: ['serve'],
  }),
  publishableVisitorRateLimit: setting({
    flag: '--publishable-visitor-rate-limit <n>',
    env: 'MAILVERDICT_PUBLISHABLE_VISITOR_RATE_LIMIT',
    parser: integer(1, 100_000),
    default: 2,
    help: 'publishable keys (docs/widget.md): requests per second from one visitor’s address, for keys that set none',
    commands: ['serve'],
  }),
  publishableKeyRateLimit: setting({
    flag: '--publishable-key-rate-limit <n>',
    env: 'MAILVERDICT_PUBLISHABLE_KEY_RATE_LIMIT',
    parser: integer(1, 100_000),
    default: 20,
    help: 'publishable keys: requests per second of one key, all visitors together, for keys that set none',
    commands: ['serve'],
  }),
  publishableDailyShare: setting({
    flag: '--publishable-daily-share <percent>',
    env: 'MAILVERDICT_PUBLISHABLE_DAILY_SHARE',
    parser: integer(1, 100),
    default: 2,
    help: 'publishable keys: the daily cap of a key that sets none, in percent of its account’s monthly quota (at least 1 verification): with 2, one day at the cap spends 2 % of the month and 30 days 60 %, so a stranger who reads the page cannot spend the month ([docs/widget.md](widget.md#limits))',
    commands: ['serve', 'keys'],
  }),
  publishableDailyCap: setting({
    flag: '--publishable-daily-cap <n>',
    env: 'MAILVERDICT_PUBLISHABLE_DAILY_CAP',
    parser: integer(1, 100_000_000),
    default: 1000,
    help: 'publishable keys: verifications per UTC day of a key that sets none, when its account has no monthly quota (otherwise `--publishable-daily-share` decides)',
    commands: ['serve', 'keys'],
  }),
  trustProxy: setting<false | number | string[]>({
    flag: '--trust-proxy [hops|proxies]',
    env: 'MAILVERDICT_TRUST_PROXY',
    parser: trustProxy,
    default: false,
    help: 'believe `X-Forwarded-For` for the client address: the number of proxies in front (`1` behind one nginx or Caddy), or the proxies’ addresses/CIDRs (comma list); the client is the nearest address not trusted, and one that is not an IP address is refused (400 `invalid_client_address`). `true` and the flag alone are refused: they would believe the client’s own entry. Leave `false` unless a proxy you run sets it ([docs/security.md](security.md#behind-a-reverse-proxy))',
    commands: ['serve'],
  }),
  metricsListen: setting<{ host: string; port: number } | null>({
    flag: '--metrics-listen <host:port>',
    env: 'MAILVERDICT_METRICS_LISTEN',
    parser: listenAddress,
    default: null,
    defaultText: 'none (`/metrics` on the main listener)',
    help: '`GET /metrics` on a listener of its own (e.g. `127.0.0.1:9464`) and no longer on the main one, which a widget or a proxy exposes to the Internet; the way to go behind a proxy ([docs/security.md](security.md#metrics))',
    commands: ['serve'],
  }),
  metricsToken: setting<string | null>({
    flag: '--metrics-token <token>',
    env: 'MAILVERDICT_METRICS_TOKEN',
    parser: token,
    default: null,
    defaultText: 'none',
    help: '`GET /metrics` answers only `Authorization: Bearer <token>` (Prometheus: `authorization: {credentials: …}`); others get 404 as for an unknown route. Prefer the environment variable: a flag shows in the process list',
    commands: ['serve'],
  }),
  allowInsecureWebhooks: setting({
    flag: '--allow-insecure-webhooks',
    env: 'MAILVERDICT_ALLOW_INSECURE_WEBHOOKS',
    parser: boolean,
    default: false,
    help: 'allow `http://` and loopback (`127.0.0.0/8`, `::1`) webhook targets; other internal addresses stay refused (development only)',
    commands: SERVICE,
  }),
  webhookTimeout: setting({
    flag: '--webhook-timeout <duration>',
    env: 'MAILVERDICT_WEBHOOK_TIMEOUT',
    parser: duration,
    default: 15 * SECOND,
    help: 'per webhook delivery attempt',
    commands: SERVICE,
  }),
  smtpRelayUrl: setting<string | null>({
    flag: '--smtp-relay-url <url>',
    env: 'MAILVERDICT_SMTP_RELAY_URL',
    parser: url(['smtp:', 'smtps:']),
    default: null,
    defaultText: 'none',
    help: '`smtp://user:pass@host:587` for notification e-mails and dashboard links; none: they are not e-mailed',
    commands: LINKS,
  }),
  notifyFrom: setting({
    flag: '--notify-from <address>',
    env: 'MAILVERDICT_NOTIFY_FROM',
    parser: string,
    default: ({ helo }) => `mailverdict@${helo}`,
    defaultText: 'mailverdict@<helo>',
    help: 'sender of notification e-mails',
    commands: LINKS,
  }),
  sessionIdleTimeout: setting({
    flag: '--session-idle-timeout <duration>',
    env: 'MAILVERDICT_SESSION_IDLE_TIMEOUT',
    parser: duration,
    default: 12 * HOUR,
    help: 'dashboard: a session unused this long ends ([docs/dashboard.md](dashboard.md#sessions))',
    commands: ['serve'],
  }),
  sessionMaxAge: setting({
    flag: '--session-max-age <duration>',
    env: 'MAILVERDICT_SESSION_MAX_AGE',
    parser: duration,
    default: 7 * DAY,
    help: 'dashboard: a session ends this long after sign-in, however much it is used',
    commands: ['serve'],
  }),
  signInRateLimit: setting({
    flag: '--sign-in-rate-limit <n>',
    env: 'MAILVERDICT_SIGN_IN_RATE_LIMIT',
    parser: integer(0, 100_000),
    default: 5,
    help: 'dashboard: sign-ins (and password-reset requests) per client address and second before 429 `rate_limit_exceeded`; `0`: unlimited',
    commands: ['serve'],
  }),
  passwordHashCost: setting({
    flag: '--password-hash-cost <log2N>',
    env: 'MAILVERDICT_PASSWORD_HASH_COST',
    parser: integer(PASSWORD_HASH_COST.min, PASSWORD_HASH_COST.max),
    default: PASSWORD_HASH_COST.default,
    help: "dashboard: the cost of new password hashes, as log2 of scrypt's N (15: 32 MiB and about 0.1-0.2 s per hash on two cores; each step up doubles both). Hashes made at another cost still verify, and a weaker one is remade at the person's next sign-in. Below 15 only for test suites (`serve` warns)",
    commands: ['serve'],
  }),
  signInFailureLimit: setting({
    flag: '--sign-in-failure-limit <n>',
    env: 'MAILVERDICT_SIGN_IN_FAILURE_LIMIT',
    parser: integer(0, 100_000),
    default: 10,
    help: 'dashboard: failed sign-ins for one address from one client address in 15 minutes, past which that pair is refused until the window ends (other clients are only slowed down, never locked out); `0`: unlimited',
    commands: ['serve'],
  }),
  url: setting({
    flag: '--url <url>',
    env: 'MAILVERDICT_URL',
    parser: url(['http:', 'https:']),
    default: 'http://127.0.0.1:8080',
    help: 'the mailverdict server whose API `mcp` calls ([docs/mcp.md](mcp.md))',
    commands: ['mcp'],
  }),
  apiKey: setting<string | null>({
    flag: '--api-key <key>',
    env: 'MAILVERDICT_API_KEY',
    parser: apiKey,
    default: null,
    defaultText: 'none (required)',
    help: 'the API key `mcp` calls the API with (`svc_live_…` or `svc_test_…`): its scopes, quota and rate limit apply. Prefer the environment variable: a flag shows in the process list',
    commands: ['mcp'],
  }),
};

export type SettingKey = keyof typeof SETTINGS;
/** Each setting's parsed value, by key. */
type SettingValues = { [K in SettingKey]: (typeof SETTINGS)[K] extends Setting<infer T> ? T : never };

/** A setting's default as help and docs show it. */
export function defaultText(s: Setting<unknown>): string {
  if (s.defaultText !== undefined) return s.defaultText;
  if (typeof s.default === 'function') throw new Error(`${s.flag}: a derived default needs its defaultText`);
  return s.parser.show(s.default);
}

/**
 * Reads one setting: flag (already typed by commander, or a string) wins over the
 * environment, which wins over the default.
 */
function read<T>(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  key: string,
  s: Setting<T>,
  base: BaseSettings | null,
): T {
  const name = `--${kebab(key)}`;
  const fromFlag = flags[key];
  if (fromFlag !== undefined && fromFlag !== null) {
    if (typeof fromFlag === 'string') return s.parser.parse(fromFlag, name);
    if (Array.isArray(fromFlag)) return s.parser.parse(fromFlag.join(','), name);
    if (typeof fromFlag === 'number' || typeof fromFlag === 'boolean')
      return s.parser.parse(String(fromFlag), name);
    throw new ConfigError(`${name} has an unexpected value`);
  }
  const fromEnv = env[s.env];
  if (fromEnv !== undefined && fromEnv !== '') return s.parser.parse(fromEnv, s.env);
  if (typeof s.default !== 'function') return s.default;
  if (base === null) throw new Error(`${name}: a derived default read before its base`);
  return (s.default as (base: BaseSettings) => T)(base);
}

function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Every setting of the table, parsed from flags, environment and defaults. */
function readSettings(flags: Flags, env: NodeJS.ProcessEnv, identity: HostIdentity | null): SettingValues {
  // Without --helo the host's identity, when looked up, names the probes (docs/prober.md).
  const named = identity === null || given(flags, env, 'helo', SETTINGS.helo) ? null : identity;
  const base: BaseSettings = {
    port: read(flags, env, 'port', SETTINGS.port, null),
    host: read(flags, env, 'host', SETTINGS.host, null),
    helo: named?.fqdn ?? read(flags, env, 'helo', SETTINGS.helo, null),
  };
  const values: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(SETTINGS) as [string, Setting<unknown>][])
    values[key] = read(flags, env, key, s, base);
  values.helo = base.helo;
  if (named !== null) values.sourceAddress = withReverseNames(values.sourceAddress as string[], named);
  return values as SettingValues;
}

/** Whether a setting was given (flag or environment) rather than defaulted. */
function given(flags: Flags, env: NodeJS.ProcessEnv, key: string, s: Setting<unknown>): boolean {
  return (flags[key] !== undefined && flags[key] !== null) || (env[s.env] ?? '') !== '';
}

/** Whether `--helo` (or its variable) is set: then no identity lookup is needed. */
export function heloIsSet(flags: Flags, env: NodeJS.ProcessEnv = process.env): boolean {
  return given(flags, env, 'helo', SETTINGS.helo);
}

/** `ip` entries become `ip=name` where the address has a forward-confirmed reverse-DNS name. */
function withReverseNames(entries: readonly string[], identity: HostIdentity): string[] {
  return entries.map((entry) => {
    const { address, heloName } = parseSourceAddress(entry);
    const name = identity.reverseNames[address];
    return heloName === null && name !== undefined ? `${address}=${name}` : entry;
  });
}

/**
 * Every setting, read once. `identity` (a start-up lookup of this host's names) gives the HELO
 * names when `--helo` is not set; without it the default is the host's name when fully qualified.
 */
export function loadConfig(
  flags: Flags = {},
  env: NodeJS.ProcessEnv = process.env,
  identity: HostIdentity | null = null,
): Readonly<Config> {
  const s = readSettings(flags, env, identity);
  const config: Config = {
    port: s.port,
    host: s.host,
    dataDir: s.dataDir,
    databaseUrl: s.databaseUrl,
    databasePoolSize: s.databasePoolSize,
    secrets: {
      key: s.secretKey,
      keyFile: s.secretKeyFile,
      previousKey: s.secretKeyPrevious,
      previousKeyFile: s.secretKeyPreviousFile,
    },
    redisUrl: s.redisUrl,
    redisKeyPrefix: s.redisKeyPrefix,
    publicBaseUrl: s.publicBaseUrl,
    testDomain: s.testDomain,
    logLevel: s.logLevel,
    bootstrap: s.bootstrap,
    bootstrapPlan: s.bootstrapPlan,
    resultRetentionMs: s.resultRetention,
    auditRetentionMs: s.auditRetention,
    outcomeRetentionMs: s.outcomeRetention,
    idempotencyTtlMs: s.idempotencyTtl,
    usageCacheTtlMs: s.usageCacheTtl,
    engine: {
      dns: {
        servers: s.dnsServer,
        timeoutMs: s.dnsTimeout,
        tries: s.dnsTries,
        positiveTtlMs: s.dnsCacheTtl,
        negativeTtlMs: s.dnsNegativeCacheTtl,
        allowInternalTargets: s.allowInternalTargets,
      },
      smtp: {
        port: s.smtpPort,
        heloName: s.helo,
        mailFrom: s.mailFrom,
        proxies: s.proxy,
        sourceAddresses: s.sourceAddress,
        maxMxHosts: s.maxMxHosts,
        starttls: s.starttls,
        sessions: {
          idleMs: s.smtpSessionIdle,
          maxAgeMs: s.smtpSessionMaxAge,
          maxVerifications: s.smtpSessionMaxVerifications,
        },
        perHostConcurrency: s.perHostConcurrency,
        concurrency: s.concurrency,
        providerConcurrency: s.providerConcurrency,
        providerSessionsPerSecond: s.providerSessionRate,
      },
      catchAllTtlMs: s.catchAllCacheTtl,
    },
    doctor: { referenceDomain: s.referenceDomain, dnsblZones: s.dnsblZone },
    dnsTrust: { names: s.dnsTrustName, absentZone: s.dnsTrustAbsentZone, intervalMs: s.dnsTrustInterval },
    guard: {
      checkIntervalMs: s.egressCheckInterval,
      blockHosts: s.egressBlockHosts,
      blockWindowMs: s.egressBlockWindow,
      blockRestMs: s.egressBlockRest,
    },
    batch: {
      greylistRetries: s.greylistRetries,
      greylistDelayMs: s.greylistDelay,
      chunkSize: s.chunkSize,
      leaseMs: s.lease,
      pollIntervalMs: s.pollInterval,
      embeddedWorkers: s.embeddedWorkers,
      chunkConcurrency: s.chunkConcurrency,
      testModeChunkDelayMs: s.testModeChunkDelay,
    },
    resultCache: {
      ttlMs: {
        deliverable: s.resultCacheTtlDeliverable,
        undeliverable: s.resultCacheTtlUndeliverable,
        risky: s.resultCacheTtlRisky,
        unknown: s.resultCacheTtlUnknown,
      },
      maxEntries: s.resultCacheSize,
      maxBytes: s.resultCacheMemory * 1_000_000,
    },
    allowInsecureWebhooks: s.allowInsecureWebhooks,
    webhookTimeoutMs: s.webhookTimeout,
    smtpRelayUrl: s.smtpRelayUrl,
    notifyFrom: s.notifyFrom,
    planOverrides: s.plans,
    authFailureRateLimit: s.authFailureRateLimit,
    publishable: {
      visitorRateLimit: s.publishableVisitorRateLimit,
      keyRateLimit: s.publishableKeyRateLimit,
      dailyCap: s.publishableDailyCap,
      dailySharePercent: s.publishableDailyShare,
    },
    trustProxy: s.trustProxy,
    metrics: { listen: s.metricsListen, token: s.metricsToken },
    sessionIdleTimeoutMs: s.sessionIdleTimeout,
    sessionMaxAgeMs: s.sessionMaxAge,
    signInRateLimit: s.signInRateLimit,
    passwordHashCost: s.passwordHashCost,
    signInFailureLimit: s.signInFailureLimit,
    mcp: { url: s.url, apiKey: s.apiKey },
  };

  for (const proxy of config.engine.smtp.proxies) url(['socks5:', 'socks:']).parse(proxy, '--proxy');
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
    concurrency: config.engine.smtp.concurrency,
    perHostConcurrency: config.engine.smtp.perHostConcurrency,
    providerConcurrency: config.engine.smtp.providerConcurrency,
    providerSessionsPerSecond: config.engine.smtp.providerSessionsPerSecond,
    greylistRetries: config.batch.greylistRetries,
    greylistDelayMs: config.batch.greylistDelayMs,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    ...overrides,
  };
}
