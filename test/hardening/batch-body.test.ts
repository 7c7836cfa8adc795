/**
 * Issue 7, defects 1 and 3: a batch body is read as a stream and refused at the first thing that
 * is not allowed, before the rest is read; entries and webhook_url have length limits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime, startServer, type RunningServer, type Runtime } from '../../src/runtime.js';
import { bootstrapFirstAccount, type Bootstrap } from '../../src/services/accounts/bootstrap.service.js';

let dir: string;
let runtime: Runtime;
let server: RunningServer;
let keys: Bootstrap;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverdict-batch-body-'));
  runtime = await createRuntime(
    loadConfig(
      { dataDir: dir, port: '0', plans: JSON.stringify({ free: { rate_limit_per_second: 10_000 } }) },
      {},
    ),
    {
      logger: pino({ level: 'silent' }),
    },
  );
  keys = (await bootstrapFirstAccount(runtime.ctx.db, systemClock))!;
  server = await startServer(runtime);
});
afterAll(async () => {
  await server.close();
  await runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

interface RawResponse {
  status: number;
  headers: string;
  body: Record<string, unknown>;
}

/**
 * Sends the headers of a batch submission announcing `declaredLength` bytes and then only
 * `prefix`, keeping the connection open: a server that waits for the whole body never answers.
 */
function sendPrefix(prefix: string, declaredLength: number, key = keys.live.key): Promise<RawResponse> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(port), '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer while the rest of the body was withheld'));
    }, 8000);
    socket.on('data', (d) => {
      text += d.toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = /content-length: (\d+)/i.exec(text.slice(0, end));
      const body = text.slice(end + 4);
      if (length && Buffer.byteLength(body) >= Number(length[1])) {
        clearTimeout(timer);
        socket.destroy();
        resolve({
          status: Number(text.slice(9, 12)),
          headers: text.slice(0, end).toLowerCase(),
          body: JSON.parse(body) as Record<string, unknown>,
        });
      }
    });
    socket.on('error', reject);
    socket.write(
      `POST /v1/verify/batch HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${declaredLength}\r\n\r\n${prefix}`,
    );
  });
}

async function submit(body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/v1/verify/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys.test.key}`, 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function jobsStored(): Promise<number> {
  const row = await runtime.ctx.db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('a batch body is refused before it is read to its end', () => {
  it('answers 422 naming an unknown field while the rest of a 40 MB body is still unsent', async () => {
    const res = await sendPrefix('{"emails":["a@valid.example.com"],"padding":[1,2,3,', 40_000_000);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'invalid_request' });
    expect(res.body.message).toContain('"padding"');
    expect(typeof res.body.request_id).toBe('string');
    expect(res.headers).toContain('x-request-id: req_');
    expect(res.headers).toContain('connection: close');
  });

  it('answers 422 at the first nested value of a deeply nested body', async () => {
    const res = await sendPrefix(`{"emails":${'['.repeat(10_000)}`, 40_000_000);
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('emails.0 must be a string, got an array');
  });

  it('answers 422 naming the entry while a 20 MB "address" is still arriving', async () => {
    const res = await sendPrefix(`{"emails":["ok@valid.example.com","${'x'.repeat(100_000)}`, 20_000_100);
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(/^emails\.1 is longer than 320 characters/);
  });

  it('answers 413 at once to a declared length over 150 MiB, counting nothing', async () => {
    const res = await sendPrefix('{"emails":[', 151 * 1024 * 1024);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: 'payload_too_large' });
    expect(await jobsStored()).toBe(0);
  });

  it('refuses a body that is not an object, a duplicated field, and trailing values', async () => {
    expect((await submit('["a@valid.example.com"]')).body.message).toBe(
      'the body must be a JSON object, got an array',
    );
    expect((await submit('{"emails":["a@b.co"],"emails":["c@d.co"]}')).body.message).toBe(
      'emails is given twice',
    );
    const trailing = await submit('{"emails":["a@b.co"]} {"emails":["c@d.co"]}');
    expect(trailing.status).toBe(422);
    expect(trailing.body.message).toBe('the body holds more than one JSON value');
  });

  it('answers 400 invalid_json to malformed JSON and to a body cut short', async () => {
    const broken = await submit('{"emails":["a@b.co"');
    expect(broken).toMatchObject({ status: 400, body: { error: 'invalid_json' } });
    const bad = await submit('{"emails":[tru]}');
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid_json' } });
  });

  it('refuses a __proto__ field by name instead of calling the body invalid JSON', async () => {
    const res = await submit('{"emails":["a@b.co"],"__proto__":{"x":1}}');
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('unknown field "__proto__"');
  });

  it('stores nothing for any refused body', async () => {
    expect(await jobsStored()).toBe(0);
  });
});

describe('length limits of batch entries and webhook_url', () => {
  it('accepts a 320-character entry as a row of its own and refuses 321 characters', async () => {
    const ok = await submit(JSON.stringify({ emails: ['y'.repeat(320)], notify_email: false }));
    expect(ok.status).toBe(202);
    const long = await submit(JSON.stringify({ emails: ['a@valid.example.com', 'y'.repeat(321)] }));
    expect(long.status).toBe(422);
    expect(long.body.message).toMatch(/^emails\.1 is longer than 320 characters/);
  });

  it('refuses a webhook_url over 2,048 characters with 422 naming the field', async () => {
    const url = `https://hooks.example.com/${'p'.repeat(70_000)}`;
    const res = await submit(JSON.stringify({ emails: ['a@valid.example.com'], webhook_url: url }));
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('webhook_url is longer than 2048 characters');
  });

  it.each([
    'https://exa_mple.com/hook',
    'https://-lead.example.com/hook',
    `https://${'l'.repeat(64)}.example.com/h`,
  ])('refuses a webhook host that cannot be a DNS name: %s', async (url) => {
    const res = await submit(JSON.stringify({ emails: ['a@valid.example.com'], webhook_url: url }));
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('host');
  });
});
