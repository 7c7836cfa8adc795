/**
 * The mail systems' event webhooks (issue 27, part 1): outcome sources made through
 * /v1/outcome-sources, and deliveries to their URLs in each provider's own format, signed in the
 * test with keys it generates (SendGrid's ECDSA P-256, Mailgun's HMAC, SNS's RSA certificate for
 * SES, Postmark's basic auth). A real app on a real store (PostgreSQL with
 * MAILVERDICT_TEST_STORE=postgres); the verdicts they change come from the real engine against
 * the in-process DNS server and a loopback MTA. The only fake is SNS's side of the network: the
 * fetcher that hands out the test's certificate and records the confirmations it is asked for.
 */
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createHarness, errorOf, type Harness } from '../kit/api-harness.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';

let kit: SmtpKit;
let h: Harness;
let app: FastifyInstance;
/** What the SNS fetcher was asked for, in order. */
const fetched: string[] = [];
/** When set, the SNS fetcher fails as a network would. */
let failFetch = false;
let snsCert = '';
let snsKey = '';
/** The app's info log lines. */
const lines: string[] = [];

beforeAll(async () => {
  kit = await startSmtpServers({
    mta: { kind: 'mta', mailboxes: Array.from({ length: 60 }, (_, i) => `user${i}`) },
  });
  h = await createHarness({
    flags: { smtpPort: String(kit.port), publicBaseUrl: 'https://verify.example.com' },
    logLines: lines,
  });
  h.dns.setDomain('acme.test', { mx: [{ exchange: 'mx1.acme.test', priority: 10 }] });
  h.dns.setDomain('mx1.acme.test', { a: [kit.hosts.mta!.ip] });
  const pems = await generate([{ name: 'commonName', value: 'sns.amazonaws.com' }], {
    keyType: 'rsa',
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: new Date('2026-01-01T00:00:00Z'),
    notAfterDate: new Date('2027-01-01T00:00:00Z'),
  });
  snsCert = pems.cert;
  snsKey = pems.private;
  app = buildApp({
    ...h.runtime.ctx,
    snsFetch: async (url) => {
      fetched.push(url.href);
      if (failFetch) throw new Error('connect ETIMEDOUT');
      return url.pathname.endsWith('.pem') ? snsCert : '<ConfirmSubscriptionResponse/>';
    },
  });
  await app.ready();
}, 60_000);
afterAll(async () => {
  await app?.close();
  await h?.close();
  await kit?.close();
});
beforeEach(() => {
  kit.resetRecords();
  fetched.length = 0;
});

const auth = (key = h.liveKey) => ({ authorization: `Bearer ${key}` });
const NOW = Date.parse('2026-03-10T12:00:00Z');
const seconds = (ms: number) => Math.floor(ms / 1000);
const rcptsFor = (email: string) =>
  kit.hosts.mta!.commands.filter((c) => c.toLowerCase() === `rcpt to:<${email}>`).length;

interface Created {
  id: string;
  provider: string;
  url: string;
  basic_auth: { username: string; password: string; url: string } | null;
  topic_arn: string | null;
  events_taken: number;
  events_ignored: number;
}

async function createSource(body: Record<string, unknown>, key = h.liveKey): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url: '/v1/outcome-sources',
    headers: { ...auth(key), 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
}

async function source(body: Record<string, unknown>): Promise<Created> {
  const res = await createSource(body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Created>();
}

async function listed(id: string): Promise<Created> {
  const res = await app.inject({ method: 'GET', url: '/v1/outcome-sources', headers: auth() });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ sources: Created[] }>().sources.find((s) => s.id === id)!;
}

/** POSTs to a source's URL, as the provider would. */
function deliver(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  const u = new URL(url);
  const basic =
    u.username === ''
      ? {}
      : {
          authorization: `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`,
        };
  return app.inject({
    method: 'POST',
    url: u.pathname,
    headers: { 'content-type': 'application/json', ...basic, ...headers },
    payload: body,
  });
}

interface Verdict {
  status: string;
  reason: string | null;
  checks: { history?: { events: { type: string; source: string }[] } };
}

async function verdict(email: string): Promise<Verdict> {
  const res = await h.verify(h.liveKey, { email });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Verdict>();
}

