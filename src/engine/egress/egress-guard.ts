/**
 * The reputation guard: keeps each egress off the mail hosts while its address is in trouble, so
 * that a listed or blocked address does not turn every answer into `unknown` / `smtp_blocked`
 * while the other egresses carry on (docs/prober.md, "The reputation guard").
 *
 * - Re-checks: every `checkIntervalMs` the address of each egress that has a known public address
 *   (a `--source-address`) is looked up on the DNSBL zones (../dns/dnsbl.ts). The check of one
 *   egress is a lease in the store: with Redis, one process per interval asks, the others read
 *   the stored answer. A refused query (127.255.255.x) or a DNS failure is "cannot tell": it
 *   never lists an egress, and it keeps a zone's previous listing (a list that cannot answer now
 *   has not delisted anyone).
 * - Blocks seen at run time: `observe` is told every reply; when `blockHosts` distinct mail hosts
 *   refuse an egress by policy (`blocksTheEgress`) within `blockWindowMs`, the egress is degraded
 *   and rests for `blockRestMs`, shared through the store.
 * - Resting: `usable` is false for a listed or degraded egress; the engine's two paths consult it
 *   through `usableEgresses` (egress.ts). A listed egress comes back with the first check that
 *   finds it delisted, a degraded one when its rest ends.
 *
 * State changes are logged (when, which egress, why); e-mail addresses in a refusal's text are
 * masked.
 */
import { queryDnsbl } from '../dns/dnsbl.js';
import type { DnsLookups } from '../dns/lookups.js';
import type { SmtpReply } from '../smtp/reply.js';
import type { SessionStage } from '../smtp/session.js';
import type { Egress, EgressGate } from './egress.js';
import { blocksTheEgress } from './egress.js';
import type {
  EgressCheck,
  EgressHealthStore,
  EgressRecord,
  EgressStateName,
  ZoneAnswer,
} from './egress-health.js';
import { stateOf, stateSince } from './egress-health.js';
import { isInternalAddress } from '../net/internal-address.js';

export interface EgressGuardOptions {
  egresses: readonly Egress[];
  dnsblZones: readonly string[];
  /** Between two blocklist checks of an egress; 0: none (run-time blocks still rest egresses). */
  checkIntervalMs: number;
  /** Distinct mail hosts refusing an egress by policy within `blockWindowMs` that degrade it. */
  blockHosts: number;
  blockWindowMs: number;
  /** How long a degraded egress rests. */
  blockRestMs: number;
  /** Check internal source addresses too (tests on loopback); otherwise they are not public. */
  checkInternalAddresses: boolean;
  /** How often the shared state is read (default 10 s, and at most `checkIntervalMs`). */
  syncMs?: number;
}

export interface GuardLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface EgressGuardDeps {
  store: EgressHealthStore;
  /** Closed by stop() when it can be. */
  lookups: Pick<DnsLookups, 'a' | 'txt'> & { close?(): void };
  /** Epoch ms. */
  now: () => number;
  logger?: GuardLogger;
}

/** One egress's health, as `/metrics` and `mailverdict egresses` show it. */
export interface EgressStatus {
  egress: string;
  state: EgressStateName;
  /** Epoch ms since which the state holds; null when it has held since the guard started. */
  since: number | null;
  reason: string | null;
  lastCheck: EgressCheck | null;
  /** Why the guard does not look the egress's address up, when it does not. */
  unchecked: string | null;
}

const DEFAULT_SYNC_MS = 10_000;
const MAX_REASON = 200;

export class EgressGuard implements EgressGate {
  readonly #options: EgressGuardOptions;
  readonly #deps: EgressGuardDeps;
  readonly #ids: Set<string>;
  #records = new Map<string, EgressRecord>();
  /** Resting egresses, until epoch ms (Infinity while listed). */
  readonly #resting = new Map<string, number>();
  /** The state last logged per egress. */
  readonly #logged = new Map<string, EgressStateName>();
  readonly #pending = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | null = null;
  #ticking: Promise<void> | null = null;
  #stopped = false;

  constructor(options: EgressGuardOptions, deps: EgressGuardDeps) {
    this.#options = options;
    this.#deps = deps;
    this.#ids = new Set(options.egresses.map((e) => e.id));
  }

