import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime, startServer, type RunningServer, type Runtime } from '../../src/runtime.js';
import {
  bootstrapDelivered,
  bootstrapFirstAccount,
  type Bootstrap,
} from '../../src/services/accounts/bootstrap.service.js';
import { startDnsServer } from '../kit/dns-server.js';
import { startSmtpServers } from '../kit/smtp-servers.js';

describe('the API on a real socket', () => {
  let dir: string;
  let runtime: Runtime;
  let server: RunningServer;
  let keys: Bootstrap;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailverdict-server-'));
    runtime = await createRuntime(loadConfig({ dataDir: dir, port: '0' }, {}), {
      logger: pino({ level: 'silent' }),
    });
    keys = (await bootstrapFirstAccount(runtime.ctx.db, systemClock))!;
    server = await startServer(runtime);
  });
  afterAll(async () => {
    await server.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers POST /v1/verify and GET /v1/account/usage over HTTP with the contract headers', async () => {
    const res = await fetch(`${server.url}/v1/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.test.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'x@disposable.example.com' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=1$/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 'risky', disposable: true, reason: 'disposable_domain' });
    expect(res.headers.get('x-request-id')).toBe(body.request_id);

    const usage = await fetch(`${server.url}/v1/account/usage`, {
      headers: { authorization: `Bearer ${keys.live.key}` },
    });
    expect(usage.status).toBe(200);
    expect(((await usage.json()) as { quota: { used: number } }).quota.used).toBe(0);
  });

  it('bootstraps only once: once its keys were shown, a later start creates and replaces nothing', async () => {
    expect(await bootstrapDelivered(runtime.ctx.db, systemClock, keys, 'terminal')).toBe(true);
    expect(await bootstrapFirstAccount(runtime.ctx.db, systemClock)).toBeNull();
  });
});

describe('graceful shutdown', () => {
  /** A server whose live verifications take a while: its only MTA answers every command after 300 ms. */
  async function startSlowServer() {
    const smtp = await startSmtpServers({
      'mx.slow.test': { kind: 'mta', mailboxes: ['anna'], delayMs: 300 },
    });
    const dns = await startDnsServer({
      'slow.test': { mx: [{ exchange: 'mx.slow.test', priority: 10 }] },
      'mx.slow.test': { a: [smtp.hosts['mx.slow.test']!.ip] },
    });
    const dir = mkdtempSync(join(tmpdir(), 'mailverdict-shutdown-'));
    const config = loadConfig(
      {
        dataDir: dir,
        port: '0',
        dnsServer: dns.address,
        smtpPort: String(smtp.port),
        allowInternalTargets: 'true',
      },
      {},
    );
    const runtime = await createRuntime(config, { logger: pino({ level: 'silent' }) });
    const keys = (await bootstrapFirstAccount(runtime.ctx.db, systemClock))!;
    const server = await startServer(runtime);
    return {
      server,
      keys,
      /** Resolves once the MTA has seen the probe's connection: the request is being worked on. */
      async probing(): Promise<void> {
        while (smtp.hosts['mx.slow.test']!.connections === 0) await new Promise((r) => setTimeout(r, 20));
      },
      async cleanup(): Promise<void> {
        await runtime.close();
        await dns.close();
        await smtp.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }

  it('finishes an in-flight live verification while it stops accepting new connections', async () => {
    const slow = await startSlowServer();
    try {
      const inFlight = fetch(`${slow.server.url}/v1/verify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${slow.keys.live.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'anna@slow.test', timeout_ms: 5000 }),
      });
      await slow.probing();
      const closing = slow.server.close();
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(((await res.json()) as { status: string }).status).toBe('deliverable');
      await closing;
      await expect(fetch(`${slow.server.url}/healthz`)).rejects.toThrow();
    } finally {
      await slow.cleanup();
    }
  });

  it('answers a request that arrives during shutdown with 503 service_unavailable, the envelope and a request id', async () => {
    const slow = await startSlowServer();
    try {
      // The connection stays open while its first request, a slow live verification, is in
      // flight; a second request written on it after shutdown began must be refused cleanly.
      const body = JSON.stringify({ email: 'anna@slow.test', timeout_ms: 5000 });
      const socket = connect(slow.server.port, '127.0.0.1');
      let raw = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (raw += chunk));
      const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write(
        `POST /v1/verify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${slow.keys.live.key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await slow.probing();
      const closing = slow.server.close();
      // The listener is closed after the shutdown hooks ran: once new connections are refused,
      // the server is shutting down.
      while (
        await fetch(`${slow.server.url}/healthz`).then(
          () => true,
          () => false,
        )
      )
        await new Promise((r) => setTimeout(r, 10));
      socket.write(
        `GET /v1/account/usage HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${slow.keys.live.key}\r\n\r\n`,
      );
      await ended;
      await closing;

      const responses = raw.split(/(?=HTTP\/1\.1 )/);
      expect(responses).toHaveLength(2);
      expect(responses[0]).toMatch(/^HTTP\/1\.1 200 /);
      const refused = responses[1]!;
      expect(refused).toMatch(/^HTTP\/1\.1 503 /);
      expect(refused).toMatch(/\r\nretry-after: 1\r\n/i);
      const requestId = /\r\nx-request-id: (req_\w+)\r\n/i.exec(refused)?.[1];
      expect(requestId).toBeDefined();
      const envelope = JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4)) as Record<string, string>;
      expect(envelope).toEqual({
        error: 'service_unavailable',
        message: expect.stringMatching(/shutting down/),
        request_id: requestId,
      });
    } finally {
      await slow.cleanup();
    }
  });
});
