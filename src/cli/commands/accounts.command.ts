import type { Command } from 'commander';

// Placeholder until its issue lands: the command is listed but not available yet.
export function registerAccountsCommand(program: Command): void {
  program
    .command('accounts')
    .description('(not available yet)')
    .action(() => {
      process.stderr.write('mailverdict accounts: not available yet\n');
      process.exitCode = 1;
    });
}
