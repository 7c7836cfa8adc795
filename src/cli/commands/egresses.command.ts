/**
 * `mailverdict egresses`: each egress's health as the reputation guard sees it (state, since when,
 * why, the last blocklist check), as a table or (with --json) one JSON line. With `--redis-url`
 * it is the state every `serve` and `worker` on that Redis shares; without, the command asks the
 * blocklists itself (blocks seen at run time are then only in the serving process's log and
 * /metrics). Exit 0 when every egress is in service, 1 when one rests, 2 on bad usage.
 */
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import type { EgressStatus } from '../../engine/egress/egress-guard.js';
import { egressReport, type EgressReport } from '../../services/prober/egress-guard.service.js';
import { openEgressHealth } from '../../runtime.js';
import { addSettingsOptions, settingsFlags } from '../cli-support.js';

export function registerEgressesCommand(program: Command): void {
  addSettingsOptions(
    program
      .command('egresses')
      .description(
        "Show each egress's health (in service, listed on a blocklist, degraded by blocks), shared through Redis when configured.",
      )
      .option('--json', 'print one JSON line instead of a table'),
  ).action(async (flags: Record<string, unknown>) => {
    await runEgresses(flags);
  });
}

async function runEgresses(flags: Record<string, unknown>): Promise<void> {
  const config = loadConfig(settingsFlags(flags));
  const health = await openEgressHealth(config);
  try {
    const report = await egressReport(config, { shared: health.shared, store: health.store, now: Date.now });
    process.stdout.write(flags.json === true ? `${JSON.stringify(toJson(report))}\n` : table(report));
    if (report.egresses.some((e) => e.state !== 'ok')) process.exitCode = 1;
  } finally {
    await health.close();
  }
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function toJson(report: EgressReport): object {
  return {
    shared: report.shared,
    egresses: report.egresses.map((e) => ({
      egress: e.egress,
      state: e.state,
      since: iso(e.since),
      reason: e.reason,
      last_check:
        e.lastCheck === null
          ? null
          : { at: iso(e.lastCheck.at), listed: e.lastCheck.listed, zones: e.lastCheck.zones },
      unchecked: e.unchecked,
    })),
  };
}

const COLUMNS: { title: string; value: (e: EgressStatus) => string }[] = [
  { title: 'EGRESS', value: (e) => e.egress },
  { title: 'STATE', value: (e) => e.state },
  { title: 'SINCE', value: (e) => iso(e.since) ?? '-' },
  { title: 'LAST CHECK', value: (e) => iso(e.lastCheck?.at ?? null) ?? '-' },
  { title: 'REASON', value: (e) => e.reason ?? e.unchecked ?? checkSummary(e) },
];

function checkSummary(e: EgressStatus): string {
  const unsure = e.lastCheck?.zones.filter((z) => z.result === 'cannot_tell') ?? [];
  if (unsure.length === 0) return '-';
  return unsure.map((z) => `${z.zone}: ${z.detail ?? 'cannot tell'}`).join('; ');
}

function table(report: EgressReport): string {
  const rows = [COLUMNS.map((c) => c.title), ...report.egresses.map((e) => COLUMNS.map((c) => c.value(e)))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  const resting = report.egresses.filter((e) => e.state !== 'ok').length;
  lines.push(
    '',
    `${report.egresses.length - resting} in service, ${resting} resting (${report.shared ? 'shared state, from Redis' : "this command's own check: no --redis-url"})`,
  );
  return `${lines.join('\n')}\n`;
}
