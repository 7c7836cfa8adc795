/**
 * `serve` and a separate `mailverdict worker` share one SQLite file. While another process
 * commits writes continuously, submissions must not fail with SQLITE_BUSY: a transaction that
 * reads first and then writes cannot upgrade once another connection has committed, so the
 * submission transaction begins with a write.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { databasePath } from '../../src/store/db.js';
import { createJobsHarness, fixtureEmails, type JobsHarness } from './kit.js';

let h: JobsHarness;
beforeEach(async () => {
  h = await createJobsHarness({ flags: { chunkSize: '10' }, account: { plan: 'starter' } });
});
afterEach(async () => {
  await h.close();
});

/** A process that commits one small write after another for `ms` milliseconds; resolves with the count. */
function busyWriter(file: string, jobId: string, ms: number) {
  const script = `
    const Database = require(${JSON.stringify(join(process.cwd(), 'node_modules', 'better-sqlite3'))});
    const db = new Database(process.argv[1]);
    db.pragma('busy_timeout = 5000');
    const stmt = db.prepare('update job_chunks set lease_expires_at = ? where job_id = ?');
    const end = Date.now() + Number(process.argv[3]);
    let n = 0;
    process.stdout.write('ready\\n');
    while (Date.now() < end) { stmt.run(new Date().toISOString(), process.argv[2]); n++; }
    process.stdout.write(String(n) + '\\n');`;
  const child = spawn(process.execPath, ['-e', script, file, jobId, String(ms)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  return {
    ready: new Promise<void>((resolve) => child.stdout.once('data', () => resolve())),
    done: once(child, 'exit').then(() => Number(out.trim().split('\n').at(-1))),
  };
}

it('accepts live and test submissions while another process keeps committing', async () => {
  const seed = await h.submit(h.testKey, { emails: fixtureEmails(5), notify_email: false });
  const writer = busyWriter(databasePath(h.dir), seed.json<{ job_id: string }>().job_id, 2500);
  await writer.ready;
  const statuses: number[] = [];
  const t0 = Date.now();
  while (Date.now() - t0 < 2000) {
    const key = statuses.length % 2 === 0 ? h.liveKey : h.testKey;
    const res = await h.submit(key, { emails: fixtureEmails(20), notify_email: false });
    statuses.push(res.statusCode);
  }
  expect(await writer.done).toBeGreaterThan(100);
  expect(statuses.length).toBeGreaterThan(5);
  expect(statuses.filter((s) => s !== 202)).toEqual([]);
});