async function eventsOf(source: string): Promise<{ type: string; source_id: string }[]> {
  return h.runtime.ctx.db
    .selectFrom('outcome_events')
    .select(['type', 'source_id'])
    .where('source', '=', source)
    .orderBy('type')
    .execute();
}

describe('/v1/outcome-sources', () => {
  it('makes a source whose URL holds an unguessable token, lists it without the URL, and deletes it', async () => {
    const made = await source({ provider: 'ses', label: 'eu sends' });
    expect(made.url).toMatch(
      /^https:\/\/verify\.example\.com\/hooks\/outcomes\/osrc_[0-9A-Za-z]{16}\/[0-9A-Za-z]{32}$/,
    );
    expect(made.url).toContain(made.id);
    const row = await listed(made.id);
    expect(row).toMatchObject({ provider: 'ses', label: 'eu sends', topic_arn: null, events_taken: 0 });
    expect(JSON.stringify(row)).not.toContain(made.url.split('/').pop()!);
    const stored = await h.runtime.ctx.db
      .selectFrom('outcome_sources')
      .selectAll()
      .where('id', '=', made.id)
      .executeTakeFirstOrThrow();
    expect(stored.token_hash).not.toContain(made.url.split('/').pop()!);
    const del = await app.inject({
      method: 'DELETE',
      url: `/v1/outcome-sources/${made.id}`,
      headers: auth(),
    });
    expect(del.statusCode, del.body).toBe(200);
    const after = await deliver(made.url, '{}');
    expect(after.statusCode).toBe(401);
    expect(errorOf(after).error).toBe('invalid_hook_token');
  });

  it('gives a Postmark source basic-auth credentials once, in a URL to paste', async () => {
    const made = await source({ provider: 'postmark' });
    expect(made.basic_auth?.username).toBe('mailverdict');
    expect(made.basic_auth?.password).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(made.basic_auth?.url).toBe(
      made.url.replace('https://', `https://mailverdict:${made.basic_auth!.password}@`),
    );
  });

  it('refuses a SendGrid source without a P-256 verification key, and a key for SES', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({
      type: 'spki',
      format: 'der',
    });
    for (const body of [
      { provider: 'sendgrid' },
      { provider: 'sendgrid', verification_key: rsa.toString('base64') },
      { provider: 'sendgrid', verification_key: 'not a key' },
      { provider: 'mailgun' },
      { provider: 'ses', verification_key: 'abc' },
      { provider: 'sparkpost' },
    ]) {
      const res = await createSource(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(errorOf(res).error).toBe('invalid_request');
    }
  });

  it('lets a test key list sources but not make one', async () => {
    const res = await createSource({ provider: 'ses' }, h.testKey);
    expect(res.statusCode).toBe(403);
    expect(errorOf(res).error).toBe('insufficient_permissions');
  });

  it("answers 403 account_suspended while the source's account is suspended, and stores nothing", async () => {
    const made = await source({ provider: 'postmark' });
    const { db } = h.runtime.ctx;
    const delivery = JSON.stringify({
      RecordType: 'Delivery',
      MessageID: 'susp-1',
      Recipient: 'user2@acme.test',
      DeliveredAt: '2026-03-10T11:00:00Z',
    });
    await db
      .updateTable('accounts')
      .set({ suspended_at: '2026-03-10T11:30:00.000Z' })
      .where('id', '=', h.accountId)
      .execute();
    try {
      const res = await deliver(made.basic_auth!.url, delivery);
      expect(res.statusCode).toBe(403);
      expect(errorOf(res).error).toBe('account_suspended');
    } finally {
      await db.updateTable('accounts').set({ suspended_at: null }).where('id', '=', h.accountId).execute();
    }
    expect((await listed(made.id)).events_taken).toBe(0);
    expect((await deliver(made.basic_auth!.url, delivery)).json()).toMatchObject({ taken: 1 });
  });

  it('refuses a body over 4 MiB with 413 before reading it', async () => {
    const made = await source({ provider: 'ses' });
    const res = await deliver(made.url, `"${'x'.repeat(4 * 1024 * 1024)}"`);
    expect(res.statusCode).toBe(413);
    expect(errorOf(res).error).toBe('payload_too_large');
  });

  it('answers 401 for a URL with a wrong token, and stores nothing', async () => {
    const made = await source({ provider: 'postmark' });
    const wrong = made.basic_auth!.url.replace(/\/[0-9A-Za-z]{32}$/, `/${'x'.repeat(32)}`);
    const res = await deliver(
      wrong,
      JSON.stringify({ RecordType: 'Delivery', Recipient: 'user1@acme.test' }),
    );
    expect(res.statusCode).toBe(401);
    expect(errorOf(res).error).toBe('invalid_hook_token');
  });
});

