/**
 * The EHLO after TLS at hosts that hold their reply behind their TLS 1.3 session tickets
 * (src/engine/smtp/held-replies.ts): a host seen holding is waited for, by the first ticket, on
 * the next session; a host that replies at once never is. The kit's TLS server is Node's OpenSSL,
 * which sends two tickets after the client's Finished as Postfix's does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import { createVerifier } from '../../src/engine/index.js';
import { SessionBroker } from '../../src/engine/sessions/broker.js';
import { HeldReplies } from '../../src/engine/smtp/held-replies.js';
import { budgetDeadlines, openSession } from '../../src/engine/smtp/session.js';
import { TranscriptRecorder } from '../../src/engine/smtp/transcript.js';
import { startDnsServer } from '../kit/dns-server.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import { startSmtpCore, type SmtpCore } from '../kit/smtp-core.js';

const CRLF = '\r\n';
const cores: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(cores.splice(0).map((core) => core.close()));
});

/**
 * A host offering STARTTLS whose reply to the EHLO after TLS waits `holdMs` (0: at once), as
 * Postfix's waits for its tickets' acknowledgement, and to the EHLO in clear text `clearHoldMs`;
 * it logs every command it reads and accepts every sender and recipient.
 */
async function startHost(
  holdMs: number,
  clearHoldMs = 0,
  host = '127.0.0.1',
): Promise<{ core: SmtpCore; commands: string[] }> {
  const commands: string[] = [];
  const core = await startSmtpCore({
    hosts: [host],
    connection(conn) {
      conn.write(`220 held.test ESMTP${CRLF}`);
      return {
        lines(lines) {
          for (const line of lines) {
            commands.push(line);
            if (line === 'STARTTLS') {
              conn.write(`220 2.0.0 Ready to start TLS${CRLF}`);
              conn.startTls();
            } else if (line.startsWith('EHLO') && conn.secure) {
              conn.send(`250-held.test${CRLF}250 PIPELINING${CRLF}`, holdMs);
            } else if (line.startsWith('EHLO')) {
              conn.send(`250-held.test${CRLF}250 STARTTLS${CRLF}`, clearHoldMs);
            } else if (/^(MAIL FROM|RCPT TO):/.test(line) || line === 'RSET') {
              conn.write(`250 2.1.0 Ok${CRLF}`);
            } else if (line === 'QUIT') {
              conn.end(`221 2.0.0 Bye${CRLF}`);
            } else {
              conn.write(`502 5.5.2 Error${CRLF}`);
            }
          }
        },
      };
    },
  });
  cores.push(core);
  return { core, commands };
}

/** How long one session of `greetOnce` may take at most: its deadline. */
const SESSION_BUDGET_MS = 5000;

/**
 * One session with STARTTLS to the host; its transcript's lines (text only). `heldReplyMarginMs`:
 * the session's margin (default: the engine's, 20 ms).
 */
async function greetOnce(
  port: number,
  heldReplies: HeldReplies,
  heldReplyMarginMs?: number,
): Promise<string[]> {
  const recorder = new TranscriptRecorder();
  const deadlineAt = performance.now() + SESSION_BUDGET_MS;
  const opened = await openSession(
    { exchange: 'held.test', address: '127.0.0.1' },
    {
      port,
      heloName: 'prober.test',
      proxy: null,
      deadlines: budgetDeadlines(deadlineAt, deadlineAt),
      recorder,
      heldReplies,
      ...(heldReplyMarginMs === undefined ? {} : { heldReplyMarginMs }),
    },
  );
  expect(opened.ok).toBe(true);
  if (!opened.ok) return [];
  expect(opened.session.tls).toBe(true);
  await opened.session.quit();
  return recorder.seal().map((line) => line.text);
}

const waited = (lines: string[]): boolean =>
  lines.some((line) => line.startsWith('[TLS session ticket after'));

/**
 * The margin of the tests of a host that holds its reply 300 ms: a stall of a loaded machine up to
 * 100 ms (in the EHLO in clear text, or between the ticket and the reply) still finds it holding.
 */
const HOLDING_MARGIN_MS = 100;

describe('the EHLO after TLS and the session tickets', () => {
  it('waits for the first ticket at a host seen holding its reply, and is then answered', async () => {
    const { core, commands } = await startHost(300);
    const memory = new HeldReplies(Date.now);
    const first = await greetOnce(core.port, memory, HOLDING_MARGIN_MS);
    // The first session sends the EHLO with the Finished and sees the reply held.
    expect(waited(first)).toBe(false);
    expect(memory.holds('127.0.0.1')).toBe(true);
    const second = await greetOnce(core.port, memory, HOLDING_MARGIN_MS);
    // The second waits for the ticket, then sends the EHLO (the server reads it and answers).
    expect(waited(second)).toBe(true);
    const handshake = second.findIndex((line) => line.startsWith('[TLS handshake'));
    expect(second.slice(handshake + 1, handshake + 3)).toEqual([
      expect.stringMatching(/^\[TLS session ticket after \d+ ms\]$/),
      'EHLO prober.test',
    ]);
    expect(second).toContain('250 PIPELINING');
    expect(commands.filter((line) => line === 'EHLO prober.test')).toHaveLength(4);
    // A wait tells nothing new: the host stays remembered.
    expect(memory.holds('127.0.0.1')).toBe(true);
  });

  it('never waits at a host that replies at once', async () => {
    const { core } = await startHost(0);
    const memory = new HeldReplies(Date.now);
    // A reply counts as held when it comes more than half a round trip and the margin after the
    // first ticket. With a margin as long as the whole session, no stall of a loaded machine
    // between the ticket and the reply can make an immediate reply look held: the host is never
    // remembered, and no session waits for its ticket.
    for (let i = 0; i < 3; i++) {
      const lines = await greetOnce(core.port, memory, SESSION_BUDGET_MS);
      expect(waited(lines)).toBe(false);
      expect(lines).toContain('250 PIPELINING');
    }
    expect(memory.holds('127.0.0.1')).toBe(false);
  });

  it('does not take a host slow at every EHLO for one that holds (waiting would cost it a round trip)', async () => {
    const { core } = await startHost(300, 300);
    const memory = new HeldReplies(Date.now);
    const lines = await greetOnce(core.port, memory);
    expect(lines).toContain('250 PIPELINING');
    expect(memory.holds('127.0.0.1')).toBe(false);
  });
});

