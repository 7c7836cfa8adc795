/**
 * The secrets the store seals (store/secret-box.ts; docs/security.md, "Secrets at rest"): sealing
 * the plaintext an older version left at start-up, and a key rotation's re-sealing.
 */
import { resealSecrets } from '../store/sealed-secrets.store.js';
import type { Executor } from '../store/executor.js';
import { generateSecretKeyText, type SealedColumn } from '../store/secret-box.js';

export type ResealCounts = Record<SealedColumn, number>;

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
