/**
 * `mailverdict verify ADDRESS...`: runs the engine on each address and prints one result per
 * address, as an aligned table or (with --json) one JSON object per line. Exit 0 when every
 * address was checked, whatever the verdicts; 2 on bad usage. With --transcript, each result has
 * its SMTP conversation (docs/api.md, "The SMTP conversation"): a `transcript` array in the JSON,
 * or printed under the table, one line each, `>` sent and `<` received.
 */
import type { Command } from 'commander';
import { ConfigError } from '../../config.js';
import { invalidDnsServers } from '../../engine/dns/servers.js';
import type { VerificationResult } from '../../engine/types.js';
import { createVerifier } from '../../engine/verifier.js';
import {
  addSettingsOptions,
  commandResolverTrust,
  timeoutOption,
  loadProberConfig,
  warnIfUntrusted,
} from '../cli-support.js';

interface VerifyFlags {
  json?: boolean;
  transcript?: boolean;
  timeoutMs: number;
  /** The engine's settings (SETTINGS rows naming `verify`). */
  [setting: string]: unknown;
}

/** Addresses verified at once: enough to overlap slow servers, few enough to stay polite. */
const CONCURRENCY = 8;

export function registerVerifyCommand(program: Command): void {
  addSettingsOptions(
    program
      .command('verify')
      .description('Verify e-mail addresses: syntax, DNS/MX, SMTP probe, catch-all, disposable/role/free.')
      .argument('<address...>', 'addresses to verify')
      .option('--json', 'print one JSON object per line instead of a table')
      .option('--transcript', 'add the SMTP conversation: every command sent and reply line received')
      .addOption(timeoutOption()),
  ).action(async (addresses: string[], flags: VerifyFlags) => {
    await runVerify(addresses, flags);
  });
}

async function runVerify(addresses: string[], flags: VerifyFlags): Promise<void> {
  const config = await loadProberConfig(flags);
  const invalid = invalidDnsServers(config.engine.dns.servers);
  if (invalid.length > 0) {
    throw new ConfigError(
      `--dns-server (or MAILVERDICT_DNS_SERVERS) must be IP addresses with an optional port, got "${invalid.join(', ')}"`,
    );
  }

  const trust = commandResolverTrust(config);
  const verifier = createVerifier(config.engine, { trust });
  try {
    const results = await mapInOrder(addresses, CONCURRENCY, (address) =>
      verifier.verify(address, { timeoutMs: flags.timeoutMs, transcript: flags.transcript === true }),
    );
    process.stdout.write(
      flags.json === true
        ? results.map((r) => JSON.stringify(r) + '\n').join('')
        : table(results) + results.map(conversation).join(''),
    );
    warnIfUntrusted('verify', trust);
  } finally {
    await verifier.close();
    await trust.close();
  }
}

/** Runs `fn` over `items` with at most `limit` in flight; results keep the input order. */
async function mapInOrder<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

const COLUMNS: { title: string; value: (r: VerificationResult) => string }[] = [
  { title: 'ADDRESS', value: (r) => r.email },
  { title: 'STATUS', value: (r) => r.status },
  { title: 'SCORE', value: (r) => String(r.score) },
  { title: 'REASON', value: (r) => r.reason ?? '-' },
  { title: 'DID YOU MEAN', value: (r) => r.did_you_mean ?? '-' },
  { title: 'MX HOST', value: mxHost },
  { title: 'SMTP', value: smtpReply },
];

function mxHost(r: VerificationResult): string {
  return r.checks.smtp.host ?? r.checks.mx.records[0]?.exchange ?? '-';
}

function smtpReply(r: VerificationResult): string {
  const { code, enhanced_code } = r.checks.smtp;
  if (code === null) return '-';
  return enhanced_code === null ? String(code) : `${code} ${enhanced_code}`;
}

function table(results: VerificationResult[]): string {
  const rows = [
    COLUMNS.map((c) => c.title),
    ...results.map((r) => COLUMNS.map((c) => printable(c.value(r)))),
  ];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map(
      (row) =>
        row
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join('  ')
          .trimEnd() + '\n',
    )
    .join('');
}

/** The SMTP conversation under the table: a heading per address, then `+MS > sent` / `+MS < received`. */
function conversation(r: VerificationResult): string {
  if (r.transcript === undefined) return '';
  const lines = r.transcript.map(
    (l) => `  +${String(l.at_ms).padStart(5)}ms ${l.dir === 'out' ? '>' : '<'} ${printable(l.text)}\n`,
  );
  return `\nSMTP conversation for ${printable(r.email)}:\n${lines.length > 0 ? lines.join('') : '  (no mail server was asked)\n'}`;
}

/** Addresses come from the command line and may hold control characters; never echo them raw. */
function printable(text: string): string {
  return text.replace(/\p{Cc}/gu, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