describe('SendGrid', () => {
  let made: Created;
  let privateKey: KeyObject;
  beforeAll(async () => {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    privateKey = pair.privateKey;
    made = await source({
      provider: 'sendgrid',
      verification_key: pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    });
  });

  function signed(body: string, timestamp = String(seconds(NOW))): Record<string, string> {
    const signature = sign('sha256', Buffer.from(timestamp + body), { key: privateKey, dsaEncoding: 'der' });
    return {
      'x-twilio-email-event-webhook-signature': signature.toString('base64'),
      'x-twilio-email-event-webhook-timestamp': timestamp,
    };
  }

  const at = seconds(NOW) - 60;
  const batch = JSON.stringify([
    {
      email: 'user10@acme.test',
      timestamp: at,
      'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
      event: 'processed',
      sg_event_id: 'sg-1',
      sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
    },
    {
      email: 'user10@acme.test',
      timestamp: at,
      event: 'delivered',
      response: '250 OK',
      sg_event_id: 'sg-2',
      sg_message_id: 'm1',
    },
    {
      email: 'user11@acme.test',
      timestamp: at,
      event: 'bounce',
      type: 'bounce',
      status: '5.1.1',
      reason: '550 5.1.1 The email account that you tried to reach does not exist.',
      bounce_classification: 'Invalid Address',
      sg_event_id: 'sg-3',
      sg_message_id: 'm2',
    },
    {
      email: 'user12@acme.test',
      timestamp: at,
      event: 'bounce',
      type: 'blocked',
      status: '5.7.1',
      reason: '550 5.7.1 Service unavailable; client host blocked using Spamhaus',
      bounce_classification: 'Reputation',
      sg_event_id: 'sg-4',
      sg_message_id: 'm3',
    },
    {
      email: 'user13@acme.test',
      timestamp: at,
      event: 'spamreport',
      sg_event_id: 'sg-5',
      sg_message_id: 'm4',
    },
    {
      email: 'user14@acme.test',
      timestamp: at,
      event: 'open',
      useragent: 'Mozilla/5.0',
      ip: '255.255.255.255',
      sg_event_id: 'sg-6',
      sg_message_id: 'm5',
    },
    {
      email: 'user15@acme.test',
      timestamp: at,
      event: 'dropped',
      reason: 'Bounced Address',
      sg_event_id: 'sg-7',
      sg_message_id: 'm6',
    },
    { email: 'user16@acme.test', timestamp: at, event: 'something_new', sg_event_id: 'sg-8' },
  ]);

  it('rejects a body whose signature does not match, and stores nothing', async () => {
    const headers = signed(batch);
    const res = await deliver(made.url, batch.replace('user11', 'user19'), headers);
    expect(res.statusCode).toBe(401);
    expect(errorOf(res).error).toBe('invalid_signature');
    const unsigned = await deliver(made.url, batch);
    expect(errorOf(unsigned).error).toBe('invalid_signature');
    expect(await eventsOf('sendgrid')).toEqual([]);
  });

  it('rejects a signature older than a day', async () => {
    const old = String(seconds(NOW) - 25 * 3600);
    const res = await deliver(made.url, batch, signed(batch, old));
    expect(res.statusCode).toBe(401);
    expect(errorOf(res).message).toMatch(/too old/);
  });

  it('takes a signed batch: the bounce of a mailbox is a hard bounce, a block of the sender nothing', async () => {
    const res = await deliver(made.url, batch, signed(batch));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ taken: 4, duplicates: 0, refused: 0, ignored: 4 });
    expect(await eventsOf('sendgrid')).toEqual([
      { type: 'complaint', source_id: 'sg-5' },
      { type: 'delivered', source_id: 'sg-2' },
      { type: 'hard_bounce', source_id: 'sg-3' },
      { type: 'opened', source_id: 'sg-6' },
    ]);
    expect(await verdict('user11@acme.test')).toMatchObject({
      status: 'undeliverable',
      reason: 'previously_bounced',
    });
    expect(await verdict('user13@acme.test')).toMatchObject({ status: 'risky', reason: 'complained' });
    const blocked = await verdict('user12@acme.test');
    expect(blocked.status).toBe('deliverable');
    expect(rcptsFor('user12@acme.test')).toBe(1);
    expect(rcptsFor('user11@acme.test')).toBe(0);
    expect(await listed(made.id)).toMatchObject({ events_taken: 4, events_ignored: 4 });
  });

  it('stores nothing new when SendGrid retries a batch', async () => {
    const res = await deliver(made.url, batch, signed(batch));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ taken: 4, duplicates: 4 });
    expect(await eventsOf('sendgrid')).toHaveLength(4);
  });

  it("logs counts, never an address or the URL's token", async () => {
    const token = made.url.split('/').pop()!;
    const hookLines = lines.filter((l) => l.includes('outcome hook taken'));
    expect(hookLines.some((l) => l.includes(`"source":"${made.id}"`) && l.includes('"taken":4'))).toBe(true);
    for (const line of lines) {
      expect(line).not.toContain(token);
      expect(line).not.toContain('user11@acme.test');
    }
  });

  it('answers 422 for a signed body that is not an array of events, and stores nothing', async () => {
    const body = JSON.stringify({ email: 'user17@acme.test', event: 'bounce' });
    const res = await deliver(made.url, body, signed(body));
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).error).toBe('invalid_hook_payload');
    const broken = '[{"email": ';
    const bad = await deliver(made.url, broken, signed(broken));
    expect(bad.statusCode).toBe(400);
    expect(errorOf(bad).error).toBe('invalid_json');
  });
});

