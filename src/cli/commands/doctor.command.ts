/**
 * `mailverdict doctor`: checks the prober's identity and reputation from each egress with the
 * engine's settings (the same as `serve` and `worker`) and prints what to fix, as a table or
 * (with --json) one JSON line `{"ok", "checks": [{"id", "status", "egress"?, "message", "fix"?}]}`.
 * Exit 0 when no check fails (warnings allowed), 1 when one does, 2 on bad usage.
 */
import type { Command } from 'commander';
import { ConfigError } from '../../config.js';
import { invalidDnsServers } from '../../engine/dns/servers.js';
import { runDoctor, type DoctorCheck, type DoctorReport } from '../../services/prober/doctor.service.js';
import { addSettingsOptions, timeoutOption, loadProberConfig } from '../cli-support.js';

interface DoctorFlags {
  json?: boolean;
  timeoutMs: number;
  /** The engine's settings and doctor's own (SETTINGS rows naming `doctor`). */
  [setting: string]: unknown;
}

export function registerDoctorCommand(program: Command): void {
  addSettingsOptions(
    program
      .command('doctor')
      .description(
        "Check the prober's identity and reputation from each egress (port 25, HELO, reverse DNS, MAIL FROM, SPF, blocklists) and say what to fix.",
      )
      .option('--json', 'print one JSON line instead of a table')
      .addOption(timeoutOption()),
  ).action(async (flags: DoctorFlags) => {
    await runDoctorCommand(flags);
  });
}

async function runDoctorCommand(flags: DoctorFlags): Promise<void> {
  const config = await loadProberConfig(flags);
  const invalid = invalidDnsServers(config.engine.dns.servers);
  if (invalid.length > 0) {
    throw new ConfigError(
      `--dns-server (or MAILVERDICT_DNS_SERVERS) must be IP addresses with an optional port, got "${invalid.join(', ')}"`,
    );
  }
  const report = await runDoctor({
    engine: config.engine,
    doctor: config.doctor,
    dnsTrust: config.dnsTrust,
    timeoutMs: flags.timeoutMs,
  });
  process.stdout.write(flags.json === true ? `${JSON.stringify(report)}\n` : table(report));
  if (!report.ok) process.exitCode = 1;
}

const COLUMNS: { title: string; value: (c: DoctorCheck) => string }[] = [
  { title: 'STATUS', value: (c) => c.status.toUpperCase() },
  { title: 'CHECK', value: (c) => c.id },
  { title: 'EGRESS', value: (c) => c.egress ?? '-' },
  { title: 'MESSAGE', value: (c) => c.message },
];

function table(report: DoctorReport): string {
  const rows = [
    COLUMNS.map((c) => c.title),
    ...report.checks.map((check) => COLUMNS.map((c) => c.value(check))),
  ];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const indent = ' '.repeat(widths.slice(0, -1).reduce((sum, w) => sum + w + 2, 0));
  const lines = rows.flatMap((row, r) => {
    const line = row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
    const fix = r === 0 ? undefined : report.checks[r - 1]!.fix;
    return fix === undefined ? [line] : [line, `${indent}fix: ${fix}`];
  });
  const count = (status: DoctorCheck['status']): number =>
    report.checks.filter((c) => c.status === status).length;
  lines.push('', `${count('fail')} failed, ${count('warn')} warnings, ${count('pass')} passed`);
  return `${lines.join('\n')}\n`;
}
