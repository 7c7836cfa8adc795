/**
 * The reputation guard in one process (its store in memory): blocklist checks against the
 * in-process DNS server's `bl.test` zone, blocks seen at run time from Postfix-like hosts that
 * refuse one client address by policy, and what the mail hosts saw from each source address
 * while an egress rests (sessions counted by client address, server-side). The same with Redis:
 * test/redis/egress-guard.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { registerEgressMetrics } from '../../src/api/egress-metrics.js';
import { blocksTheEgress } from '../../src/engine/egress/egress.js';
import { createLocalEgressHealth } from '../../src/engine/egress/egress-health.js';
import type { EgressGuard } from '../../src/engine/egress/egress-guard.js';
import { ReplyParser } from '../../src/engine/smtp/reply.js';
import type { SmtpReply } from '../../src/engine/smtp/reply.js';
import { addresses, startGuardWorld, ZONE, type GuardWorld } from '../kit/guard-world.js';

const LISTED = '127.0.0.3';
const HOUR = 3600_000;

let world: GuardWorld | null = null;
afterEach(async () => {
  await world?.close();
  world = null;
});

/** A clock the test moves. */
function clock(): { now: () => number; advance(ms: number): void } {
  let t = Date.UTC(2026, 10, 26, 12);
  return { now: () => t, advance: (ms) => (t += ms) };
}

function reply(line: string): SmtpReply {
  const parser = new ReplyParser();
  const replies = parser.push(`${line}\r\n`);
  return replies[0]!;
}

function growth(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [client, n] of Object.entries(after)) out[client] = n - (before[client] ?? 0);
  return out;
}

async function deliverable(
  w: GuardWorld,
  engine: ReturnType<GuardWorld['engine']>,
  count = 90,
): Promise<void> {
  const results = await engine.verifyMany(addresses(count));
  expect(results.every((r) => r.status === 'deliverable')).toBe(true);
}

describe('what counts as a block of the egress', () => {
  it.each([
    ['banner', '554 5.7.1 Client host rejected: blocked', true],
    ['banner', '554 No SMTP service here', true],
    ['banner', '421 4.7.0 Too many connections from your address', false],
    ['mail', '550 5.7.1 Client host [192.0.2.7] blocked using zen.spamhaus.org', true],
    ['mail', '530 5.7.0 Must issue a STARTTLS command first', false],
    [
      'rcpt',
      '554 5.7.1 Service unavailable; Client host [192.0.2.7] blocked using b.barracudacentral.org',
      true,
    ],
    ['rcpt', '550 5.1.1 <nobody@example.com>: Recipient address rejected: User unknown', false],
    ['rcpt', '450 4.7.1 Greylisted, try again later', false],
  ] as const)('%s: %s -> %s', (stage, line, blocks) => {
    expect(blocksTheEgress(stage, reply(line))).toBe(blocks);
  });
});

