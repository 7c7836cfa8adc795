/**
 * Where the store's secret key comes from (docs/security.md, "Secrets at rest"): the configured
 * key or key file; without one, on SQLite, `<dataDir>/secret.key`, made at first start (one
 * machine: nothing to configure); without one on PostgreSQL, none, because processes on several
 * hosts must share one key and a key made by one of them would seal what the others cannot open.
 */
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config, SecretKeySettings } from '../config.js';
import {
  createSecretBox,
  generateSecretKeyText,
  parseSecretKey,
  SecretKeyError,
  type SecretBox,
  type SecretKey,
} from './secret-box.js';

export const SECRET_KEY_FILE = 'secret.key';

/** What start-up and a sealing without a key say on PostgreSQL. */
export const MISSING_KEY_MESSAGE =
  'the store is on PostgreSQL (--database-url) and no secret key is set: every process needs the same key to seal and open the webhook and TOTP secrets. Set --secret-key-file (MAILVERDICT_SECRET_KEY_FILE) or MAILVERDICT_SECRET_KEY to a key made by `mailverdict secrets generate-key` (docs/security.md, "Secrets at rest")';

export type SecretKeyStoreSettings = Pick<Config, 'dataDir'> &
  Partial<Pick<Config, 'databaseUrl' | 'secrets'>>;

/** Whether a key is configured (rather than defaulted to the data directory's key file). */
export function secretKeyConfigured(secrets: SecretKeySettings | undefined): boolean {
  return secrets !== undefined && (secrets.key !== null || secrets.keyFile !== null);
}

/** The store's secret box from the settings; makes `<dataDir>/secret.key` on SQLite if needed. */
export function loadSecretBox(settings: SecretKeyStoreSettings): SecretBox {
  const secrets = settings.secrets;
  const previous = previousKey(secrets);
  let current: SecretKey | null;
  if (secrets?.key != null) current = parseSecretKey(secrets.key, 'MAILVERDICT_SECRET_KEY');
  else if (secrets?.keyFile != null) current = readKeyFile(secrets.keyFile, '--secret-key-file');
  else if (settings.databaseUrl) current = null;
  else current = dataDirKey(settings.dataDir);
  return createSecretBox(current, previous === null ? [] : [previous], MISSING_KEY_MESSAGE);
}

function previousKey(secrets: SecretKeySettings | undefined): SecretKey | null {
  if (secrets?.previousKey != null)
    return parseSecretKey(secrets.previousKey, 'MAILVERDICT_SECRET_KEY_PREVIOUS');
  if (secrets?.previousKeyFile != null)
    return readKeyFile(secrets.previousKeyFile, '--secret-key-previous-file');
  return null;
}

function readKeyFile(path: string, setting: string): SecretKey {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new SecretKeyError(`${setting}: cannot read ${path} (${(err as NodeJS.ErrnoException).code})`);
  }
  return parseSecretKey(text, `${setting} ${path}`);
}

/**
 * The data directory's key, made on first use with mode 0600. Written to a temporary file and
 * linked into place, so that two processes starting at once (serve and worker) end with the one
 * key that won the link, and neither reads a half-written file.
 */
function dataDirKey(dataDir: string): SecretKey {
  const path = join(dataDir, SECRET_KEY_FILE);
  try {
    return parseSecretKey(readFileSync(path, 'utf8'), path);
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'ENOENT')) throw err;
  }
  const temporary = join(dataDir, `.${SECRET_KEY_FILE}.${randomBytes(6).toString('hex')}`);
  writeFileSync(temporary, `${generateSecretKeyText()}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, path);
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST')) throw err;
  } finally {
    unlinkSync(temporary);
  }
  return parseSecretKey(readFileSync(path, 'utf8'), path);
}
