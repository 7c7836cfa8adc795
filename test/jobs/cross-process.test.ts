/**
 * `serve` and a separate `mailverdict worker` share one SQLite file. While another process
 * commits writes continuously, submissions must not fail with SQLITE_BUSY: a transaction that
 * reads first and then writes cannot upgrade once another connection has committed, so the
 * submission transaction begins with a write.
 */
import { spawn } from 'node:child_process';
import { sqliteDriverPackage } from '../../src/store/dialect/better-sqlite3.js';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { databasePath } from '../../src/store/db.js';
import { createJobsHarness, fixtureEmails, type JobsHarness } from '../kit/jobs-kit.js';

// SQLite's own cross-process locking is what this file tests; PostgreSQL runs statements of many
// processes at once by design (test/store/backends.test.ts covers its concurrency rules).
const onPostgres = process.env.MAILVERDICT_TEST_STORE === 'postgres';
if (onPostgres)
  console.log(
    'cross-process.test.ts skipped: it tests SQLite file locking (MAILVERDICT_TEST_STORE=postgres)',
  );

let h: JobsHarness;
beforeEach(async () => {
  if (onPostgres) return;
  h = await createJobsHarness({ flags: { chunkSize: '10' }, account: { plan: 'starter' } });
});
afterEach(async () => {
  if (onPostgres) return;
  await h.close();
});

/** A process that commits one small write after another until it is killed. */
function busyWriter(file: string, jobId: string) {
  const script = `
    const Database = require(${JSON.stringify(join(process.cwd(), 'node_modules', sqliteDriverPackage()))});
    const db = new Database(process.argv[1]);
    db.pragma('busy_timeout = 5000');
    const stmt = db.prepare('update job_chunks set lease_expires_at = ? where job_id = ?');
    process.stdout.write('ready\\n');
    for (;;) stmt.run(new Date().toISOString(), process.argv[2]);`;
  const child = spawn(process.execPath, ['-e', script, file, jobId], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return {
    child,
    ready: new Promise<void>((resolve) => child.stdout.once('data', () => resolve())),
  };
}

it.skipIf(onPostgres)(
  'accepts live and test submissions while another process keeps committing',
  async () => {
    const seed = await h.submit(h.testKey, { emails: fixtureEmails(5), notify_email: false });
    const writer = busyWriter(databasePath(h.dir), seed.json<{ job_id: string }>().job_id);
    const failures: string[] = [];
    try {
      await writer.ready;
      for (let i = 0; i < 16; i++) {
        const key = i % 2 === 0 ? h.liveKey : h.testKey;
        const res = await h.submit(key, { emails: fixtureEmails(20), notify_email: false });
        if (res.statusCode !== 202) failures.push(`${i}: ${res.statusCode} ${res.body}`);
      }
      // The writer was committing the whole time.
      expect(writer.child.exitCode).toBeNull();
    } finally {
      writer.child.kill('SIGKILL');
      await once(writer.child, 'exit');
    }
    expect(failures).toEqual([]);
  },
);
