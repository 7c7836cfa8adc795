import type { Command } from 'commander';

// Placeholder until its issue lands: the command is listed but not available yet.
export function registerKeysCommand(program: Command): void {
  program
    .command('keys')
    .description('(not available yet)')
    .action(() => {
      process.stderr.write('mailverdict keys: not available yet\n');
      process.exitCode = 1;
    });
}