  usable(egressId: string): boolean {
    const until = this.#resting.get(egressId);
    return until === undefined || until <= this.#deps.now();
  }

  observe(egress: Egress, host: string, stage: SessionStage, reply: SmtpReply): void {
    if (!blocksTheEgress(stage, reply) || !this.#ids.has(egress.id) || !this.usable(egress.id)) return;
    this.#track(this.#countRefusal(egress.id, host.toLowerCase(), reply));
  }

  /** Checks what is due and reads the shared state now; then every sync interval until stop(). */
  start(): void {
    if (this.#timer !== null || this.#stopped) return;
    const period = Math.min(
      this.#options.syncMs ?? DEFAULT_SYNC_MS,
      this.#options.checkIntervalMs > 0 ? this.#options.checkIntervalMs : Infinity,
    );
    this.#deps.logger?.info(
      {
        checked: this.#options.egresses.filter((e) => this.#checkedAddress(e) !== null).map((e) => e.id),
        checkIntervalMs: this.#options.checkIntervalMs,
        zones: this.#options.dnsblZones,
      },
      'egress guard started: blocklist re-checks and run-time block detection',
    );
    const run = (): void => {
      this.#ticking = this.tick().finally(() => {
        this.#ticking = null;
        if (!this.#stopped) this.#timer = setTimeout(run, period);
      });
    };
    this.#timer = setTimeout(run, 0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#ticking;
    await this.idle();
    this.#deps.lookups.close?.();
  }

  /** Resolves when the refusals observed so far are counted (and any rest they caused applied). */
  async idle(): Promise<void> {
    await Promise.all([...this.#pending]);
  }

  /**
   * One round: checks the egresses whose check is due (and whose lease this process takes), then
   * reads every egress's shared state. Never rejects: a store that is down is logged.
   */
  async tick(): Promise<void> {
    try {
      if (this.#options.checkIntervalMs > 0 && this.#options.dnsblZones.length > 0) {
        for (const egress of this.#options.egresses) {
          const address = this.#checkedAddress(egress);
          if (address === null) continue;
          if (await this.#deps.store.tryLease(`check:${egress.id}`, this.#options.checkIntervalMs))
            await this.#check(egress.id, address);
        }
      }
      this.#apply(await this.#deps.store.read([...this.#ids]));
    } catch (err) {
      this.#deps.logger?.warn(
        { err },
        'egress guard: its store is unreachable; egress states kept as they were',
      );
    }
  }

  /** Each egress's health as this process knows it. */
  statuses(): EgressStatus[] {
    const now = this.#deps.now();
    return this.#options.egresses.map((egress) => {
      const record = this.#records.get(egress.id);
      const state = stateOf(record, now);
      const since = stateSince(record, now);
      return {
        egress: egress.id,
        state,
        since: since > 0 ? since : null,
        reason: reasonOf(record, state),
        lastCheck: record?.check ?? null,
        unchecked: this.#uncheckedWhy(egress),
      };
    });
  }

  #track(task: Promise<void>): void {
    this.#pending.add(task);
    void task.finally(() => this.#pending.delete(task));
  }