describe('Mailgun', () => {
  const signingKey = 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0';
  let made: Created;
  beforeAll(async () => {
    made = await source({ provider: 'mailgun', verification_key: signingKey });
  });

  function body(
    event: Record<string, unknown>,
    token = 'e0b5477167110d68991efc6b9f89f0a11066af27834600e123',
    key = signingKey,
    ageSeconds = 30,
  ): string {
    const timestamp = String(seconds(NOW) - ageSeconds);
    const signature = createHmac('sha256', key)
      .update(timestamp + token)
      .digest('hex');
    return JSON.stringify({ signature: { token, timestamp, signature }, 'event-data': event });
  }

  const failed = (recipient: string, id: string, status: Record<string, unknown>, reason = 'bounce') => ({
    id,
    timestamp: seconds(NOW) - 40 + 0.375624,
    'log-level': 'error',
    event: 'failed',
    severity: 'permanent',
    reason,
    'delivery-status': { 'attempt-no': 1, 'session-seconds': 0.2, ...status },
    envelope: { sender: 'bob@sends.example', transport: 'smtp', targets: recipient },
    message: {
      headers: {
        to: recipient,
        'message-id': '20260310115920.1.2@sends.example',
        from: 'bob@sends.example',
        subject: 'Hi',
      },
    },
    recipient,
    'recipient-domain': 'acme.test',
  });

  it('takes a permanent failure of the mailbox as a hard bounce', async () => {
    const res = await deliver(
      made.url,
      body(
        failed('user20@acme.test', 'G9Bn5sl1TC6nu79C8C0bwg', {
          code: 550,
          message: 'No Such User Here',
          description: '',
        }),
        'tok-20-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      ),
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ taken: 1, ignored: 0 });
    expect(await verdict('user20@acme.test')).toMatchObject({
      status: 'undeliverable',
      reason: 'previously_bounced',
    });
  });

  it('takes nothing from a policy refusal or from Mailgun suppressing a bounced address', async () => {
    const policy = failed('user21@acme.test', 'ev-21', {
      code: 550,
      message: '5.7.1 Message rejected due to local policy',
      'enhanced-code': '5.7.1',
    });
    const res = await deliver(made.url, body(policy, 'tok-21-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'));
    expect(res.json()).toMatchObject({ taken: 0, ignored: 1 });
    const suppressed = failed(
      'user22@acme.test',
      'ev-22',
      { code: 605, description: 'Not delivering to previously bounced address' },
      'suppress-bounce',
    );
    const res2 = await deliver(
      made.url,
      body(suppressed, 'tok-22-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'),
    );
    expect(res2.json()).toMatchObject({ taken: 0, ignored: 1 });
    expect((await verdict('user21@acme.test')).status).toBe('deliverable');
  });

  it('takes a retry of a token with its own body again, and refuses the token with another body', async () => {
    const token = 'tok-23-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    const delivered = body(
      {
        id: 'ev-23',
        event: 'delivered',
        timestamp: seconds(NOW) - 20,
        recipient: 'user23@acme.test',
        'delivery-status': { code: 250, message: 'OK' },
      },
      token,
    );
    expect((await deliver(made.url, delivered)).json()).toMatchObject({ taken: 1, duplicates: 0 });
    expect((await deliver(made.url, delivered)).json()).toMatchObject({ taken: 1, duplicates: 1 });
    const forged = body(
      failed('user24@acme.test', 'ev-24', { code: 550, message: '5.1.1 no such user' }),
      token,
    );
    const res = await deliver(made.url, forged);
    expect(res.statusCode).toBe(401);
    expect(errorOf(res).message).toMatch(/replay/);
    expect((await verdict('user24@acme.test')).status).toBe('deliverable');
  });

  it('refuses a signature older than Mailgun retries for', async () => {
    const old = body(
      failed('user26@acme.test', 'ev-26', { code: 550, message: '5.1.1 no such user' }),
      'tok-26-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      signingKey,
      9 * 3600,
    );
    const res = await deliver(made.url, old);
    expect(res.statusCode).toBe(401);
    expect(errorOf(res).message).toMatch(/too old/);
    expect((await verdict('user26@acme.test')).status).toBe('deliverable');
  });

  it('refuses a body signed with another key', async () => {
    const res = await deliver(
      made.url,
      body(
        failed('user25@acme.test', 'ev-25', { code: 550, message: '5.1.1 no such user' }),
        'tok-25-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
        'key-another',
      ),
    );
    expect(res.statusCode).toBe(401);
    expect(errorOf(res).error).toBe('invalid_signature');
    expect((await verdict('user25@acme.test')).status).toBe('deliverable');
  });
});

