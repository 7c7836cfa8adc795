/**
 * POST /v1/verify parses the address once on its way to a verdict (issue 28, part 3): the service
 * parses it at the entry and hands the parsed address to the result cache and the engine (before:
 * four parses, the entry, the cache's look-up and write, and the engine). Counted with a spy on
 * engine/syntax.ts `parseAddress` that notes who called it, through the real app, engine, DNS
 * server and loopback MTA. The account's own data (services/outcomes: filters, history, verdict
 * log) takes the parsed address too.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Syntax from '../../src/engine/syntax.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';
import { createHarness, type Harness } from '../kit/api-harness.js';

/** The source file of each parseAddress call's caller, relative to src/. */
const callers: string[] = [];

vi.mock('../../src/engine/syntax.js', async (importOriginal) => {
  const original = await importOriginal<typeof Syntax>();
  return {
    ...original,
    parseAddress: (input: string) => {
      const frame = new Error().stack!.split('\n')[2] ?? '';
      callers.push(/src\/([^:)]+)/.exec(frame)?.[1] ?? frame);
      return original.parseAddress(input);
    },
  };
});

let kit: SmtpKit;
let h: Harness;

beforeAll(async () => {
  kit = await startSmtpServers({ mta: { kind: 'mta', mailboxes: ['user1', 'user2'] } });
  h = await createHarness({ flags: { smtpPort: String(kit.port) } });
  h.dns.setDomain('acme.test', { mx: [{ exchange: 'mx1.acme.test', priority: 10 }] });
  h.dns.setDomain('mx1.acme.test', { a: [kit.hosts.mta!.ip] });
});
afterAll(async () => {
  await h?.close();
  await kit?.close();
});
beforeEach(() => {
  callers.length = 0;
});

async function verify(email: string) {
  const res = await h.verify(h.liveKey, { email });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ status: string; cached: boolean }>();
}

describe('POST /v1/verify', () => {
  it('parses the address once for a probe', async () => {
    expect(await verify('user1@acme.test')).toMatchObject({ status: 'deliverable', cached: false });
    expect(callers).toEqual([expect.stringMatching(/verify\.service\.ts$/)]);
  });

  it('parses the address once for an answer from the result cache', async () => {
    await verify('user2@acme.test');
    callers.length = 0;
    expect(await verify('user2@acme.test')).toMatchObject({ status: 'deliverable', cached: true });
    expect(callers).toEqual([expect.stringMatching(/verify\.service\.ts$/)]);
  });
});
