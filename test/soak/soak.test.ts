/**
 * The soak of `npm run soak` (bench/soak.ts), bounded for `npm test`: 15 s of the same mixed load
 * against a real `serve` (single verifications with test and live keys, batch submissions,
 * polls, downloads, usage reads, key creation and revocation through the CLI). The script exits
 * non-zero on any 5xx, on a job with lost or doubled rows, or on a revoked key still accepted;
 * this test also reads its summary line. Run it at length with `npm run soak -- --duration 10m`.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { cleanEnv } from '../kit/cli.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

it('serves a 15-second mixed load with no 5xx, no lost rows and every revocation effective', async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/soak.ts', '--duration', '15s', '--concurrency', '4'],
    { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(code, out).toBe(0);
  const summary =
    /5xx: (\d+); jobs checked (\d+), jobs with lost or doubled rows: (\d+); key revocations (\d+), refused on the next request: (\d+)/.exec(
      out,
    );
  expect(summary, out).not.toBeNull();
  const [, fivexx, jobs, lost, revocations, refused] = summary!.map(Number);
  expect(fivexx).toBe(0);
  expect(lost).toBe(0);
  expect(jobs).toBeGreaterThan(0);
  expect(refused).toBe(revocations);
}, 120_000);
