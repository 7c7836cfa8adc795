/**
 * The reply-pattern table through real sockets: a loopback MTA answers RCPT TO with each row's
 * example, the engine asks the fake DNS server and probes it, and the verdict a user sees must be
 * the one the row's meaning gives (docs/verdicts.md, "How replies are read").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerificationResult, Verifier } from '../../src/engine/index.js';
import { createVerifier } from '../../src/engine/index.js';
import { ReplyParser } from '../../src/engine/smtp/reply.js';
import type { ReplyMeaning } from '../../src/engine/smtp/reply-patterns.js';
import { REPLY_PATTERNS } from '../../src/engine/smtp/reply-patterns.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import type { ScriptedReply, SmtpKit } from '../kit/smtp-servers.js';
import { startSmtpServers } from '../kit/smtp-servers.js';
import { kitEngineOptions } from '../kit/engine-options.js';

type Verdict = { status: string; reason: string };

/** What each meaning becomes for the user, by reply class: the specification, written out again. */
const VERDICT: Record<ReplyMeaning, { 4: Verdict; 5: Verdict }> = {
  no_mailbox: {
    4: { status: 'unknown', reason: 'greylisted' },
    5: { status: 'undeliverable', reason: 'smtp_rejected' },
  },
  mailbox_full: {
    4: { status: 'risky', reason: 'mailbox_full' },
    5: { status: 'risky', reason: 'mailbox_full' },
  },
  policy: {
    4: { status: 'unknown', reason: 'smtp_blocked' },
    5: { status: 'unknown', reason: 'smtp_blocked' },
  },
  unclear: {
    4: { status: 'unknown', reason: 'smtp_blocked' },
    5: { status: 'unknown', reason: 'smtp_blocked' },
  },
  try_later: {
    4: { status: 'unknown', reason: 'greylisted' },
    5: { status: 'unknown', reason: 'smtp_blocked' },
  },
};

/** The example as the kit's MTA sends it: one line, the enhanced code (if any) first. */
function scripted(example: string): ScriptedReply {
  const [reply] = new ReplyParser().push(`${example}\r\n`);
  if (!reply) throw new Error(`incomplete reply: ${example}`);
  const head = reply.enhancedCode === null ? '' : `${reply.enhancedCode} `;
  return { code: reply.code, message: `${head}${reply.message}` };
}

const localPart = (i: number): string => `row${i + 1}`;

let kit: SmtpKit;
let dns: FakeDnsServer;
let verifier: Verifier;
const results: VerificationResult[] = [];

beforeAll(async () => {
  kit = await startSmtpServers({
    vendors: {
      kind: 'mta',
      mailboxes: ['alice'],
      rcpt: Object.fromEntries(REPLY_PATTERNS.map((row, i) => [localPart(i), scripted(row.example)])),
    },
  });
  dns = await startDnsServer();
  dns.setDomain('vendors.test', { mx: [{ exchange: 'mx.vendors.test', priority: 10 }] });
  dns.setDomain('mx.vendors.test', { a: [kit.hosts.vendors!.ip] });
  verifier = createVerifier(kitEngineOptions(dns.address, kit.port));
  // A few sessions at a time: each is a full dialogue (about 0.1 s on this kit), one per row.
  const queue = REPLY_PATTERNS.map((_row, i) => i);
  const work = async (): Promise<void> => {
    for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
      results[i] = await verifier.verify(`${localPart(i)}@vendors.test`);
    }
  };
  await Promise.all(Array.from({ length: 6 }, work));
});

afterAll(async () => {
  await verifier?.close();
  await kit?.close();
  await dns?.close();
});

describe('each documented reply, answered by a loopback MTA at RCPT TO', () => {
  REPLY_PATTERNS.forEach((row, i) => {
    const reply = scripted(row.example);
    const expected = VERDICT[row.means][reply.code >= 500 ? 5 : 4];
    it(`${row.family} ${reply.code} (${row.means}) → ${expected.status} ${expected.reason}`, () => {
      const result = results[i]!;
      expect({ status: result.status, reason: result.reason }).toEqual(expected);
      expect(result.checks.smtp).toMatchObject({ code: reply.code, host: 'mx.vendors.test' });
    });
  });
});