describe('Postmark', () => {
  let made: Created;
  beforeAll(async () => {
    made = await source({ provider: 'postmark' });
  });

  const bounce = (email: string, type: string, typeCode: number, details: string, id: number) =>
    JSON.stringify({
      RecordType: 'Bounce',
      MessageStream: 'outbound',
      ID: id,
      Type: type,
      TypeCode: typeCode,
      Name: type,
      Tag: 'Test',
      MessageID: `883953f4-6105-42a2-a16a-77a8eac7${id}`,
      Metadata: {},
      ServerID: 23,
      Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
      Details: details,
      Email: email,
      From: 'sender@sends.example',
      BouncedAt: '2026-03-10T11:58:54.9070259Z',
      DumpAvailable: true,
      Inactive: true,
      CanActivate: true,
      Subject: 'Test subject',
    });

  it('needs the basic-auth credentials it was given', async () => {
    const res = await deliver(
      made.url,
      bounce('user30@acme.test', 'HardBounce', 1, 'smtp;550 5.1.1 unknown user', 4001),
    );
    expect(res.statusCode).toBe(401);
    expect(errorOf(res).error).toBe('invalid_hook_token');
    expect((await verdict('user30@acme.test')).status).toBe('deliverable');
  });

  it('takes a hard bounce and a spam complaint, and nothing from a block', async () => {
    const url = made.basic_auth!.url;
    expect(
      (
        await deliver(
          url,
          bounce(
            'user31@acme.test',
            'HardBounce',
            1,
            'smtp;550 5.1.1 The email account that you tried to reach does not exist',
            4002,
          ),
        )
      ).json(),
    ).toMatchObject({ taken: 1 });
    expect(
      (
        await deliver(
          url,
          bounce('user32@acme.test', 'Blocked', 100006, 'smtp;550 5.7.1 blocked by policy', 4003),
        )
      ).json(),
    ).toMatchObject({ taken: 0, ignored: 1 });
    expect(
      (
        await deliver(
          url,
          bounce('user33@acme.test', 'HardBounce', 1, 'smtp;554 5.7.1 rejected: spam content', 4004),
        )
      ).json(),
    ).toMatchObject({ taken: 0, ignored: 1 });
    const complaint = JSON.stringify({
      RecordType: 'SpamComplaint',
      MessageStream: 'outbound',
      ID: 4005,
      Type: 'SpamComplaint',
      TypeCode: 512,
      MessageID: '00000000-0000-0000-0000-000000000005',
      Email: 'user34@acme.test',
      BouncedAt: '2026-03-10T11:58:00Z',
      Subject: 'Hi',
    });
    expect((await deliver(url, complaint)).json()).toMatchObject({ taken: 1 });
    expect(await verdict('user31@acme.test')).toMatchObject({
      status: 'undeliverable',
      reason: 'previously_bounced',
    });
    expect(await verdict('user34@acme.test')).toMatchObject({ status: 'risky', reason: 'complained' });
    expect((await verdict('user32@acme.test')).status).toBe('deliverable');
    expect((await verdict('user33@acme.test')).status).toBe('deliverable');
  });

  it('takes a delivery, and a reader unsubscribing', async () => {
    const url = made.basic_auth!.url;
    const delivery = JSON.stringify({
      RecordType: 'Delivery',
      ServerID: 23,
      MessageStream: 'outbound',
      MessageID: '00000000-0000-0000-0000-000000000006',
      Recipient: 'user35@acme.test',
      Tag: 'welcome',
      DeliveredAt: '2026-03-10T11:58:00Z',
      Details: 'Test delivery webhook details',
      Metadata: {},
    });
    const change = JSON.stringify({
      RecordType: 'SubscriptionChange',
      MessageID: '00000000-0000-0000-0000-000000000007',
      ServerID: 23,
      MessageStream: 'outbound',
      ChangedAt: '2026-03-10T11:58:30Z',
      Recipient: 'user35@acme.test',
      Origin: 'Recipient',
      SuppressSending: true,
      SuppressionReason: 'ManualSuppression',
      Tag: 'welcome',
      Metadata: {},
    });
    expect((await deliver(url, delivery)).json()).toMatchObject({ taken: 1 });
    expect((await deliver(url, change)).json()).toMatchObject({ taken: 1 });
    const v = await verdict('user35@acme.test');
    expect(v.checks.history?.events.map((e) => `${e.type}/${e.source}`).sort()).toEqual([
      'delivered/postmark',
      'unsubscribed/postmark',
    ]);
  });
});

