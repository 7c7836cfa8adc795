import type { Command } from 'commander';

// Placeholder until its issue lands: the command is listed but not available yet.
export function registerVerifyCommand(program: Command): void {
  program
    .command('verify')
    .description('(not available yet)')
    .action(() => {
      process.stderr.write('mailverdict verify: not available yet\n');
      process.exitCode = 1;
    });
}