/**
 * A host at `host` that holds its reply 300 ms, as held.test's MX, with a session broker and the
 * kit's engine options (the held-reply margin `marginMs`).
 */
async function heldHost(host: string, marginMs: number) {
  const { core, commands } = await startHost(300, 0, host);
  const dns = await startDnsServer({
    'held.test': { mx: [{ exchange: 'mx.held.test', priority: 10 }] },
    'mx.held.test': { a: [host] },
  });
  cores.push(dns);
  const kit = kitEngineOptions(dns.address, core.port);
  const options = { ...kit, smtp: { ...kit.smtp, heldReplyMarginMs: marginMs } };
  return { commands, options, broker: new SessionBroker({ perHostConcurrency: 2 }) };
}

/** A batch engine on `options` that shares `broker`. */
function batchEngine(options: ReturnType<typeof kitEngineOptions>, broker: SessionBroker) {
  const batch = createBatchEngine(
    {
      ...options,
      concurrency: 2,
      perHostConcurrency: 2,
      greylistRetries: 0,
      greylistDelayMs: 10,
      timeoutMs: 5_000,
    },
    { broker },
  );
  cores.push(batch);
  return batch;
}

describe("one memory for the sessions of both kinds (the session broker's)", () => {
  it('learns from a batch session, and the next single verification waits for the ticket', async () => {
    const host = '127.0.13.1';
    const { commands, options, broker } = await heldHost(host, HOLDING_MARGIN_MS);
    await batchEngine(options, broker).verifyMany(['someone@held.test']);
    expect(commands).toContain('RCPT TO:<someone@held.test>');
    // The batch's session saw the reply held, and told the broker.
    expect(broker.heldReplies.holds(host)).toBe(true);
    const verifier = createVerifier(options, { broker });
    cores.push(verifier);
    const single = await verifier.verify('other@held.test', { timeoutMs: 5_000, transcript: true });
    const lines = single.transcript!.map((line) => line.text);
    expect(lines).toContain('250 PIPELINING');
    expect(waited(lines)).toBe(true);
  });
});

describe('the margin as an engine option (smtp.heldReplyMarginMs)', () => {
  // The host holds its reply 300 ms, which the default margin (20 ms) takes for holding (above);
  // a margin longer than any session's budget cannot, so the option reached the sessions.
  const longMargin = 60_000;

  it("reaches a single verification's sessions", async () => {
    const host = '127.0.13.2';
    const { commands, options, broker } = await heldHost(host, longMargin);
    const verifier = createVerifier(options, { broker });
    cores.push(verifier);
    const single = await verifier.verify('someone@held.test', { timeoutMs: 5_000, transcript: true });
    expect(single.transcript!.map((line) => line.text)).toContain('250 PIPELINING');
    expect(commands).toContain('RCPT TO:<someone@held.test>');
    expect(broker.heldReplies.holds(host)).toBe(false);
  });

  it("reaches a batch engine's sessions", async () => {
    const host = '127.0.13.3';
    const { commands, options, broker } = await heldHost(host, longMargin);
    await batchEngine(options, broker).verifyMany(['someone@held.test']);
    expect(commands).toContain('RCPT TO:<someone@held.test>');
    expect(broker.heldReplies.holds(host)).toBe(false);
  });
});

describe('HeldReplies', () => {
  it('remembers a holding host until the entry expires, and forgets it on a reply at once or no ticket', () => {
    let now = 1_000_000;
    const memory = new HeldReplies(() => now, 60_000);
    memory.learn('192.0.2.1', 'held');
    memory.learn('192.0.2.2', 'held');
    memory.learn('192.0.2.3', 'held');
    expect(memory.holds('192.0.2.1')).toBe(true);
    memory.learn('192.0.2.1', 'waited');
    memory.learn('192.0.2.2', 'not_held');
    memory.learn('192.0.2.3', 'no_tickets');
    expect([memory.holds('192.0.2.1'), memory.holds('192.0.2.2'), memory.holds('192.0.2.3')]).toEqual([
      true,
      false,
      false,
    ]);
    // A wait does not renew it: the host is seen afresh after the TTL.
    now += 60_001;
    expect(memory.holds('192.0.2.1')).toBe(false);
  });
});
