/**
 * The Postfix-like MTA of the batch benchmark keeps Postfix's documented rules (postconf(5)),
 * since the throughput bound the benchmark reports is computed from them. Driven through real
 * loopback sockets by the engine's own SMTP connection (and nodemailer's, for a second client
 * address). Delays are a few ms and are read from the session record (what the model held each
 * reply back), never from a clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import { SmtpConnection, SmtpConnectionError } from '../../src/engine/smtp/connection.js';
import type { SmtpReply } from '../../src/engine/smtp/reply.js';
import type { PostfixLikeMta, PostfixLikeOptions } from './postfix-like-mta.js';
import { startPostfixLikeMta } from './postfix-like-mta.js';

const HOST = '127.0.0.1';
const MAILBOXES = new Set(['alice', 'bob']);

let mta: PostfixLikeMta | null = null;
const connections: SmtpConnection[] = [];

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.destroy();
  await mta?.close();
  mta = null;
});

/** Every rule off unless the test turns it on, alice and bob exist, replies held for nothing else. */
async function start(rules: Partial<PostfixLikeOptions>): Promise<PostfixLikeMta> {
  mta = await startPostfixLikeMta({
    hosts: [HOST],
    inFlowDelayMs: 0,
    errorSleepMs: 0,
    hardErrorLimit: 0,
    clientConnectionLimit: 0,
    record: true,
    rcpt: (address) =>
      MAILBOXES.has(address.split('@')[0]!)
        ? '250 2.1.5 Ok'
        : `550 5.1.1 <${address}>: Recipient address rejected: User unknown in local recipient table`,
    ...rules,
  });
  return mta;
}

/** Opens a session; `closed` settles when the connection is gone (after the server's close). */
async function connect(server: PostfixLikeMta): Promise<SmtpConnection & { closed: Promise<void> }> {
  let closed!: () => void;
  const gone = new Promise<void>((resolve) => (closed = resolve));
  const connection = await SmtpConnection.open({
    address: HOST,
    port: server.port,
    deadlineAt: performance.now() + 5_000,
    onClose: () => closed(),
  });
  connections.push(connection);
  return Object.assign(connection, { closed: gone });
}

async function greeted(server: PostfixLikeMta): Promise<SmtpConnection & { closed: Promise<void> }> {
  const connection = await connect(server);
  expect((await connection.ehlo('prober.test')).code).toBe(250);
  return connection;
}

/** Sends `lines` in one write and waits for every reply (or the connection's end). */
async function pipelined(connection: SmtpConnection, lines: string[]): Promise<(SmtpReply | Error)[]> {
  return Promise.all(connection.pipeline(lines).map((reply) => reply.catch((error: Error) => error)));
}

/** How long the model held each reply to `lines`, in the order sent. */
function heldFor(server: PostfixLikeMta, lines: string[]): number[] {
  const exchanges = server.stats().records[0]!.exchanges;
  const wanted = new Set(lines);
  return exchanges.filter((e) => wanted.has(e.command)).map((e) => e.heldMs);
}

const rcpt = (local: string): string => `RCPT TO:<${local}@example.test>`;

describe('in_flow_delay', () => {
  it('holds the first accepted RCPT of each transaction once the in-flow tokens are spent', async () => {
    const server = await start({ inFlowDelayMs: 7, inFlowTokens: 1 });
    const connection = await greeted(server);
    const lines = [
      'MAIL FROM:<>',
      rcpt('alice'), // takes the only token: no pause
      rcpt('bob'),
      'RSET',
      'MAIL FROM:<>',
      rcpt('alice'), // no token left: pauses
      rcpt('bob'),
      'RSET',
      'MAIL FROM:<>',
      rcpt('nobody'), // refused: no queue file opened, no pause
      rcpt('bob'), // the first accepted one pauses
    ];
    const replies = await pipelined(connection, lines);
    expect(replies.map((r) => (r instanceof Error ? r.message : r.code))).toEqual([
      250, 250, 250, 250, 250, 250, 250, 250, 250, 550, 250,
    ]);
    const held = server
      .stats()
      .records[0]!.exchanges.slice(2)
      .map((e) => e.heldMs);
    expect(held).toEqual([0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 7]);
    expect(server.stats().inFlowPauses).toBe(2);
  });

  it('holds nothing when switched off', async () => {
    const server = await start({ inFlowDelayMs: 0 });
    const connection = await greeted(server);
    await pipelined(connection, ['MAIL FROM:<>', rcpt('alice'), 'RSET', 'MAIL FROM:<>', rcpt('bob')]);
    expect(server.stats().records[0]!.exchanges.every((e) => e.heldMs === 0)).toBe(true);
    expect(server.stats().inFlowPauses).toBe(0);
  });
});

