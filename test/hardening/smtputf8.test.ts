/**
 * Issue 7, defect 6: a non-ASCII mailbox is never written to a server that did not offer
 * SMTPUTF8 (RFC 6531). The verification ends as unknown / `smtp_unicode_unsupported`, the same
 * through the single verifier and the batch engine, with real sockets to the kit's MTAs.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import type { EngineOptions, Verifier } from '../../src/engine/index.js';
import { createVerifier, parseAddress } from '../../src/engine/index.js';
import { needsSmtpUtf8 } from '../../src/engine/syntax.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import type { KitHost, SmtpKit } from '../kit/smtp-servers.js';
import { startSmtpServers } from '../kit/smtp-servers.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import { WAIT_FOR } from '../kit/wait-for.js';

let kit: SmtpKit;
let dns: FakeDnsServer;
let verifier: Verifier;
let batch: BatchEngine;

const UTF8_DOMAIN = 'xn--bcher-kva.test'; // bücher.test

beforeAll(async () => {
  kit = await startSmtpServers({
    plain: { kind: 'mta', mailboxes: ['alice', 'jörg'], smtpUtf8: false },
    utf8: { kind: 'mta', mailboxes: ['jörg'] },
  });
  dns = await startDnsServer();
  for (const [domain, host] of [
    ['plain.test', 'plain'],
    [UTF8_DOMAIN, 'utf8'],
  ] as const) {
    dns.setDomain(domain, { mx: [{ exchange: `mx.${domain}`, priority: 10 }] });
    dns.setDomain(`mx.${domain}`, { a: [kit.hosts[host]!.ip] });
  }
  const engine: EngineOptions = kitEngineOptions(dns.address, kit.port);
  verifier = createVerifier(engine);
  batch = createBatchEngine({
    ...engine,
    concurrency: 4,
    perHostConcurrency: 2,
    greylistRetries: 0,
    greylistDelayMs: 10,
    timeoutMs: 3000,
  });
});

afterAll(async () => {
  await batch.close();
  await verifier.close();
  await dns.close();
  await kit.close();
});

beforeEach(() => {
  kit.resetRecords();
});

async function dialogueOf(host: KitHost): Promise<string[]> {
  await vi.waitFor(() => expect(host.commands).toContain('QUIT'), WAIT_FOR);
  return host.commands;
}

describe('a non-ASCII local part at a server without SMTPUTF8', () => {
  it('is unknown / smtp_unicode_unsupported, with neither MAIL FROM nor RCPT written', async () => {
    const result = await verifier.verify('jörg@plain.test');
    expect(result).toMatchObject({
      email: 'jörg@plain.test',
      status: 'unknown',
      reason: 'smtp_unicode_unsupported',
      valid: false,
      score: 25,
      mx: true,
      catchAll: false,
    });
    expect(result.checks.smtp).toMatchObject({
      passed: null,
      host: 'mx.plain.test',
      code: null,
      enhanced_code: null,
    });
    expect(result.checks.smtp.message).toContain('SMTPUTF8');
    expect(result.checks.catchAll).toEqual({ passed: null, value: null });
    expect(await dialogueOf(kit.hosts.plain!)).toEqual(['EHLO probe.mailverdict.test', 'QUIT']);
  });

  it('gets the same result from the batch engine, whose ASCII recipients at that server are probed', async () => {
    const [ascii, utf8] = await batch.verifyMany(['alice@plain.test', 'jörg@plain.test']);
    expect(ascii).toMatchObject({ status: 'deliverable', reason: null });
    const single = await verifier.verify('jörg@plain.test');
    const stable = (r: typeof single): unknown => ({
      ...r,
      latency_ms: 0,
      checks: { ...r.checks, smtp: { ...r.checks.smtp, duration_ms: 0 } },
    });
    expect(stable(utf8!)).toEqual(stable(single));
    expect(utf8!.reason).toBe('smtp_unicode_unsupported');
    expect(kit.hosts.plain!.commands.filter((c) => /\P{ASCII}/u.test(c))).toEqual([]);
  });
});

// Guards that the fix does not over-block: these held before it, and must keep holding.
describe('a non-ASCII local part at a server with SMTPUTF8', () => {
  it('is asked with SMTPUTF8 on MAIL FROM, the domain in its ASCII (A-label) form', async () => {
    const result = await verifier.verify('jörg@bücher.test');
    expect(result).toMatchObject({ email: `jörg@${UTF8_DOMAIN}`, status: 'deliverable' });
    const dialogue = await dialogueOf(kit.hosts.utf8!);
    expect(dialogue).toContain('MAIL FROM:<verify@probe.mailverdict.test> SMTPUTF8');
    expect(dialogue).toContain(`RCPT TO:<jörg@${UTF8_DOMAIN}>`);
  });

  it('only ever needs SMTPUTF8 for its local part: every accepted domain is ASCII', () => {
    for (const input of [
      'jörg@bücher.de',
      'user@例え.jp',
      'user@ＥＸＡＭＰＬＥ．ｃｏｍ',
      'user@xn--bcher-kva.de',
      'user@[127.0.0.1]',
      'user@[IPv6:2001:db8::1]',
      '"jö rg"@bücher.de',
    ]) {
      const parsed = parseAddress(input);
      expect(parsed.ok, input).toBe(true);
      if (parsed.ok) expect(needsSmtpUtf8(parsed.domain), input).toBe(false);
    }
  });
});
