/**
 * A real `mailverdict serve` (the sources through tsx, test/kit/cli.ts) on a fresh data directory,
 * its bootstrap account's keys, and a webhook receiver on loopback: what the client's tests run
 * against.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config.js';
import { webhookSecretFor } from '../../../src/services/webhooks/secret.js';
import { openDatabase } from '../../../src/store/db.js';
import { cleanEnv, spawnServe, type Served } from '../../../test/kit/cli.js';

export interface Server {
  url: string;
  testKey: string;
  liveKey: string;
  accountId: string;
  /** The account's `whsec_…` secret, read from the server's store (the dashboard's reveal shows it to people). */
  webhookSecret(): Promise<string>;
  stop(): Promise<void>;
}

export async function startServer(): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-client-'));
  let serve: Served;
  try {
    serve = await spawnServe(
      ['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, '--allow-insecure-webhooks'],
      // A customer's plan, with the rate limit the retry tests meet (a first start's is `unlimited`).
      { env: cleanEnv({ MAILVERDICT_LOG_LEVEL: 'warn', MAILVERDICT_BOOTSTRAP_PLAN: 'free' }) },
    );
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const keys = serve.keys;
  if (keys === undefined) throw new Error('serve wrote no bootstrap keys');
  return {
    url: serve.url,
    testKey: keys.test_key,
    liveKey: keys.live_key,
    accountId: keys.account_id,
    async webhookSecret() {
      const db = openDatabase(loadConfig({ dataDir }, {}));
      try {
        return await webhookSecretFor(db, keys.account_id);
      } finally {
        await db.destroy();
      }
    },
    async stop() {
      await serve.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Answers 200 to every POST and keeps what came; `next()` resolves with the next delivery. */
export async function startReceiver() {
  const received: Delivery[] = [];
  const waiting: ((d: Delivery) => void)[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const delivery = { headers: req.headers, body };
      const waiter = waiting.shift();
      if (waiter) waiter(delivery);
      else received.push(delivery);
      res.writeHead(200).end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    next: () =>
      new Promise<Delivery>((resolve) => {
        const first = received.shift();
        if (first) resolve(first);
        else waiting.push(resolve);
      }),
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