describe('Amazon SES through SNS', () => {
  const topic = 'arn:aws:sns:us-west-2:123456789012:ses-outcomes';
  const certUrl =
    'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem';
  let made: Created;
  beforeAll(async () => {
    made = await source({ provider: 'ses' });
  });

  function snsMessage(
    fields: Record<string, string>,
    version: '1' | '2' = '1',
    certificate = certUrl,
  ): string {
    const order =
      fields.Type === 'Notification'
        ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
        : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
    const canonical = order
      .filter((k) => fields[k] !== undefined)
      .map((k) => `${k}\n${fields[k]}\n`)
      .join('');
    const signature = sign(version === '1' ? 'sha1' : 'sha256', Buffer.from(canonical), snsKey).toString(
      'base64',
    );
    return JSON.stringify({
      ...fields,
      SignatureVersion: version,
      Signature: signature,
      SigningCertURL: certificate,
    });
  }

  const notification = (message: unknown, id: string, topicArn = topic) => ({
    Type: 'Notification',
    MessageId: id,
    TopicArn: topicArn,
    Message: JSON.stringify(message),
    Timestamp: '2026-03-10T11:59:30.000Z',
    UnsubscribeURL:
      'https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-west-2:123456789012:ses-outcomes:c9135db0',
  });

  const mail = (destination: string[]) => ({
    timestamp: '2026-03-10T11:59:00.000Z',
    source: 'sender@sends.example',
    sourceArn: 'arn:aws:ses:us-west-2:123456789012:identity/sends.example',
    sendingAccountId: '123456789012',
    messageId: '0000014644fe5ef6-9a483358-9170-4cb4-a269-f5dcdf415321-000000',
    destination,
  });

  it('never fetches a certificate from a host that is not SNS, and refuses the message', async () => {
    const body = snsMessage(
      notification(
        {
          notificationType: 'Delivery',
          mail: mail(['user40@acme.test']),
          delivery: { timestamp: '2026-03-10T11:59:10Z', recipients: ['user40@acme.test'] },
        },
        'm-40',
      ),
      '1',
      'https://sns.us-west-2.amazonaws.com.evil.example/cert.pem',
    );
    const res = await deliver(made.url, body, { 'content-type': 'text/plain; charset=UTF-8' });
    expect(res.statusCode).toBe(401);
    expect(errorOf(res).error).toBe('invalid_signature');
    for (const url of [
      'http://sns.us-west-2.amazonaws.com/c.pem',
      'https://sns.us-west-2.amazonaws.com:8443/c.pem',
      'https://s3.amazonaws.com/c.pem',
    ]) {
      const other = await deliver(
        made.url,
        snsMessage(notification({ notificationType: 'Delivery' }, 'm-41'), '1', url),
      );
      expect(other.statusCode, url).toBe(401);
    }
    expect(fetched).toEqual([]);
  });

  it('confirms the subscription by visiting its SubscribeURL, and pins the topic', async () => {
    const subscribe =
      'https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:ses-outcomes&Token=2336412f37';
    const body = snsMessage({
      Type: 'SubscriptionConfirmation',
      MessageId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b',
      Token: '2336412f37',
      TopicArn: topic,
      Message:
        'You have chosen to subscribe to the topic arn:aws:sns:us-west-2:123456789012:ses-outcomes.\nTo confirm the subscription, visit the SubscribeURL included in this message.',
      SubscribeURL: subscribe,
      Timestamp: '2026-03-10T11:55:00.000Z',
    });
    const res = await deliver(made.url, body, { 'content-type': 'text/plain; charset=UTF-8' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ subscription_confirmed: true, taken: 0 });
    expect(fetched).toEqual([certUrl, subscribe]);
    expect(await listed(made.id)).toMatchObject({ topic_arn: topic, last_event_at: null, events_ignored: 0 });
  });

  it('takes a permanent bounce of the mailbox, a complaint and a delivery (SignatureVersion 1 and 2)', async () => {
    const bounce = {
      notificationType: 'Bounce',
      bounce: {
        feedbackId: '000001378603177f-7a5433e7-8edb-42ae-af10-f0181f34d6ee-000000',
        bounceType: 'Permanent',
        bounceSubType: 'General',
        bouncedRecipients: [
          {
            emailAddress: 'user41@acme.test',
            action: 'failed',
            status: '5.1.1',
            diagnosticCode: 'smtp; 550 5.1.1 user unknown',
          },
          {
            emailAddress: 'user42@acme.test',
            action: 'failed',
            status: '5.7.1',
            diagnosticCode: 'smtp; 550 5.7.1 sender rejected by policy',
          },
        ],
        timestamp: '2026-03-10T11:59:20.605Z',
        remoteMtaIp: '127.0.2.0',
        reportingMTA: 'dsn; a8-70.smtp-out.amazonses.com',
      },
      mail: mail(['user41@acme.test', 'user42@acme.test']),
    };
    const complaint = {
      eventType: 'Complaint',
      complaint: {
        feedbackId: '0000013786031775-163e3910-53eb-4c8e-a04a-f29debf88a84-000000',
        complaintSubType: null,
        complainedRecipients: [{ emailAddress: 'user43@acme.test' }],
        timestamp: '2026-03-10T11:59:25.000Z',
        userAgent: 'Comcast Feedback Loop (V0.01)',
        complaintFeedbackType: 'abuse',
        arrivalDate: '2026-03-10T11:59:24.000Z',
      },
      mail: mail(['user43@acme.test']),
    };
    const delivery = {
      notificationType: 'Delivery',
      mail: mail(['user44@acme.test']),
      delivery: {
        timestamp: '2026-03-10T11:59:10.000Z',
        processingTimeMillis: 546,
        recipients: ['user44@acme.test'],
        smtpResponse: '250 ok:  Message 64111812 accepted',
        reportingMTA: 'a8-70.smtp-out.amazonses.com',
      },
    };
    const r1 = await deliver(made.url, snsMessage(notification(bounce, 'n-1'), '1'));
    expect(r1.json()).toMatchObject({ taken: 1, ignored: 1 });
    // Configuration-set event publishing: SNS adds a Subject, which its signature covers.
    const r2 = await deliver(
      made.url,
      snsMessage({ ...notification(complaint, 'n-2'), Subject: 'Amazon SES Email Event Notification' }, '2'),
    );
    expect(r2.json()).toMatchObject({ taken: 1 });
    const r3 = await deliver(made.url, snsMessage(notification(delivery, 'n-3'), '2'));
    expect(r3.json()).toMatchObject({ taken: 1 });
    expect(await verdict('user41@acme.test')).toMatchObject({
      status: 'undeliverable',
      reason: 'previously_bounced',
    });
    expect((await verdict('user42@acme.test')).status).toBe('deliverable');
    expect(await verdict('user43@acme.test')).toMatchObject({ status: 'risky', reason: 'complained' });
    expect(fetched).toEqual([]); // the certificate was cached
  });

  it('answers 503 when the certificate cannot be fetched, so that SNS tries again', async () => {
    failFetch = true;
    try {
      const url = certUrl.replace('f3ecfb7224c7233fe7bb5f59f96de52f', '0000000000000000000000000000000a');
      const res = await deliver(
        made.url,
        snsMessage(notification({ notificationType: 'Delivery' }, 'n-7'), '1', url),
      );
      expect(res.statusCode).toBe(503);
      expect(errorOf(res).error).toBe('service_unavailable');
    } finally {
      failFetch = false;
    }
  });

  it('reads a delivery over a real socket as SNS sends it (text/plain, chunked)', async () => {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const delivery = {
        notificationType: 'Delivery',
        mail: mail(['user46@acme.test']),
        delivery: { timestamp: '2026-03-10T11:59:12.000Z', recipients: ['user46@acme.test'] },
      };
      const body = snsMessage(notification(delivery, 'n-8'), '2');
      const res = await fetch(`${address}${new URL(made.url).pathname}`, {
        method: 'POST',
        headers: {
          'content-type': 'text/plain; charset=UTF-8',
          'x-amz-sns-message-type': 'Notification',
          'x-amz-sns-topic-arn': topic,
        },
        // A stream: sent chunked, with no Content-Length, as a proxy may pass it on.
        body: new Blob([body]).stream(),
        duplex: 'half',
      });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await res.json()).toMatchObject({ taken: 1 });
    } finally {
      await new Promise<void>((resolve) => app.server.close(() => resolve()));
    }
    expect((await verdict('user46@acme.test')).checks.history?.events.map((e) => e.source)).toEqual(['ses']);
  });

  it('refuses a message whose signed text was changed', async () => {
    const body = JSON.parse(
      snsMessage(
        notification(
          {
            notificationType: 'Delivery',
            mail: mail(['user45@acme.test']),
            delivery: { timestamp: '2026-03-10T11:59:10Z', recipients: ['user45@acme.test'] },
          },
          'n-4',
        ),
      ),
    ) as Record<string, string>;
    body.Message = body.Message!.replace('Delivery', 'Bounce');
    const res = await deliver(made.url, JSON.stringify(body));
    expect(res.statusCode).toBe(401);
    expect(errorOf(res).error).toBe('invalid_signature');
  });

  it('refuses a signed message of another topic than the pinned one', async () => {
    const other = notification(
      { notificationType: 'Bounce' },
      'n-5',
      'arn:aws:sns:us-west-2:999999999999:someone-else',
    );
    const res = await deliver(made.url, snsMessage(other));
    expect(res.statusCode).toBe(403);
    expect(errorOf(res).error).toBe('untrusted_topic');
  });

  it('answers 422 for a signed notification whose message is not SES JSON, and stores nothing', async () => {
    const body = snsMessage({ ...notification({}, 'n-6'), Message: 'hello' });
    const res = await deliver(made.url, body);
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).error).toBe('invalid_hook_payload');
  });
});
