/**
 * The settings of SETTINGS reach `serve` through its flags: those the docs name for it
 * (docs/api.md, docs/security.md) are accepted and change what the server does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli, spawnCli } from '../kit/cli.js';

describe('mailverdict serve settings', () => {
  const dirs: string[] = [];
  const dataDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverdict-serve-settings-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('takes --trust-proxy and --auth-failure-rate-limit: failed keys are counted per forwarded client address, past the given limit', async () => {
    const env = cleanEnv({ MAILVERDICT_LOG_LEVEL: 'warn', MAILVERDICT_EMBEDDED_WORKERS: 'false' });
    const child = spawnCli(
      [
        'serve',
        '--port',
        '0',
        '--data-dir',
        dataDir(),
        '--no-bootstrap',
        '--json',
        '--trust-proxy',
        '1',
        '--auth-failure-rate-limit',
        '1',
      ],
      env,
    );
    try {
      const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
      const { url } = JSON.parse(line) as { url: string };
      const badKey = (client: string) =>
        fetch(`${url}/v1/account/usage`, {
          headers: { authorization: 'Bearer svc_live_not_a_key', 'x-forwarded-for': client },
        }).then((res) => res.status);

      // Five at once from one client: past a limit of 1 per second (the default would be 10).
      const sameClient = await Promise.all(Array.from({ length: 5 }, () => badKey('203.0.113.7')));
      expect(sameClient).toContain(429);
      // Five at once from five clients, as the trusted proxy says: each its first failure.
      const fiveClients = await Promise.all(
        Array.from({ length: 5 }, (_, i) => badKey(`198.51.100.${i + 1}`)),
      );
      expect(fiveClients).toEqual([401, 401, 401, 401, 401]);
    } finally {
      child.kill('SIGTERM');
    }
    expect((await once(child, 'exit'))[0]).toBe(0);
  }, 60_000);

  it('refuses --trust-proxy true with exit code 2 and a message saying what to set instead', async () => {
    for (const args of [['--trust-proxy', 'true'], ['--trust-proxy']]) {
      const res = await runCli(['serve', '--port', '0', '--data-dir', dataDir(), ...args], cleanEnv());
      expect(res.code).toBe(2);
      expect(res.stderr).toContain('the left-most X-Forwarded-For entry, which the client writes');
      expect(res.stderr).toContain('--trust-proxy 1 behind one nginx or Caddy');
    }
  }, 60_000);

  it.each([
    ['--trust-proxy', 'proxy.example.net'],
    ['--auth-failure-rate-limit', 'many'],
  ])(
    'stops with exit code 2 naming %s when its value is bad',
    async (flag, value) => {
      const res = await runCli(['serve', '--port', '0', '--data-dir', dataDir(), flag, value], cleanEnv());
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(flag);
    },
    60_000,
  );
});
