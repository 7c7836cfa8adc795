/**
 * `mailverdict verify ADDRESS...`: runs the engine on each address and prints one result per
 * address, as an aligned table or (with --json) one JSON object per line. Exit 0 when every
 * address was checked, whatever the verdicts; 2 on bad usage.
 */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { ConfigError, loadConfig } from '../../config.js';
import { invalidDnsServers } from '../../engine/dns/servers.js';
import { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS } from '../../engine/types.js';
import type { VerificationResult } from '../../engine/types.js';
import { createVerifier } from '../../engine/verifier.js';

interface VerifyFlags {
  json?: boolean;
  timeoutMs: number;
  dnsServer?: string[];
  smtpPort?: string;
  helo?: string;
  mailFrom?: string;
  proxy?: string[];
  sourceAddress?: string[];
  allowInternalTargets?: boolean;
}

/** Addresses verified at once: enough to overlap slow servers, few enough to stay polite. */
const CONCURRENCY = 8;

export function registerVerifyCommand(program: Command): void {
  program
    .command('verify')
    .description('Verify e-mail addresses: syntax, DNS/MX, SMTP probe, catch-all, disposable/role/free.')
    .argument('<address...>', 'addresses to verify')
    .option('--json', 'print one JSON object per line instead of a table')
    .option(
      '--timeout-ms <n>',
      `time budget of each SMTP probe, ${MIN_TIMEOUT_MS}-${MAX_TIMEOUT_MS} ms`,
      parseTimeout,
      DEFAULT_TIMEOUT_MS,
    )
    .option('--dns-server <host[:port]>', 'DNS server IP to ask (repeatable or comma-separated)', collect)
    .option('--smtp-port <n>', 'port of the mail servers (default 25)')
    .option('--allow-internal-targets', 'probe mail hosts on loopback/private addresses (testing only)')
    .option('--helo <name>', 'name sent in EHLO/HELO')
    .option('--mail-from <address>', 'sender sent in MAIL FROM')
    .option('--proxy <url>', 'socks5://[user:pass@]host:port (repeatable or comma-separated)', collect)
    .option('--source-address <ip[=helo]>', 'source address(es) to probe from, taken in turn', collect)
    .action(async (addresses: string[], flags: VerifyFlags) => {
      await runVerify(addresses, flags);
    });
}

async function runVerify(addresses: string[], flags: VerifyFlags): Promise<void> {
  const config = loadConfig({
    dnsServer: flags.dnsServer,
    smtpPort: flags.smtpPort,
    helo: flags.helo,
    mailFrom: flags.mailFrom,
    proxy: flags.proxy,
    sourceAddress: flags.sourceAddress,
    allowInternalTargets: flags.allowInternalTargets,
  });
  const invalid = invalidDnsServers(config.engine.dns.servers);
  if (invalid.length > 0) {
    throw new ConfigError(
      `--dns-server (or MAILVERDICT_DNS_SERVERS) must be IP addresses with an optional port, got "${invalid.join(', ')}"`,
    );
  }

  const verifier = createVerifier(config.engine, {});
  try {
    const results = await mapInOrder(addresses, CONCURRENCY, (address) =>
      verifier.verify(address, { timeoutMs: flags.timeoutMs }),
    );
    process.stdout.write(
      flags.json === true ? results.map((r) => JSON.stringify(r) + '\n').join('') : table(results),
    );
  } finally {
    await verifier.close();
  }
}

function parseTimeout(raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < MIN_TIMEOUT_MS || n > MAX_TIMEOUT_MS) {
    throw new InvalidArgumentError(`must be an integer from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}.`);
  }
  return n;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [
    ...(previous ?? []),
    ...value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  ];
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

/** Addresses come from the command line and may hold control characters; never echo them raw. */
function printable(text: string): string {
  return text.replace(/\p{Cc}/gu, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
