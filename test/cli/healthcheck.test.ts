/**
 * The container image's HEALTHCHECK (src/cli/healthcheck.ts): exit 0 only when GET /readyz on
 * the port `serve` listens on answers 2xx. Run as the image runs it, as a process of its own, here
 * against a loopback server standing in for `serve`.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv } from '../kit/cli.js';

const SCRIPT = fileURLToPath(new URL('../../src/cli/healthcheck.ts', import.meta.url));

let server: Server | null = null;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = null;
});

/** A server answering `status` on /readyz (404 elsewhere); resolves with its port and the paths asked. */
async function readyz(status: number): Promise<{ port: number; asked: string[] }> {
  const asked: string[] = [];
  server = createServer((req, res) => {
    asked.push(req.url ?? '');
    res.writeHead(req.url === '/readyz' ? status : 404).end();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, asked };
}

function healthcheck(env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
      env: cleanEnv(env),
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('exit', resolve);
  });
}

describe('the image health check', () => {
  it('passes when /readyz answers 200, asking the loopback address for a wildcard host', async () => {
    const { port, asked } = await readyz(200);
    expect(await healthcheck({ MAILVERDICT_HOST: '0.0.0.0', MAILVERDICT_PORT: String(port) })).toBe(0);
    expect(asked).toEqual(['/readyz']);
  });

  it('fails when /readyz answers 503 (the store or Redis is unreachable)', async () => {
    const { port } = await readyz(503);
    expect(await healthcheck({ MAILVERDICT_HOST: '127.0.0.1', MAILVERDICT_PORT: String(port) })).toBe(1);
  });

  it('fails when nothing listens on the port', async () => {
    const { port } = await readyz(200);
    await new Promise((resolve) => server!.close(resolve));
    server = null;
    expect(await healthcheck({ MAILVERDICT_HOST: '127.0.0.1', MAILVERDICT_PORT: String(port) })).toBe(1);
  });
});
