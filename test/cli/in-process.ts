/** Runs CLI commands in this process (fast), capturing what they print. */
import { Command } from 'commander';
import { registerAccountsCommand } from '../../src/cli/commands/accounts.command.js';
import { registerAuditCommand } from '../../src/cli/commands/audit.command.js';
import { registerKeysCommand } from '../../src/cli/commands/keys.command.js';
import { registerMembersCommand } from '../../src/cli/commands/members.command.js';
import { registerOperatorsCommand } from '../../src/cli/commands/operators.command.js';

export async function runInProcess(args: string[]): Promise<string> {
  const program = new Command('mailverdict').exitOverride();
  registerAccountsCommand(program);
  registerKeysCommand(program);
  registerMembersCommand(program);
  registerOperatorsCommand(program);
  registerAuditCommand(program);
  let out = '';
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (chunk: string | Uint8Array) => {
    out += chunk.toString();
    return true;
  };
  try {
    await program.parseAsync(args, { from: 'user' });
  } finally {
    process.stdout.write = write;
  }
  return out;
}
