/**
 * Issue 25, "The command line": `--help` wrapped to the terminal (80 columns when the output is
 * not one), without Markdown, `--no-…` flags said by what they do, a worker's help without the
 * server's settings, and a usage error that says the error, not the whole help.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../kit/cli.js';

async function help(...command: string[]): Promise<string> {
  const res = await runCli([...command, '--help']);
  expect(res.code, res.stderr).toBe(0);
  return res.stdout;
}

describe('mailverdict --help', () => {
  it('serve --help fits 80 columns, with no Markdown', async () => {
    const text = await help('serve');
    const long = text.split('\n').filter((line) => line.length > 80);
    expect(long).toEqual([]);
    expect(text).not.toMatch(/\]\(|`/);
    expect(text).toContain('--bootstrap-plan <slug>');
  }, 60_000);

  it('describes --no-… flags by what they do', async () => {
    const text = (await help('serve')).replace(/\s+/g, ' ');
    expect(text).toContain('--no-bootstrap create nothing on a store without an account; without the flag,');
    expect(text).toContain('(env MAILVERDICT_BOOTSTRAP=false does the same)');
    expect(text).toContain('--no-embedded-workers run no batch workers inside serve');
  }, 60_000);

  it("worker --help fits 80 columns and lists none of the server's own settings", async () => {
    const text = await help('worker');
    expect(text.split('\n').filter((line) => line.length > 80)).toEqual([]);
    for (const flag of [
      '--no-embedded-workers',
      '--no-bootstrap',
      '--session-idle-timeout',
      '--sign-in-rate-limit',
      '--usage-cache-ttl',
      '--port',
    ])
      expect(text).not.toContain(flag);
    expect(text).toContain('--chunk-concurrency');
  }, 60_000);

  it('keys create without --kind prints the error and a hint, not the whole help', async () => {
    const res = await runCli(['keys', 'create', '--account', 'acct_x']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("required option '--kind <kind>' not specified");
    expect(res.stderr).toContain('--help');
    expect(res.stderr.trim().split('\n')).toHaveLength(2);
  }, 60_000);
});
