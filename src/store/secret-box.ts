/**
 * Secrets at rest (issue 16; docs/security.md, "Secrets at rest"): the store seals the secrets it
 * must read back (the webhook signing secret, the TOTP secret) with AES-256-GCM before they reach
 * a column, and opens them as it reads them, so services only ever see plaintext.
 *
 * A sealed value reads `enc:v1:<key id>:<nonce>:<ciphertext and tag>` (base64url parts): the key
 * id says which key sealed it (rotation reads old values with the previous key), the nonce is 96
 * random bits, and the column's name (`accounts.webhook_secret`) is the additional authenticated
 * data, so a sealed value copied into another column does not open. A value without the `enc:`
 * prefix is a plaintext from before this version: it opens as itself until it is sealed again
 * (at start-up, store/sealed-secrets.store.ts). A value that looks sealed never falls back to
 * plaintext: it opens with its key or throws SecretKeyError.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { ConfigError } from '../config.js';

export const SECRET_KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'enc:';
const VERSION = 'v1';

/**
 * A key of the box can't be had, or a sealed value does not open: never a plaintext fallback. A
 * configuration error: the command stops with its message (exit 2), a request gets a 500.
 */
export class SecretKeyError extends ConfigError {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

/**
 * The labels of the sealed columns (`table.column` when they were introduced); each is its
 * values' additional authenticated data, so it stays the same if the table is renamed.
 */
export type SealedColumn =
  'accounts.webhook_secret' | 'member_two_factor.secret' | 'outcome_sources.verify_key';

export interface SecretKey {
  /** The key's id in sealed values: 8 base64url characters of its SHA-256, not the key. */
  id: string;
  key: Buffer;
}

/** A 32-byte key from its base64 (or base64url) text; throws SecretKeyError naming `source` otherwise. */
export function parseSecretKey(text: string, source: string): SecretKey {
  const trimmed = text.trim();
  const key = Buffer.from(trimmed, 'base64');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed) || key.length !== SECRET_KEY_BYTES)
    throw new SecretKeyError(
      `${source} must hold a ${SECRET_KEY_BYTES}-byte key in base64 (mailverdict secrets generate-key prints one)`,
    );
  return { id: keyId(key), key };
}

/** A new random key as the text a key file or MAILVERDICT_SECRET_KEY holds. */
export function generateSecretKeyText(): string {
  return randomBytes(SECRET_KEY_BYTES).toString('base64');
}

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 8);
}

/** Whether a stored value is sealed (rather than a plaintext written before sealing). */
export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** The id of the key that sealed `stored`, or null for a plaintext. */
export function sealedKeyId(stored: string): string | null {
  return isSealed(stored) ? (stored.split(':')[2] ?? '') : null;
}

export interface SecretBox {
  /** The id of the key new values are sealed with. Throws SecretKeyError when there is none. */
  currentKeyId(): string;
  /** Whether the box has the key of this id (current or previous). */
  hasKey(id: string): boolean;
  seal(column: SealedColumn, plaintext: string): string;
  /** The plaintext of a sealed value (or the legacy plaintext itself). Throws SecretKeyError. */
  open(column: SealedColumn, stored: string): string;
  /**
   * A 32-byte key for `purpose` (an HMAC key), derived from the current key with HKDF-SHA256, so
   * that every process sharing the store's key derives the same one. Without a current key, a
   * random key made once per box: good for one process only (PostgreSQL refuses to start without
   * a key; SQLite always has its data directory's).
   */
  deriveKey(purpose: DerivedKeyPurpose): Buffer;
}

/** What a key derived from the store's key is for (its HKDF info). */
export type DerivedKeyPurpose = 'sign-in-challenge' | 'sign-in-challenge-key' | 'sign-in-device';

/**
 * A box sealing with `current` and opening with it or any of `previous` (a rotation's old keys).
 * `current` null: no key is configured (`missing` says which setting to set); sealing, and
 * opening a sealed value, throw SecretKeyError with that message.
 */
export function createSecretBox(
  current: SecretKey | null,
  previous: readonly SecretKey[] = [],
  missing = 'no secret key is configured',
): SecretBox {
  const keys = new Map<string, Buffer>();
  for (const k of [...previous, ...(current === null ? [] : [current])]) keys.set(k.id, k.key);
  const need = (): SecretKey => {
    if (current === null) throw new SecretKeyError(missing);
    return current;
  };
  const root = current?.key ?? randomBytes(SECRET_KEY_BYTES);
  return {
    deriveKey: (purpose) =>
      Buffer.from(hkdfSync('sha256', root, Buffer.alloc(0), `mailverdict ${purpose}`, SECRET_KEY_BYTES)),
    currentKeyId: () => need().id,
    hasKey: (id) => keys.has(id),
    seal(column, plaintext) {
      const { id, key } = need();
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(column, 'utf8'));
      const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${PREFIX}${VERSION}:${id}:${nonce.toString('base64url')}:${sealed.toString('base64url')}`;
    },
    open(column, stored) {
      if (!isSealed(stored)) return stored;
      const parts = stored.split(':');
      if (parts.length !== 5 || parts[1] !== VERSION)
        throw new SecretKeyError(`${column}: a sealed value of an unknown format (${parts[1] ?? ''})`);
      const [, , id, nonceText, sealedText] = parts as [string, string, string, string, string];
      if (current === null && keys.size === 0) throw new SecretKeyError(missing);
      const key = keys.get(id);
      if (key === undefined)
        throw new SecretKeyError(
          `${column}: sealed with key ${id}, which is neither the current secret key${current === null ? '' : ` (${current.id})`} nor a previous one: configure the key it was sealed with (--secret-key-file, or --secret-key-previous-file during a rotation)`,
        );
      const nonce = Buffer.from(nonceText, 'base64url');
      const sealed = Buffer.from(sealedText, 'base64url');
      if (nonce.length !== NONCE_BYTES || sealed.length < TAG_BYTES)
        throw new SecretKeyError(`${column}: a damaged sealed value (key ${id})`);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, nonce);
        decipher.setAAD(Buffer.from(column, 'utf8'));
        decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
        return Buffer.concat([
          decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        throw new SecretKeyError(
          `${column}: a sealed value does not open with key ${id} (altered, or moved from another column)`,
        );
      }
    },
  };
}
