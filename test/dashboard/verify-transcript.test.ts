/**
 * The dashboard's live verification with `include_transcript` (issue 15, part 4): the session's
 * POST /verify takes the flag and answers with the SMTP conversation, through a real app, the real
 * engine and a loopback MTA; without the flag the answer has none and may come from the cache.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TranscriptLine } from '../../src/engine/types.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';
import { createDashboardHarness, type Browser, type DashboardHarness } from '../kit/dashboard-kit.js';

let kit: SmtpKit;
let h: DashboardHarness;
let browser: Browser;

interface Answer {
  cached: boolean;
  transcript?: TranscriptLine[];
}

beforeAll(async () => {
  kit = await startSmtpServers({ mta: { kind: 'mta', mailboxes: ['ann'] } });
  h = await createDashboardHarness({ flags: { smtpPort: String(kit.port) } });
  ({ browser } = await h.signedIn());
  h.dns.setDomain('shop.test', { mx: [{ exchange: 'mx1.shop.test', priority: 10 }] });
  h.dns.setDomain('mx1.shop.test', { a: [kit.hosts.mta!.ip] });
}, 60_000);
afterAll(async () => {
  await h?.close();
  await kit?.close();
});

describe('dashboard POST /verify include_transcript', () => {
  it('answers without a conversation by default, then with one when asked, never from the cache', async () => {
    const plain = await browser.post('verify', { email: 'ann@shop.test' });
    expect(plain.statusCode).toBe(200);
    expect(plain.json()).not.toHaveProperty('transcript');

    const asked = await browser.post('verify', { email: 'ann@shop.test', include_transcript: true });
    expect(asked.statusCode).toBe(200);
    const answer = asked.json<Answer>();
    expect(answer.cached).toBe(false);
    const texts = answer.transcript!.map((l) => `${l.dir} ${l.text}`);
    // A new connection, or the session the plain verification above left warm.
    expect([
      `out [connect mx1.shop.test (${kit.hosts.mta!.ip}) port ${kit.port}]`,
      `out [reuse mx1.shop.test (${kit.hosts.mta!.ip})]`,
    ]).toContain(texts[0]);
    expect(texts).toContain('out RCPT TO:<ann@shop.test>');

    const again = (await browser.post('verify', { email: 'ann@shop.test' })).json<Answer>();
    expect(again.cached).toBe(true);
    expect(again).not.toHaveProperty('transcript');
  });

  it('refuses a flag that is not a boolean', async () => {
    const res = await browser.post('verify', { email: 'ann@shop.test', include_transcript: 'yes' });
    expect(res.statusCode).toBe(422);
  });
});
