/**
 * One process of the concurrent key-creation test (api-and-workers.test.ts): opens the shared
 * store, prints "ready" and waits for a line on stdin, so that every process fires at once, then
 * creates SCALE_COUNT keys for SCALE_ACCOUNT concurrently. Prints one JSON line with how many
 * were created and how many refused with `key_limit_reached`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { systemClock } from '../../src/clock.js';
import { isAppError } from '../../src/errors.js';
import { createKey } from '../../src/services/keys/keys.service.js';
import { openDatabase } from '../../src/store/db.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const count = Number(env('SCALE_COUNT'));
const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-keys-'));
const db = openDatabase({
  dataDir,
  databaseUrl: env('SCALE_DATABASE_URL'),
  databasePoolSize: count,
});
try {
  // Open every pooled connection before the start, so the creations race and not the connects.
  await Promise.all(Array.from({ length: count }, () => db.selectFrom('accounts').select('id').execute()));
  process.stdout.write('ready\n');
  await once(process.stdin, 'data');
  const outcomes = await Promise.allSettled(
    Array.from({ length: count }, () =>
      createKey(db, systemClock, { accountId: env('SCALE_ACCOUNT'), kind: 'test' }),
    ),
  );
  const refused = outcomes.filter(
    (o) => o.status === 'rejected' && isAppError(o.reason) && o.reason.code === 'key_limit_reached',
  ).length;
  const created = outcomes.filter((o) => o.status === 'fulfilled').length;
  const failed = outcomes.flatMap((o) =>
    o.status === 'rejected' && !(isAppError(o.reason) && o.reason.code === 'key_limit_reached')
      ? [String(o.reason)]
      : [],
  );
  process.stdout.write(`${JSON.stringify({ created, refused, failed })}\n`);
} finally {
  await db.destroy();
  rmSync(dataDir, { recursive: true, force: true });
}
