/**
 * What the commands share: their settings as flags (each row of SETTINGS in src/config.ts that
 * names the command, read through loadConfig), opening the store, and output.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import {
  ConfigError,
  defaultText,
  heloIsSet,
  loadConfig,
  SETTINGS,
  type Config,
  type Flags,
  type Setting,
} from '../config.js';
import { createResolverTrust, type ResolverTrustMonitor } from '../engine/dns/resolver-trust.js';
import { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS } from '../engine/types.js';
import { isAppError } from '../errors.js';
import { discoverHostIdentity } from '../services/prober/host-identity.service.js';
import type { Executor } from '../store/executor.js';
import { openDatabase } from '../store/db.js';
import { migrateToLatest } from '../store/migrate.js';

/** A repeatable flag's values, each of which may itself be a comma list. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [
    ...(previous ?? []),
    ...value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  ];
}

/** The command's path below the program, as SETTINGS names it: `serve`, `members invite`. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The settings a command takes: the rows naming it or a command it belongs to (`members`). */
export function settingsOf(path: string): [string, Setting<unknown>][] {
  return (Object.entries(SETTINGS) as [string, Setting<unknown>][]).filter(([, s]) =>
    s.commands.some((name) => name === path || path.startsWith(`${name} `)),
  );
}

/**
 * Markdown of the table's help (`code`, *emphasis*, [links](…)) as plain text for `--help`: a
 * link keeps its text, and a link whose text is the document's name leaves nothing twice.
 */
export function plainText(markdown: string): string {
  return markdown.replace(/\[([^\]]+)\]\([^)]+\)/g, '$1').replace(/[`*]/g, '');
}

/**
 * The setting as a commander option; its help names the environment variable and the default.
 * A `--no-…` flag's help says what the flag does, and that the variable set to false does the same.
 */
export function settingOption(s: Setting<unknown>): Option {
  const env = s.flag.startsWith('--no-')
    ? `env ${s.env}=false does the same`
    : `env ${s.env}; default ${defaultText(s)}`;
  const option = new Option(s.flag, plainText(`${s.help} (${env})`));
  return s.parser.repeatable ? option.argParser(collect) : option;
}

/** Adds, as flags, every setting this command takes (SETTINGS in src/config.ts). */
export function addSettingsOptions(cmd: Command): Command {
  for (const [, s] of settingsOf(commandPath(cmd))) cmd.addOption(settingOption(s));
  return cmd;
}

/** The command's settings and `--json`, which every command of the store family takes. */
export function addCommonOptions(cmd: Command): Command {
  return addSettingsOptions(cmd).option('--json', 'print JSON');
}

/**
 * The settings of a command that probes (serve, worker, verify, batch, doctor): without `--helo`,
 * a start-up lookup (short budget, offline-safe) names each egress by its forward-confirmed
 * reverse DNS, or by the host's fully qualified name (services/prober/host-identity.service.ts).
 */
export async function loadProberConfig(options: Record<string, unknown>): Promise<Readonly<Config>> {
  const flags = settingsFlags(options);
  const config = loadConfig(flags);
  if (heloIsSet(flags)) return config;
  return loadConfig(flags, process.env, await discoverHostIdentity(config));
}

/**
 * commander's options as loadConfig flags: the settings only. A `--no-x` option is true by
 * default, which would hide its environment variable, so only an explicit `false` is passed on.
 */
export function settingsFlags(options: Record<string, unknown>): Flags {
  const flags: Flags = {};
  for (const [key, s] of Object.entries(SETTINGS) as [string, Setting<unknown>][]) {
    const value = options[key];
    if (value === undefined || (s.flag.startsWith('--no-') && value !== false)) continue;
    flags[key] = value;
  }
  return flags;
}

function parseTimeout(raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < MIN_TIMEOUT_MS || n > MAX_TIMEOUT_MS) {
    throw new InvalidArgumentError(`must be an integer from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}.`);
  }
  return n;
}

/** `--timeout-ms`: the time budget of each SMTP step, of the commands that verify locally. */
export function timeoutOption(): Option {
  return new Option(
    '--timeout-ms <n>',
    `time budget of each SMTP probe step, ${MIN_TIMEOUT_MS}-${MAX_TIMEOUT_MS} ms`,
  )
    .argParser(parseTimeout)
    .default(DEFAULT_TIMEOUT_MS);
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
  const config = loadConfig(settingsFlags({ ...options }));
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
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${terminalSafe(text())}\n`);
}

/**
 * Text for a terminal: control characters other than newline and tab are shown as `\x1b`, so a
 * stored value (a key's name, an address written before they were refused) cannot move the
 * cursor, ring the bell or rewrite what the operator sees (issue 16). JSON escapes them itself.
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE_IN_TERMINAL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_IN_TERMINAL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;

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

/**
 * The resolver-trust monitor of a command that verifies without a server (`verify`, `batch`): no
 * periodic checks; the first negative answer checks the resolver (engine/dns/resolver-trust.ts).
 */
export function commandResolverTrust(config: Readonly<Config>): ResolverTrustMonitor {
  return createResolverTrust(config.engine.dns, config.dnsTrust, { now: Date.now });
}

/** Says on stderr when answers were not believed because the resolver is not trusted. */
export function warnIfUntrusted(command: string, trust: ResolverTrustMonitor): void {
  const { state, reason } = trust.status();
  if (state !== 'untrusted' && state !== 'unreachable') return;
  process.stderr.write(
    `mailverdict ${command}: the DNS resolver is ${state} (${reason ?? 'no answer'}); ` +
      'NXDOMAIN and "no mail host" answers are reported as unknown / dns_error. ' +
      'Point --dns-server at a resolver that tells the truth (see docs/prober.md).\n',
  );
}