describe('blocklist re-checks', () => {
  it('rest a listed egress: the batch engine opens no session from it while the others carry on', async () => {
    const w = (world = await startGuardWorld());
    const time = clock();
    w.list(LISTED);
    const guard = w.guard(createLocalEgressHealth(time.now), time.now);
    await guard.tick();
    expect(guard.statuses().map((s) => [s.egress, s.state])).toEqual([
      ['127.0.0.2', 'ok'],
      [LISTED, 'listed'],
      ['127.0.0.4', 'ok'],
    ]);
    expect(guard.statuses()[1]!.reason).toContain(`listed on ${ZONE} (127.0.0.2: listed by ${ZONE}`);

    await deliverable(w, w.engine(guard));
    const seen = w.sessions();
    expect(seen[LISTED]).toBeUndefined();
    expect(seen['127.0.0.2']).toBeGreaterThan(0);
    expect(seen['127.0.0.4']).toBeGreaterThan(0);
    const line = w.logs.find((l) => l.msg === 'egress rests: listed');
    expect(line).toMatchObject({ egress: LISTED, state: 'listed', was: 'ok' });
  });

  it('bring the egress back with the first check that finds it delisted', async () => {
    const w = (world = await startGuardWorld());
    const time = clock();
    w.list(LISTED);
    const guard = w.guard(createLocalEgressHealth(time.now), time.now);
    await guard.tick();
    w.delist(LISTED);
    // Within the interval nothing is asked again: the listing holds.
    time.advance(HOUR / 2);
    await guard.tick();
    expect(guard.usable(LISTED)).toBe(false);
    time.advance(HOUR / 2);
    await guard.tick();
    expect(guard.statuses()[1]).toMatchObject({ state: 'ok', since: time.now(), reason: null });
    expect(w.logs.find((l) => l.msg === 'egress back in service')).toMatchObject({
      egress: LISTED,
      was: 'listed',
    });

    const before = w.sessions();
    await deliverable(w, w.engine(guard));
    expect(growth(before, w.sessions())[LISTED]).toBeGreaterThan(0);
  });

  it('ask each zone once per interval, and never take a refused query for a listing', async () => {
    const w = (world = await startGuardWorld());
    const time = clock();
    w.list(LISTED, '127.255.255.254');
    const guard = w.guard(createLocalEgressHealth(time.now), time.now);
    await guard.tick();
    await guard.tick();
    const status = guard.statuses()[1]!;
    expect(status.state).toBe('ok');
    expect(guard.usable(LISTED)).toBe(true);
    expect(status.lastCheck?.zones).toEqual([
      {
        zone: ZONE,
        result: 'cannot_tell',
        detail:
          'cannot tell: answered 127.255.255.254, queries through a public or open resolver are refused (Spamhaus)',
      },
    ]);
    expect(w.dns.queryCount(`3.0.0.127.${ZONE}`, 'A')).toBe(1);
  });

  it('keep a listing while the list cannot tell', async () => {
    const w = (world = await startGuardWorld());
    const time = clock();
    w.list(LISTED);
    const guard = w.guard(createLocalEgressHealth(time.now), time.now);
    await guard.tick();
    w.list(LISTED, '127.255.255.255');
    time.advance(HOUR);
    await guard.tick();
    expect(guard.statuses()[1]!.state).toBe('listed');
    expect(guard.statuses()[1]!.lastCheck?.zones[0]?.detail).toContain('(last known; cannot tell');
  });

  it('keep the single prober off a listed egress too', async () => {
    // One session per verification (no warm sessions), so that sessions count verifications.
    const w = (world = await startGuardWorld({ smtpSessionIdle: 'off' }));
    const time = clock();
    w.list(LISTED);
    const guard = w.guard(createLocalEgressHealth(time.now), time.now);
    await guard.tick();
    const verifier = w.verifier(guard);
    for (const address of addresses(9)) expect((await verifier.verify(address)).status).toBe('deliverable');
    const seen = w.sessions();
    expect(seen[LISTED]).toBeUndefined();
    expect((seen['127.0.0.2'] ?? 0) + (seen['127.0.0.4'] ?? 0)).toBe(9);
  });

  it('carry on through every egress when all of them rest, and say so as an error', async () => {
    const w = (world = await startGuardWorld());
    const time = clock();
    for (const address of ['127.0.0.2', LISTED, '127.0.0.4']) w.list(address);
    const guard = w.guard(createLocalEgressHealth(time.now), time.now);
    await guard.tick();
    expect(guard.statuses().every((s) => s.state === 'listed')).toBe(true);
    await deliverable(w, w.engine(guard), 30);
    expect(Object.keys(w.sessions()).length).toBeGreaterThan(0);
    expect(w.logs.find((l) => l.level === 50)?.msg).toMatch(/^every egress rests: probing goes on/);
  });

  /**
   * Two egresses: 127.0.0.2 listed (the guard rests it), 127.0.0.3 in service but refused by every
   * host at RCPT. Run-time blocks would degrade the refused egress too: kept out of these tests.
   */
  async function refusedInService(): Promise<{ w: GuardWorld; guard: EgressGuard }> {
    const w = (world = await startGuardWorld({
      sourceAddress: '127.0.0.2,127.0.0.3',
      egressBlockHosts: '10',
    }));
    const time = clock();
    w.list('127.0.0.2');
    w.blocked.add(LISTED);
    const guard = w.guard(createLocalEgressHealth(time.now), time.now);
    await guard.tick();
    return { w, guard };
  }

  it('take a resting egress as the last resort of a host that refused the egresses in service', async () => {
    const { w, guard } = await refusedInService();
    const results = await w.engine(guard).verifyMany(addresses(9));
    expect(results.map((r) => r.status)).toEqual(Array(9).fill('deliverable'));
    expect(w.sessions()['127.0.0.2']).toBeGreaterThan(0);
    expect(guard.statuses().map((s) => s.state)).toEqual(['listed', 'ok']);
  });

  it('rest an egress at its first policy refusal at RCPT, so that the refused address is not asked through it again', async () => {
    // One address (with the catch-all probe, two refusals: fewer than the three in a row that
    // settle the host's queue): before the fix it went back to the refused egress and settled
    // `unknown` / smtp_blocked there; the CI flake of the test above was the same return, raced.
    const { w, guard } = await refusedInService();
    const [result] = await w.engine(guard).verifyMany(['user0@one.test']);
    expect([result?.status, result?.reason]).toEqual(['deliverable', null]);
    expect(w.sessions()).toEqual({ '127.0.0.3': 1, '127.0.0.2': 1 });
  });

  it('let the single prober take a resting egress only once the host refused those in service', async () => {
    const w = (world = await startGuardWorld({ sourceAddress: '127.0.0.2,127.0.0.3' }));
    const time = clock();
    w.list('127.0.0.2');
    w.blocked.add(LISTED);
    const guard = w.guard(createLocalEgressHealth(time.now), time.now);
    await guard.tick();
    const verifier = w.verifier(guard);
    // The egress in service goes first and is refused; the host then rests it, and the next
    // probe of that host goes out through the listed one rather than report the refusal again.
    expect((await verifier.verify('user1@one.test')).reason).toBe('smtp_blocked');
    expect(w.sessions()['127.0.0.2']).toBeUndefined();
    expect((await verifier.verify('user2@one.test')).status).toBe('deliverable');
    expect(w.sessions()['127.0.0.2']).toBe(1);
  });

  it('put each egress state on /metrics', async () => {
    const w = (world = await startGuardWorld());
    const time = clock();
    w.list(LISTED);
    const guard = w.guard(createLocalEgressHealth(time.now), time.now);
    await guard.tick();
    const registry = new Registry();
    registerEgressMetrics(registry, () => guard.statuses());
    const text = await registry.metrics();
    expect(text).toContain(`mailverdict_egress_state{egress="${LISTED}",state="listed"} 1`);
    expect(text).toContain(`mailverdict_egress_state{egress="${LISTED}",state="ok"} 0`);
    expect(text).toContain('mailverdict_egress_state{egress="127.0.0.2",state="ok"} 1');
  });
});

