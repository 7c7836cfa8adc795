/**
 * `mailverdict secrets generate-key|rotate`: the key that seals the webhook and TOTP secrets in the
 * store (docs/security.md, "Secrets at rest"). `generate-key` prints a new key for
 * `--secret-key-file` / MAILVERDICT_SECRET_KEY; `rotate` seals every stored secret again with the
 * current key, after which the previous key can be removed.
 */
import type { Command } from 'commander';
import { newSecretKey, rotateSecrets } from '../../services/operators/secrets.service.js';
import { addCommonOptions, print, withStore, type StoreFlags } from '../cli-support.js';

const ROTATE_HELP = `
Run it with the new key as --secret-key-file (or MAILVERDICT_SECRET_KEY) and the old one as
--secret-key-previous-file, once every process has both keys (docs/security.md). A secret that
opens with neither key stops the command with exit 2 and leaves the rest as they were.`;

export function registerSecretsCommand(program: Command): void {
  const secrets = program.command('secrets').description('The key that seals secrets in the store.');
  secrets
    .command('generate-key')
    .description('Print a new random 32-byte key (base64) for --secret-key-file or MAILVERDICT_SECRET_KEY.')
    .action(() => {
      process.stdout.write(`${newSecretKey()}\n`);
    });
  addCommonOptions(
    secrets
      .command('rotate')
      .description(
        'Seal every stored secret again with the current key (plaintext ones and the previous key’s).',
      )
      .addHelpText('after', ROTATE_HELP),
  ).action(async (flags: StoreFlags) => {
    const counts = await withStore(flags, (db) => rotateSecrets(db));
    print(flags.json, { resealed: counts }, () =>
      Object.entries(counts)
        .map(([column, n]) => `${column}: ${n} sealed again`)
        .join('\n'),
    );
  });
}
