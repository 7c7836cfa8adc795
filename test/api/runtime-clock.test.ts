/**
 * The verifier that createRuntime builds keeps the process's clock (`RuntimeOptions.clock`), as
 * its batch engine does: a DNS answer it cached expires when that clock says so, not when the
 * wall clock does. A real app on a real store, the in-process DNS server and a loopback MTA.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, MINUTE, SECOND } from '../../src/clock.js';
import { createHarness, type Harness } from '../kit/api-harness.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';

let kit: SmtpKit;
let h: Harness;
const clock = new ManualClock('2026-03-10T12:00:00.000Z');

beforeAll(async () => {
  kit = await startSmtpServers({ mta: { kind: 'mta', mailboxes: ['ann', 'bob', 'cy'] } });
  h = await createHarness({ clock, flags: { smtpPort: String(kit.port), dnsCacheTtl: '10m' } });
  h.dns.setDomain('clock.test', { mx: [{ exchange: 'mx1.clock.test', priority: 10 }] });
  h.dns.setDomain('mx1.clock.test', { a: [kit.hosts.mta!.ip] });
}, 60_000);

afterAll(async () => {
  await h?.close();
  await kit?.close();
});

describe("the runtime's verifier and the process's clock", () => {
  it('keeps a DNS answer until the clock passes its lifetime, however little real time has passed', async () => {
    const verifier = h.runtime.ctx.verifier;
    expect((await verifier.verify('ann@clock.test')).status).toBe('deliverable');
    expect(h.dns.queryCount('clock.test', 'MX')).toBe(1);
    // The clock stands still: the answer is still fresh.
    expect((await verifier.verify('bob@clock.test')).status).toBe('deliverable');
    expect(h.dns.queryCount('clock.test', 'MX')).toBe(1);
    // The clock passes the 10 minutes of --dns-cache-ttl: the domain is asked again.
    clock.advance(10 * MINUTE + SECOND);
    expect((await verifier.verify('cy@clock.test')).status).toBe('deliverable');
    expect(h.dns.queryCount('clock.test', 'MX')).toBe(2);
  });
});