describe('blocks seen at run time', () => {
  it('degrade an egress that several hosts refuse by policy, rest it, and bring it back after the rest', async () => {
    const w = (world = await startGuardWorld());
    const time = clock();
    w.blocked.add(LISTED);
    const guard = w.guard(createLocalEgressHealth(time.now), time.now);
    await deliverable(w, w.engine(guard));
    await guard.idle();
    const status = guard.statuses()[1]!;
    expect(status.state).toBe('degraded');
    expect(status.reason).toMatch(
      /^3 mail hosts refused it by policy within 600 s; last: mx\.(one|two|three)\.test 554 5\.7\.1 Service unavailable; Client host \[127\.0\.0\.3\] blocked using zen\.spamhaus\.org/,
    );
    expect(w.logs.find((l) => l.msg === 'egress rests: degraded')).toMatchObject({ egress: LISTED });

    // A new engine (no per-host rests of its own): the guard alone keeps the egress away.
    let before = w.sessions();
    await deliverable(w, w.engine(guard));
    expect(growth(before, w.sessions())[LISTED]).toBe(0);

    w.blocked.clear();
    time.advance(HOUR);
    await guard.tick();
    expect(guard.statuses()[1]!.state).toBe('ok');
    before = w.sessions();
    await deliverable(w, w.engine(guard));
    expect(growth(before, w.sessions())[LISTED]).toBeGreaterThan(0);
  });

  it('do not degrade an egress refused by fewer hosts than the setting', async () => {
    const w = (world = await startGuardWorld({ egressBlockHosts: '4' }));
    const time = clock();
    w.blocked.add(LISTED);
    const guard = w.guard(createLocalEgressHealth(time.now), time.now);
    await deliverable(w, w.engine(guard));
    await guard.idle();
    expect(guard.statuses()[1]!.state).toBe('ok');
  });
});
