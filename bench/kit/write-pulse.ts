/**
 * A small write every `everyMs` through a connection of its own, in a worker thread (the store's
 * SQLite driver is synchronous: a writer on the main thread could not run while a long
 * transaction holds the event loop). Each write is one row updated in a table of its own, in
 * its own transaction; its latency is how long it waited for the writer lock (SQLite) or a lock
 * (PostgreSQL). Started with `{ file }` or `{ url }`; answers `{ latencies }` on 'stop'. Bounded:
 * it stops by itself after `maxMs` or `maxWrites`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { Sqlite } from '../../src/store/dialect/better-sqlite3.js';

export interface PulseOptions {
  file?: string;
  url?: string;
  everyMs: number;
  maxMs: number;
  maxWrites: number;
}

const options = workerData as PulseOptions;
/** [start (ms since the epoch), latency (ms)] of each write. */
const latencies: [number, number][] = [];
let stopped = false;

async function writer(): Promise<{ write: () => Promise<void>; close: () => Promise<void> }> {
  if (options.file !== undefined) {
    const sqlite = new Sqlite(options.file);
    sqlite.pragma('busy_timeout = 120000');
    sqlite.exec('create table if not exists bench_pulse (id integer primary key, n integer not null)');
    sqlite.exec('insert or ignore into bench_pulse (id, n) values (1, 0)');
    const update = sqlite.prepare('update bench_pulse set n = n + 1 where id = 1');
    const begin = sqlite.prepare('begin immediate');
    const commit = sqlite.prepare('commit');
    return {
      write: () => {
        begin.run();
        update.run();
        commit.run();
        return Promise.resolve();
      },
      close: () => {
        sqlite.close();
        return Promise.resolve();
      },
    };
  }
  const client = new pg.Client({ connectionString: options.url });
  await client.connect();
  await client.query('create table if not exists bench_pulse (id integer primary key, n integer not null)');
  await client.query('insert into bench_pulse (id, n) values (1, 0) on conflict do nothing');
  return {
    write: async () => {
      await client.query('begin');
      await client.query('update bench_pulse set n = n + 1 where id = 1');
      await client.query('commit');
    },
    close: () => client.end(),
  };
}

const w = await writer();
parentPort!.on('message', (m: string) => {
  if (m === 'stop') stopped = true;
});
parentPort!.postMessage('ready');
const started = performance.now();
while (!stopped && latencies.length < options.maxWrites && performance.now() - started < options.maxMs) {
  const t0 = performance.now();
  await w.write();
  latencies.push([performance.timeOrigin + t0, performance.now() - t0]);
  await new Promise((r) => setTimeout(r, options.everyMs));
}
await w.close();
parentPort!.postMessage({ latencies });
