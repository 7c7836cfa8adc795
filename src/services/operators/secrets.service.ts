/**
 * The secrets the store seals (store/secret-box.ts; docs/security.md, "Secrets at rest"): sealing
 * the plaintext an older version left at start-up, and a key rotation's re-sealing.
 */
import { storeSecrets } from '../../store/backend.js';
import { resealSecrets, sealingKeyIds } from '../../store/sealed-secrets.store.js';
import type { Executor } from '../../store/executor.js';
import { generateSecretKeyText, SecretKeyError, type SealedColumn } from '../../store/secret-box.js';

export type ResealCounts = Record<SealedColumn, number>;

/**
 * Start-up's check that this process holds every key the store's secrets were sealed with, so
 * that a process given the wrong key (or a SQLite store restored without its `secret.key`) stops
 * with the reason instead of failing each webhook and two-factor sign-in later. SecretKeyError.
 */
export async function checkSecretKeys(db: Executor): Promise<void> {
  const box = storeSecrets(db);
  for (const [column, ids] of Object.entries(await sealingKeyIds(db))) {
    const unknown = ids.filter((id) => !box.hasKey(id));
    if (unknown.length > 0)
      throw new SecretKeyError(
        `${column} holds secrets sealed with key ${unknown.join(', ')}, which this process does not have: give it that key (--secret-key-file, MAILVERDICT_SECRET_KEY, or --secret-key-previous-file during a rotation; on SQLite, the data directory's secret.key it was made with). docs/security.md, "Secrets at rest"`,
      );
  }
}

/** Seals the secrets stored in plaintext by a version before sealing (every start runs it; cheap when there are none). */
export function sealLegacySecrets(db: Executor): Promise<ResealCounts> {
  return resealSecrets(db, 'plaintext');
}

/**
 * `mailverdict secrets rotate`: every secret not sealed with the current key (plaintext, or sealed
 * with the previous key) is sealed again with it; afterwards the previous key can be dropped.
 */
export function rotateSecrets(db: Executor): Promise<ResealCounts> {
  return resealSecrets(db, 'not-current-key');
}

/** `mailverdict secrets generate-key`: a new random key, as a key file or MAILVERDICT_SECRET_KEY holds it. */
export function newSecretKey(): string {
  return generateSecretKeyText();
}
