#!/usr/bin/env node
/**
 * The `mailverdict` command. Each sub-command lives in cli/commands/ and registers itself here.
 * Exit codes: 0 done, 1 failure while running, 2 bad usage or bad configuration.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { registerVerifyCommand } from './commands/verify.command.js';
import { registerServeCommand } from './commands/serve.command.js';
import { registerAccountsCommand } from './commands/accounts.command.js';
import { registerKeysCommand } from './commands/keys.command.js';
import { registerMembersCommand } from './commands/members.command.js';
import { registerBatchCommand } from './commands/batch.command.js';
import { registerWorkerCommand } from './commands/worker.command.js';
import { registerMigrateCommand } from './commands/migrate.command.js';
import { registerStoreCommand } from './commands/store.command.js';

export function buildProgram(): Command {
  const program = new Command('mailverdict')
    .description('Self-hostable e-mail verification: engine, HTTP API and batch jobs.')
    .version('0.1.0')
    .exitOverride()
    .showHelpAfterError();
  registerVerifyCommand(program);
  registerServeCommand(program);
  registerAccountsCommand(program);
  registerKeysCommand(program);
  registerMembersCommand(program);
  registerBatchCommand(program);
  registerWorkerCommand(program);
  registerMigrateCommand(program);
  registerStoreCommand(program);
  return program;
}

async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; usage errors exit 2.
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`mailverdict: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`mailverdict: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}

await main(process.argv);
