/**
 * Issue 7, defect 5 and 8: whatever layer refuses a request (Node's HTTP parser, Fastify's
 * router, its JSON parser), the answer is the envelope with a request id, and it is logged.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
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
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverdict-framework-'));
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  runtime = await createRuntime(loadConfig({ dataDir: dir, port: '0' }, {}), {
    logger: pino({ level: 'info' }, sink),
  });
  keys = (await bootstrapFirstAccount(runtime.ctx.db, systemClock))!;
  server = await startServer(runtime);
});
afterAll(async () => {
  await server.close();
  await runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: { error: string; message: string; request_id: string };
}

/** Writes `request` as bytes on a fresh connection and reads the whole answer. */
function raw(request: string): Promise<Raw> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const end = text.indexOf('\r\n\r\n');
      const headers: Record<string, string> = {};
      for (const line of text.slice(0, end).split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({
        status: Number(text.slice(9, 12)),
        headers,
        body: JSON.parse(text.slice(end + 4)) as Raw['body'],
      });
    });
    socket.end(request);
  });
}

function expectEnvelope(res: Raw, status: number, error: string): void {
  expect(res.status).toBe(status);
  expect(res.body.error).toBe(error);
  expect(res.body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(res.headers['x-request-id']).toBe(res.body.request_id);
  expect(logLines.some((l) => JSON.stringify(l).includes(res.body.request_id))).toBe(true);
}

describe('refusals below the routes', () => {
  it('answers a bad percent-encoding with 400 invalid_url', async () => {
    const res = await raw('GET /v1/jobs/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expectEnvelope(res, 400, 'invalid_url');
  });

  it('answers an over-long path parameter with 414 uri_too_long, without echoing it', async () => {
    const res = await raw(
      `GET /v1/jobs/${'a'.repeat(5000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expectEnvelope(res, 414, 'uri_too_long');
    expect(res.body.message.length).toBeLessThan(200);
  });

  it('answers headers over 16 KiB with 431 headers_too_large', async () => {
    const res = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    expectEnvelope(res, 431, 'headers_too_large');
  });

  it('answers a URL over 16 KiB with 431 headers_too_large', async () => {
    const res = await raw(`GET /healthz?q=${'q'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectEnvelope(res, 431, 'headers_too_large');
  });

  it('answers bytes that are not HTTP with 400 bad_request', async () => {
    const res = await raw('HELLO THERE\r\n\r\n');
    expectEnvelope(res, 400, 'bad_request');
  });
});

describe('the JSON body of POST /v1/verify', () => {
  it('says what is wrong with a __proto__ key instead of calling it invalid JSON', async () => {
    const res = await fetch(`${server.url}/v1/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.test.key}`, 'content-type': 'application/json' },
      body: '{"email":"a@valid.example.com","__proto__":{"admin":true}}',
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as Raw['body'];
    expect(body.error).toBe('invalid_request');
    expect(body.message).toContain('__proto__');
  });
});
