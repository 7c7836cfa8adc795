/**
 * `mailverdict secrets generate-key|rotate` (docs/security.md, "Secrets at rest") through the real
 * command: a key to configure, and a rotation from the data directory's key to a new one.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { webhookSecretFor } from '../../src/services/webhooks/secret.js';
import { openDatabase } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { generateSecretKeyText, parseSecretKey } from '../../src/store/secret-box.js';
import { SECRET_KEY_FILE } from '../../src/store/secret-keys.js';
import { cleanEnv, runCli } from '../kit/cli.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('mailverdict secrets', () => {
  it('generate-key prints a new 32-byte key in base64', async () => {
    const res = await runCli(['secrets', 'generate-key']);
    expect(res.code, res.stderr).toBe(0);
    expect(parseSecretKey(res.stdout, 'stdout').key).toHaveLength(32);
  }, 30_000);

  it('rotate seals every stored secret with the new key; the old one is refused afterwards', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverdict-rotate-'));
    dirs.push(dir);
    const db = openDatabase({ dataDir: dir });
    let accountId: string;
    let secret: string;
    try {
      await migrateToLatest(db);
      accountId = (
        await createAccount(db, new ManualClock('2026-03-10T12:00:00.000Z'), { email: 'a@example.org' })
      ).id;
      secret = await webhookSecretFor(db, accountId);
    } finally {
      await db.destroy();
    }
    const oldKeyFile = join(dir, 'old.key');
    copyFileSync(join(dir, SECRET_KEY_FILE), oldKeyFile);
    const newKeyFile = join(dir, 'new.key');
    const newKey = generateSecretKeyText();
    writeFileSync(newKeyFile, `${newKey}\n`, { mode: 0o600 });

    const res = await runCli(
      ['secrets', 'rotate', '--data-dir', dir, '--secret-key-previous-file', oldKeyFile, '--json'],
      cleanEnv({ MAILVERDICT_SECRET_KEY_FILE: newKeyFile }),
    );
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      resealed: {
        'accounts.webhook_secret': 1,
        'member_two_factor.secret': 0,
        'outcome_sources.verify_key': 0,
      },
    });

    const after = openDatabase({
      dataDir: dir,
      secrets: { key: null, keyFile: newKeyFile, previousKey: null, previousKeyFile: null },
    });
    try {
      expect(await webhookSecretFor(after, accountId)).toBe(secret);
      const row = await after.selectFrom('accounts').select('webhook_secret').executeTakeFirstOrThrow();
      expect(row.webhook_secret!.split(':')[2]).toBe(parseSecretKey(newKey, 'k').id);
    } finally {
      await after.destroy();
    }
    // The data directory's own key (the old one) no longer opens it: exit 2 and the reason.
    // (`serve` checks the keys at start; `accounts show` no longer reads the secret: issue 25.)
    const shown = await runCli(['serve', '--port', '0', '--data-dir', dir]);
    expect(shown.code).toBe(2);
    expect(shown.stderr).toMatch(
      /accounts\.webhook_secret holds secrets sealed with key .* which this process does not have/,
    );
  }, 60_000);
});
