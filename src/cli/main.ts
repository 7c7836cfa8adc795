#!/usr/bin/env node
/**
 * The `mailverdict` command: runs the program of cli/program.ts.
 * Exit codes: 0 done, 1 failure while running, 2 bad usage or bad configuration.
 */
import { CommanderError } from 'commander';
import { buildProgram, commandsFor } from './program.js';

async function main(argv: string[]): Promise<void> {
  try {
    await (await buildProgram(commandsFor(argv))).parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; usage errors exit 2.
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    // Imported here, not above: `--version` loads nothing but commander.
    const { ConfigError } = await import('../config.js');
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