  async #countRefusal(id: string, host: string, reply: SmtpReply): Promise<void> {
    const { store, now, logger } = this.#deps;
    const { blockHosts, blockWindowMs, blockRestMs } = this.#options;
    try {
      const at = now();
      const hosts = await store.addRefusal(id, host, at, blockWindowMs);
      if (hosts < blockHosts || !this.usable(id)) return;
      const reason = `${hosts} mail hosts refused it by policy within ${Math.round(blockWindowMs / 1000)} s; last: ${host} ${replyText(reply)}`;
      const degraded = { since: at, until: at + blockRestMs, reason };
      await store.writeDegraded(id, degraded);
      const record = this.#records.get(id) ?? { check: null, degraded: null };
      this.#records.set(id, { ...record, degraded });
      this.#apply(this.#records);
    } catch (err) {
      logger?.warn({ err, egress: id }, 'egress guard: a refusal could not be counted');
    }
  }

  async #check(id: string, address: string): Promise<void> {
    const now = this.#deps.now();
    const previous = this.#records.get(id)?.check ?? null;
    const zones = await Promise.all(
      this.#options.dnsblZones.map((zone) => zoneAnswer(this.#deps.lookups, address, zone, previous)),
    );
    const listed = zones.some((z) => z.result === 'listed');
    const check: EgressCheck = {
      at: now,
      listed,
      since: previous !== null && previous.listed === listed ? previous.since : now,
      zones,
    };
    await this.#deps.store.writeCheck(id, check);
    const record = this.#records.get(id) ?? { check: null, degraded: null };
    this.#records.set(id, { ...record, check });
  }

  /** Takes `records` as the state now: rests, recoveries, and a log line for each change. */
  #apply(records: Map<string, EgressRecord>): void {
    const now = this.#deps.now();
    this.#records = new Map(records);
    let changed = false;
    for (const id of this.#ids) {
      const record = records.get(id);
      const state = stateOf(record, now);
      if (state === 'listed') this.#resting.set(id, Infinity);
      else if (state === 'degraded') this.#resting.set(id, record!.degraded!.until);
      else this.#resting.delete(id);
      const before = this.#logged.get(id) ?? 'ok';
      if (before === state) continue;
      this.#logged.set(id, state);
      changed = true;
      const line = { egress: id, state, was: before, reason: reasonOf(record, state) };
      if (state === 'ok') this.#deps.logger?.info(line, 'egress back in service');
      else this.#deps.logger?.warn(line, `egress rests: ${state}`);
    }
    if (changed && this.#ids.size > 0 && [...this.#ids].every((id) => !this.usable(id)))
      this.#deps.logger?.error(
        { egresses: [...this.#ids] },
        'every egress rests: probing goes on through all of them (answers from hosts that refuse them come back unknown); fix or replace the listed addresses, see `mailverdict egresses`',
      );
  }

  /** The address to look up on the zones, or null when the guard does not know it. */
  #checkedAddress(egress: Egress): string | null {
    return this.#uncheckedWhy(egress) === null ? egress.localAddress : null;
  }

  #uncheckedWhy(egress: Egress): string | null {
    if (egress.localAddress === null)
      return egress.proxy === null
        ? 'the public address of the default route is unknown here (NAT): run-time blocks only'
        : "the proxy's exit address is unknown here: run-time blocks only";
    if (isInternalAddress(egress.localAddress) && !this.#options.checkInternalAddresses)
      return 'an internal address is not what mail servers see (NAT): run-time blocks only';
    return null;
  }
}

/** One zone's answer; a zone that cannot tell now keeps a listing it gave before. */
async function zoneAnswer(
  lookups: Pick<DnsLookups, 'a' | 'txt'>,
  address: string,
  zone: string,
  previous: EgressCheck | null,
): Promise<ZoneAnswer> {
  const answer = await queryDnsbl(lookups, address, zone);
  switch (answer.kind) {
    case 'not_listed':
      return { zone, result: 'clean', detail: null };
    case 'listed':
      return {
        zone,
        result: 'listed',
        detail: `${answer.codes.join(', ')}${answer.reason === null ? '' : `: ${answer.reason}`}`,
      };
    case 'refused':
    case 'error': {
      const why =
        answer.kind === 'refused'
          ? `cannot tell: answered ${answer.codes.join(', ')}, ${answer.meaning}`
          : `cannot tell: DNS ${answer.code}`;
      const before = previous?.zones.find((z) => z.zone === zone);
      if (before?.result === 'listed')
        return { zone, result: 'listed', detail: `${before.detail ?? ''} (last known; ${why})` };
      return { zone, result: 'cannot_tell', detail: why };
    }
  }
}

function reasonOf(record: EgressRecord | undefined, state: EgressStateName): string | null {
  if (state === 'listed')
    return `listed on ${record!
      .check!.zones.filter((z) => z.result === 'listed')
      .map((z) => `${z.zone} (${z.detail ?? ''})`)
      .join(', ')}`;
  if (state === 'degraded') return record!.degraded!.reason;
  return null;
}

/** The reply for a log line: code and text, e-mail addresses masked, bounded. */
function replyText(reply: SmtpReply): string {
  const code = reply.enhancedCode === null ? `${reply.code}` : `${reply.code} ${reply.enhancedCode}`;
  const text = `${code} ${reply.message}`.replace(/[^\s<>]+@[^\s<>]+/g, '<address>');
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text;
}