describe('smtpd_soft_error_limit and smtpd_error_sleep_time', () => {
  it('holds every reply once the session has made the soft limit of errors, QUIT included', async () => {
    const server = await start({ softErrorLimit: 3, errorSleepMs: 5 });
    const connection = await greeted(server);
    const lines = ['MAIL FROM:<>', rcpt('n1'), rcpt('n2'), rcpt('n3'), rcpt('n4'), rcpt('alice'), 'RSET'];
    const replies = await pipelined(connection, lines);
    expect(replies.map((r) => (r instanceof Error ? r.message : r.code))).toEqual([
      250, 550, 550, 550, 550, 250, 250,
    ]);
    // The third error's own reply is not held: smtpd counts the error after replying.
    expect(heldFor(server, lines)).toEqual([0, 0, 0, 0, 5, 5, 5]);
    connection.quit();
    await connection.closed;
    expect(server.stats().records[0]!.exchanges.find((e) => e.command === 'QUIT')!.heldMs).toBe(5);
  });

  it('holds nothing below the soft limit', async () => {
    const server = await start({ softErrorLimit: 3, errorSleepMs: 5 });
    const connection = await greeted(server);
    const lines = ['MAIL FROM:<>', rcpt('n1'), rcpt('n2'), rcpt('alice'), 'RSET'];
    await pipelined(connection, lines);
    expect(heldFor(server, lines)).toEqual([0, 0, 0, 0, 0]);
    expect(server.stats().errorSleeps).toBe(0);
  });
});

describe('smtpd_hard_error_limit', () => {
  it('answers 421 after the hard limit of errors without reading another command, and closes', async () => {
    const server = await start({ hardErrorLimit: 4, softErrorLimit: 2, errorSleepMs: 3 });
    const connection = await greeted(server);
    const lines = [
      'MAIL FROM:<>',
      rcpt('n1'),
      rcpt('n2'),
      rcpt('n3'),
      rcpt('n4'),
      rcpt('alice'),
      rcpt('bob'),
    ];
    const replies = await pipelined(connection, lines);
    const codes = replies.map((r) => (r instanceof Error ? 'closed' : r.code));
    expect(codes).toEqual([250, 550, 550, 550, 550, 421, 'closed']);
    expect((replies[5] as SmtpReply).message).toMatch(/Error: too many errors/);
    expect((replies[5] as SmtpReply).enhancedCode).toBe('4.7.0');
    expect(replies[6]).toBeInstanceOf(SmtpConnectionError);
    const stats = server.stats();
    expect(stats.errorLimitDisconnects).toBe(1);
    // The RCPTs after the limit were never read; the 421 itself waited the error sleep.
    const exchanges = stats.records[0]!.exchanges;
    expect(exchanges.some((e) => e.command === rcpt('alice'))).toBe(false);
    expect(exchanges.at(-1)).toEqual({ command: '', reply: expect.stringMatching(/^421 /), heldMs: 3 });
  });

  it('counts other refused commands as errors too', async () => {
    const server = await start({ hardErrorLimit: 2 });
    const connection = await greeted(server);
    const replies = await pipelined(connection, [rcpt('alice'), 'BOGUS', 'NOOP']);
    expect(replies.map((r) => (r instanceof Error ? 'closed' : r.code))).toEqual([503, 502, 421]);
  });
});

describe('smtpd_client_connection_count_limit', () => {
  it('refuses one session more than the limit from a client address, and counts sessions per client', async () => {
    const server = await start({ clientConnectionLimit: 2 });
    const first = await connect(server);
    await connect(server);
    const third = await connect(server);
    expect(third.banner.code).toBe(421);
    expect(third.banner.message).toMatch(/Error: too many connections from 127\.0\.0\.1/);

    // Another client address has its own count (nodemailer can bind a source address).
    const other = new SMTPConnection({
      host: HOST,
      port: server.port,
      localAddress: '127.0.0.2',
      ignoreTLS: true,
    });
    await new Promise<void>((resolve, reject) => {
      other.once('error', reject);
      other.connect(() => resolve());
    });
    other.quit();

    // A session that has ended frees its place.
    first.quit();
    await first.closed;
    const fourth = await connect(server);
    expect(fourth.banner.code).toBe(220);

    const stats = server.stats();
    expect(stats.connectionLimitRefusals).toBe(1);
    expect(stats.peakConcurrentByClient[HOST]).toEqual({ '127.0.0.1': 2, '127.0.0.2': 1 });
    expect(stats.sessionsByClient).toEqual({ '127.0.0.1': 3, '127.0.0.2': 1 });
  });
});
