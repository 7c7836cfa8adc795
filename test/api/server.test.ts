import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime, startServer, type RunningServer, type Runtime } from '../../src/runtime.js';
import { bootstrapFirstAccount, type Bootstrap } from '../../src/services/bootstrap.service.js';
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

  it('bootstraps only once', async () => {
    expect(await bootstrapFirstAccount(runtime.ctx.db, systemClock)).toBeNull();
  });
});

describe('graceful shutdown', () => {
  it('finishes an in-flight live verification while it stops accepting new connections', async () => {
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
    try {
      const keys = (await bootstrapFirstAccount(runtime.ctx.db, systemClock))!;
      const server = await startServer(runtime);
      const inFlight = fetch(`${server.url}/v1/verify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys.live.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'anna@slow.test', timeout_ms: 5000 }),
      });
      // Close once the request is being worked on (the MTA has seen the connection).
      while (smtp.hosts['mx.slow.test']!.connections === 0) await new Promise((r) => setTimeout(r, 20));
      const closing = server.close();
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(((await res.json()) as { status: string }).status).toBe('deliverable');
      await closing;
      await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    } finally {
      await runtime.close();
      await dns.close();
      await smtp.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
