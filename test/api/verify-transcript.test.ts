/**
 * `include_transcript` on POST /v1/verify (issue 15, part 4): a real app on a real SQLite file,
 * the real engine against the in-process DNS server and a loopback MTA. What the MTA saw says
 * whether a probe ran; the result cache must neither answer a transcript request nor keep one.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TranscriptLine } from '../../src/engine/types.js';
import { ManualClock } from '../../src/clock.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';
import { createHarness, type Harness } from '../kit/api-harness.js';
import { WAIT_FOR } from '../kit/wait-for.js';

let kit: SmtpKit;
let h: Harness;
const logLines: string[] = [];

const mta = () => kit.hosts.mta!;
const rcptsFor = (email: string) => mta().commands.filter((c) => c === `RCPT TO:<${email}>`).length;

interface Answer {
  status: string;
  cached: boolean;
  transcript?: TranscriptLine[];
}

async function verify(body: Record<string, unknown>, key = h.liveKey): Promise<Answer> {
  const res = await h.verify(key, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Answer>();
}

beforeAll(async () => {
  kit = await startSmtpServers({ mta: { kind: 'mta', mailboxes: ['alice', 'bob', 'carol'] } });
  h = await createHarness({
    clock: new ManualClock('2026-11-26T12:00:00.000Z'),
    flags: { smtpPort: String(kit.port) },
    logLines,
  });
  h.dns.setDomain('acme.test', { mx: [{ exchange: 'mx1.acme.test', priority: 10 }] });
  h.dns.setDomain('mx1.acme.test', { a: [mta().ip] });
});
afterAll(async () => {
  await h?.close();
  await kit?.close();
});
beforeEach(() => kit.resetRecords());

describe('POST /v1/verify include_transcript', () => {
  it('leaves transcript out by default', async () => {
    const answer = await verify({ email: 'alice@acme.test' });
    expect(answer.status).toBe('deliverable');
    expect(answer).not.toHaveProperty('transcript');
  });

  it('returns the SMTP conversation when asked: the host, the commands and the replies', async () => {
    const answer = await verify({ email: 'bob@acme.test', include_transcript: true });
    const texts = answer.transcript!.map((l) => `${l.dir} ${l.text}`);
    // A new connection, or a session kept warm by an earlier test of this file.
    if (texts[0]!.startsWith('out [reuse ')) {
      expect(texts[0]).toBe(`out [reuse mx1.acme.test (${mta().ip})]`);
      expect(texts[1]).toBe('out RSET');
    } else {
      expect(texts[0]).toBe(`out [connect mx1.acme.test (${mta().ip}) port ${kit.port}]`);
      expect(texts[1]).toMatch(/^in 220 /);
    }
    expect(texts.filter((t) => /^out MAIL FROM:<[^>]+>$/.test(t))).toHaveLength(1);
    expect(texts).toContain('out RCPT TO:<bob@acme.test>');
    expect(answer.transcript!.every((l) => Number.isInteger(l.at_ms) && l.at_ms >= 0)).toBe(true);
  });

  it('shows a verification on a session kept warm from the one before: reuse marker, RSET, MAIL, RCPT', async () => {
    await verify({ email: 'dave@acme.test', include_transcript: true });
    const again = await verify({ email: 'erin@acme.test', include_transcript: true });
    const texts = again.transcript!.map((l) => `${l.dir} ${l.text}`);
    expect(texts[0]).toBe(`out [reuse mx1.acme.test (${mta().ip})]`);
    expect(texts.filter((t) => t.startsWith('out ')).slice(1, 4)).toEqual([
      'out RSET',
      expect.stringMatching(/^out MAIL FROM:<[^>]+>$/),
      'out RCPT TO:<erin@acme.test>',
    ]);
    // Only this verification's lines: nothing of dave's.
    expect(texts.join('\n')).not.toContain('dave@acme.test');
    expect(texts.some((t) => /^in 220 |EHLO/.test(t))).toBe(false);
  });

  it('is never answered from the cache, and leaves no transcript in it', async () => {
    const plain = await verify({ email: 'carol@acme.test' });
    expect(plain.cached).toBe(false);
    expect((await verify({ email: 'carol@acme.test' })).cached).toBe(true);
    expect(rcptsFor('carol@acme.test')).toBe(1);

    const asked = await verify({ email: 'carol@acme.test', include_transcript: true });
    expect(asked.cached).toBe(false);
    expect(rcptsFor('carol@acme.test')).toBe(2);
    expect(asked.transcript!.map((l) => l.text)).toContain('RCPT TO:<carol@acme.test>');

    const after = await verify({ email: 'carol@acme.test' });
    expect(after.cached).toBe(true);
    expect(after).not.toHaveProperty('transcript');
    expect(rcptsFor('carol@acme.test')).toBe(2);
  });

  it('gives a test key an empty conversation: nothing crossed the wire', async () => {
    const answer = await verify({ email: 'alice@acme.test', include_transcript: true }, h.testKey);
    expect(answer.transcript).toEqual([]);
    expect(mta().connections).toBe(0);
  });

  it('keeps the conversation out of the log', async () => {
    await verify({ email: 'alice@acme.test', include_transcript: true });
    await vi.waitFor(() => expect(logLines.length).toBeGreaterThan(0), WAIT_FOR);
    expect(logLines.join('\n')).not.toMatch(/RCPT TO|MAIL FROM|alice@acme\.test/);
  });

  it('is not taken by a batch: batches keep no transcripts', async () => {
    const res = await h.inject({
      method: 'POST',
      url: '/v1/verify/batch',
      headers: { authorization: `Bearer ${h.liveKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ emails: ['alice@acme.test'], include_transcript: true }),
    });
    expect(res.statusCode).toBe(422);
    expect(res.json<{ error: string; message: string }>()).toMatchObject({ error: 'invalid_request' });
  });

  it('refuses a transcript flag that is not a boolean', async () => {
    const res = await h.verify(h.liveKey, { email: 'alice@acme.test', include_transcript: 'please' });
    expect(res.statusCode).toBe(422);
    expect(res.json<{ error: string }>().error).toBe('invalid_request');
  });
});
