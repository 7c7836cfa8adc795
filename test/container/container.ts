/**
 * `npm run test:container`: builds the repository's Dockerfile with podman and runs the image the
 * way a user would (issue 29, docs/deploy.md), every connection on loopback (host networking):
 *
 * 1. the SQLite default: start on an empty volume, read the bootstrap keys from the volume,
 *    verify with the test key, submit a batch and download its results, stop with SIGTERM, start
 *    a new container on the same volume and find everything there;
 * 2. the scaled-out set: `migrate`, then an API container (`serve --no-embedded-workers`) and a
 *    worker container on this machine's PostgreSQL (a database of its own) and Redis (a key
 *    prefix of its own): a batch submitted to the API is done by the worker container.
 *
 * Each container's processes must run as the image's non-root user. The image is left tagged
 * `mailverdict:ci`. Prints each step with its duration; exits non-zero on the first failure.
 *
 * Where no registry can be reached (this CI machine), the base image is a local stand-in built
 * from Debian and the npm registry's Node (scripts/container/stand-in-base.sh); set
 * MAILVERDICT_NODE_IMAGE to use another (e.g. node:24-bookworm-slim where it can be pulled).
 * Podman runs through scripts/container/runc-without-rlimits, since this machine's sandbox refuses
 * the rlimits podman asks runc to set. Behind a TLS-intercepting proxy, the CA named by
 * NODE_EXTRA_CA_CERTS is given to the build as the `npm_ca` secret, as the Dockerfile documents.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  IMAGE,
  IMAGE_UID,
  LABEL,
  ROOT,
  RUNTIME,
  RUN_ID,
  assertNonRoot,
  execFileP,
  cleanups,
  freeLoopbackPort,
  http,
  logged,
  logs,
  note,
  podman,
  runContainer,
  seconds,
  step,
  stopGracefully,
  tally,
  waitFor,
  waitReady,
} from './podman-kit.js';

const DATABASE_URL = process.env.MAILVERDICT_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.MAILVERDICT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const started = performance.now();
/**
 * This machine's resolver answers NXDOMAIN for every name (no Internet), which is issue 25's
 * untrusted resolver: /readyz would rightly answer 503 and the health check fail. The test's
 * verifications use test keys (no DNS), so the resolver check is turned off here, as an operator
 * would on a network without public DNS (docs/prober.md).
 */
const NO_RESOLVER_CHECK = { MAILVERDICT_DNS_TRUST_INTERVAL: 'off' };

async function waitJobDone(base: string, key: string, jobId: string): Promise<Record<string, unknown>> {
  return waitFor(`job ${jobId} completed`, async () => {
    const job = (await http('GET', `${base}/v1/jobs/${jobId}`, key)).json();
    if (job.status === 'failed') throw new Error(`job failed: ${JSON.stringify(job)}`);
    return job.status === 'completed' ? job : undefined;
  });
}

/** Addresses with the test key's fixed results (docs/api.md, "Test keys"): `n` of them, in turn. */
const FIXTURES = [
  ['valid', 'deliverable'],
  ['invalid', 'undeliverable'],
  ['disposable', 'risky'],
] as const;

function batchOf(n: number): { emails: string[]; expected: string[] } {
  const rows = Array.from({ length: n }, (_, i) => {
    const [domain, status] = FIXTURES[i % FIXTURES.length]!;
    return { email: `user${i}@${domain}.example.com`, status };
  });
  return { emails: rows.map((r) => r.email), expected: rows.map((r) => `${r.email},${r.status}`) };
}

function assertResults(csv: string, batch: { expected: string[] }): void {
  const lines = csv.trim().split(/\r?\n/);
  assert.equal(lines[0], 'email,status,score,reason');
  assert.deepEqual(
    lines.slice(1).map((l) => l.split(',').slice(0, 2).join(',')),
    batch.expected,
  );
}

// ---- the image -----------------------------------------------------------------------------------

/** The CA file this host's Node and npm trust beyond their own (a TLS-intercepting proxy's), if any. */
async function trustedCa(): Promise<string | null> {
  const npmCafile = await execFileP('npm', ['config', 'get', 'cafile']).then(
    ({ stdout }) => stdout.trim(),
    () => '',
  );
  for (const file of [process.env.NODE_EXTRA_CA_CERTS, npmCafile, process.env.SSL_CERT_FILE])
    if (file && file !== 'null' && file !== 'undefined' && existsSync(file)) return file;
  return null;
}

async function buildImage(): Promise<void> {
  const baseImage = await step('base image', async () => {
    const given = process.env.MAILVERDICT_NODE_IMAGE;
    if (given) {
      note(`MAILVERDICT_NODE_IMAGE=${given}`);
      return given;
    }
    // Cached in podman's store and /var/cache/mailverdict-ci: about 4 minutes the first time.
    const { stdout } = await execFileP(join(ROOT, 'scripts/container/stand-in-base.sh'), ['24'], {
      maxBuffer: 1 << 20,
    });
    const image = stdout.trim().split('\n').at(-1)!;
    note(`stand-in for node:24-bookworm-slim: ${image}`);
    return image;
  });

  await step(`podman build -t ${IMAGE} (the repository's Dockerfile)`, async () => {
    const ca = await trustedCa();
    const secret = ca ? ['--secret', `id=npm_ca,src=${ca}`] : [];
    note(ca ? `npm's CA (${ca}) as the npm_ca build secret` : 'no extra CA for npm');
    const log = join(tmpdir(), `mailverdict-container-build-${RUN_ID}.log`);
    const t0 = performance.now();
    // Niced: it runs beside CI's other phases, which should not wait for it.
    await logged(
      'nice',
      [
        '-n',
        '10',
        'podman',
        '--runtime',
        RUNTIME,
        'build',
        // HEALTHCHECK is part of Docker's image format; the OCI format drops it.
        '--format',
        'docker',
        '--network',
        'host',
        '--build-arg',
        `NODE_IMAGE=${baseImage}`,
        ...secret,
        '--tag',
        IMAGE,
        ROOT,
      ],
      log,
    );
    const size = Number((await podman(['image', 'inspect', IMAGE, '--format', '{{.Size}}'])).stdout);
    const baseSize = Number((await podman(['image', 'inspect', baseImage, '--format', '{{.Size}}'])).stdout);
    note(`build log: ${log}`);
    note(
      `image: ${(size / 1e6).toFixed(0)} MB (base ${(baseSize / 1e6).toFixed(0)} MB + ${((size - baseSize) / 1e6).toFixed(0)} MB); built in ${seconds(performance.now() - t0)}`,
    );
  });

  await step('the image: non-root user, volume, port, stop signal, health check, tini', async () => {
    const { stdout } = await podman(['image', 'inspect', IMAGE, '--format', 'json']);
    const [image] = JSON.parse(stdout) as [
      { Config: Record<string, unknown>; Healthcheck?: { Test: string[] } },
    ];
    const config = image.Config;
    assert.equal(config.User, `${IMAGE_UID}:${IMAGE_UID}`);
    assert.deepEqual(Object.keys(config.Volumes as object), ['/data']);
    assert.deepEqual(Object.keys(config.ExposedPorts as object), ['8080/tcp']);
    assert.equal(config.StopSignal, 'SIGTERM');
    assert.deepEqual(image.Healthcheck?.Test, ['CMD', 'node', '/app/dist/cli/healthcheck.js']);
    assert.deepEqual(config.Entrypoint, ['/usr/bin/tini', '--', 'node', '/app/dist/cli/main.js']);
    assert.deepEqual(config.Cmd, ['serve']);
  });
}

// ---- 1. the SQLite default ---------------------------------------------------------------------------

async function sqliteDefault(): Promise<void> {
  const batch = batchOf(6);
  const volume = `mailverdict-ci-${RUN_ID}`;
  const port = await freeLoopbackPort();
  const base = `http://127.0.0.1:${port}`;
  // As `docker run -p 8080:8080 -v mailverdict:/data mailverdict`, on loopback with host networking.
  const env = {
    MAILVERDICT_HOST: '127.0.0.1',
    MAILVERDICT_PORT: String(port),
    MAILVERDICT_PUBLIC_BASE_URL: base,
    ...NO_RESOLVER_CHECK,
  };
  await podman(['volume', 'create', '--label', LABEL, volume]);
  cleanups.push(async () => void (await podman(['volume', 'rm', '--force', volume], { allowFailure: true })));
  const dataDir = (await podman(['volume', 'inspect', volume, '--format', '{{.Mountpoint}}'])).stdout.trim();
  const first = `mailverdict-ci-${RUN_ID}-sqlite-1`;

  await step(`sqlite: first start on an empty volume (127.0.0.1:${port})`, async () => {
    await runContainer(first, env, [`${volume}:/data`], []);
    await waitReady(base, first);
  });

  const keys = await step(
    'sqlite: the bootstrap keys are in the volume, named in the log, never printed',
    async () => {
      const file = join(dataDir, 'bootstrap-keys.json');
      const stat = statSync(file);
      assert.equal(stat.mode & 0o777, 0o600, 'bootstrap-keys.json mode');
      assert.equal(stat.uid, IMAGE_UID, 'bootstrap-keys.json owner');
      const body = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
      const log = await logs(first);
      assert.match(log, /\/data\/bootstrap-keys\.json/, 'the log names the file');
      for (const field of ['live_key', 'test_key', 'owner_invitation_link'])
        assert.ok(body[field] && !log.includes(body[field]), `${field} is in the file and not in the log`);
      assert.ok(body.owner_invitation_link!.startsWith(`${base}/`), 'the link is on the public base URL');
      assert.ok(existsSync(join(dataDir, 'secret.key')) && existsSync(join(dataDir, 'mailverdict.db')));
      return { test: body.test_key!, live: body.live_key! };
    },
  );

  await step('sqlite: the health check and the non-root processes', async () => {
    await podman(['healthcheck', 'run', first]);
    await assertNonRoot(first);
  });

  const jobId = await step(
    'sqlite: verify with the test key, submit a batch, download its results',
    async () => {
      const one = await http('POST', `${base}/v1/verify`, keys.test, { email: 'anna@valid.example.com' });
      assert.equal(one.status, 200, one.body);
      assert.equal(one.json().status, 'deliverable');
      const submitted = await http('POST', `${base}/v1/verify/batch`, keys.test, { emails: batch.emails });
      assert.equal(submitted.status, 202, submitted.body);
      const id = submitted.json().job_id as string;
      await waitJobDone(base, keys.test, id);
      const results = await http('GET', `${base}/v1/jobs/${id}/results`, keys.test);
      assert.equal(results.status, 200, results.body);
      assertResults(results.body, batch);
      return id;
    },
  );
  const resultsBefore = (await http('GET', `${base}/v1/jobs/${jobId}/results`, keys.test)).body;
  const hash = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
  const keyHash = hash(join(dataDir, 'secret.key'));
  const bootstrapHash = hash(join(dataDir, 'bootstrap-keys.json'));

  await step('sqlite: SIGTERM stops it cleanly (exit 0)', async () => {
    await stopGracefully(first);
    assert.match(await logs(first), /shutting down/);
  });

  const second = `mailverdict-ci-${RUN_ID}-sqlite-2`;
  await step('sqlite: a new container on the same volume has lost nothing', async () => {
    await podman(['rm', first]);
    await runContainer(second, env, [`${volume}:/data`], []);
    await waitReady(base, second);
    assert.doesNotMatch(await logs(second), /Created account|bootstrap/i, 'no second bootstrap');
    assert.equal(hash(join(dataDir, 'secret.key')), keyHash, 'secret.key unchanged');
    assert.equal(hash(join(dataDir, 'bootstrap-keys.json')), bootstrapHash, 'bootstrap file unchanged');
    const job = (await http('GET', `${base}/v1/jobs/${jobId}`, keys.test)).json();
    assert.equal(job.status, 'completed');
    assert.equal((await http('GET', `${base}/v1/jobs/${jobId}/results`, keys.test)).body, resultsBefore);
    const usage = await http('GET', `${base}/v1/account/usage`, keys.live);
    assert.equal(usage.status, 200, `the live key still works: ${usage.body}`);
    await stopGracefully(second);
  });
}

// ---- 2. the scaled-out set -----------------------------------------------------------------------------

/** Chunks of the scaled-out batch: the smallest the setting allows, so that there are several. */
const CHUNK_SIZE = 10;

async function scaledOut(): Promise<void> {
  const scaledBatch = batchOf(25);
  const database = `mailverdict_ci_${RUN_ID}`;
  const admin = new URL(DATABASE_URL);
  admin.pathname = '/postgres';
  const storeUrl = new URL(DATABASE_URL);
  storeUrl.pathname = `/${database}`;
  const prefix = `mailverdict-ci-${RUN_ID}:`;
  const work = mkdtempSync(join(tmpdir(), 'mailverdict-ci-'));
  cleanups.push(async () => rmSync(work, { recursive: true, force: true }));

  await step(`scaled out: a fresh database ${database} and the Redis key prefix ${prefix}`, async () => {
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${database}`);
    } finally {
      await client.end();
    }
    cleanups.push(async () => {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    });
    cleanups.push(async () => {
      const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      try {
        const stale = await redis.keys(`${prefix}*`);
        if (stale.length > 0) await redis.del(...stale);
      } finally {
        redis.disconnect();
      }
    });
  });

  // The compose secret: a file only the image's user reads, mounted where compose mounts it.
  const secretFile = join(work, 'secret.key');
  const common = {
    MAILVERDICT_DATABASE_URL: storeUrl.toString(),
    MAILVERDICT_REDIS_URL: REDIS_URL,
    MAILVERDICT_REDIS_KEY_PREFIX: prefix,
    MAILVERDICT_SECRET_KEY_FILE: '/run/secrets/mailverdict_secret_key',
    // Several chunks, so that the worker's count says it did them all.
    MAILVERDICT_CHUNK_SIZE: String(CHUNK_SIZE),
    ...NO_RESOLVER_CHECK,
  };
  const secretMount = `${secretFile}:/run/secrets/mailverdict_secret_key:ro`;
  const once = async (args: string[]) =>
    (
      await podman([
        'run',
        '--rm',
        '--network',
        'host',
        '--label',
        LABEL,
        ...Object.entries(common).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
        '--volume',
        secretMount,
        IMAGE,
        ...args,
      ])
    ).stdout;

  const account = await step(
    'scaled out: secret key, migrate (one-shot), an account and a test key',
    async () => {
      const { stdout: key } = await podman([
        'run',
        '--rm',
        '--network',
        'host',
        IMAGE,
        'secrets',
        'generate-key',
      ]);
      writeFileSync(secretFile, key, { mode: 0o400 });
      chownSync(secretFile, IMAGE_UID, IMAGE_UID);
      chmodSync(secretFile, 0o400);
      const migrated = await once(['migrate']);
      assert.match(migrated, /postgres store migrated/);
      note(migrated.trim().slice(0, 200));
      const created = JSON.parse(
        await once(['accounts', 'create', '--email', 'owner@example.com', '--json']),
      ) as {
        id: string;
      };
      const made = JSON.parse(
        await once(['keys', 'create', '--account', created.id, '--kind', 'test', '--json']),
      ) as {
        key: string;
      };
      return { id: created.id, testKey: made.key };
    },
  );

  const port = await freeLoopbackPort();
  const base = `http://127.0.0.1:${port}`;
  const api = `mailverdict-ci-${RUN_ID}-api`;
  const worker = `mailverdict-ci-${RUN_ID}-worker`;
  const containerEnv = {
    ...common,
    MAILVERDICT_HOST: '127.0.0.1',
    MAILVERDICT_PORT: String(port),
    MAILVERDICT_PUBLIC_BASE_URL: base,
  };

  const jobId = await step(
    'scaled out: the API container (serve --no-embedded-workers, read-only root) queues a batch',
    async () => {
      await runContainer(api, containerEnv, [secretMount], ['serve', '--no-embedded-workers'], {
        readOnly: true,
      });
      await waitReady(base, api);
      const ready = (await http('GET', `${base}/readyz`)).json();
      note(`/readyz: ${JSON.stringify(ready)}`);
      const submitted = await http('POST', `${base}/v1/verify/batch`, account.testKey, {
        emails: scaledBatch.emails,
      });
      assert.equal(submitted.status, 202, submitted.body);
      const id = submitted.json().job_id as string;
      // No worker runs anywhere yet: the job can only wait.
      assert.equal((await http('GET', `${base}/v1/jobs/${id}`, account.testKey)).json().status, 'queued');
      return id;
    },
  );

  const workerId = await step('scaled out: the worker container (read-only root) does the job', async () => {
    await runContainer(worker, common, [secretMount], ['worker'], { readOnly: true });
    const id = await waitFor(
      'worker started',
      async () => /mailverdict worker (\S+) running/.exec(await logs(worker))?.[1],
    );
    note(`worker ${id}`);
    await waitJobDone(base, account.testKey, jobId);
    const results = await http('GET', `${base}/v1/jobs/${jobId}/results`, account.testKey);
    assert.equal(results.status, 200, results.body);
    assertResults(results.body, scaledBatch);
    return id;
  });

  await step('scaled out: non-root processes, health check, SIGTERM stops both cleanly', async () => {
    await assertNonRoot(api);
    await assertNonRoot(worker);
    await podman(['healthcheck', 'run', api]);
    await stopGracefully(worker);
    await stopGracefully(api);
    // The store's record of worker processes: only the worker container's, which did every chunk.
    const client = new pg.Client({ connectionString: storeUrl.toString() });
    await client.connect();
    try {
      const { rows } = await client.query<{
        id: string;
        kind: string;
        chunks_done: number;
        stopped: boolean;
      }>('SELECT id, kind, chunks_done, stopped_at IS NOT NULL AS stopped FROM workers');
      const chunks = Math.ceil(scaledBatch.emails.length / CHUNK_SIZE);
      assert.deepEqual(rows, [{ id: workerId, kind: 'worker', chunks_done: chunks, stopped: true }]);
      note(`workers in the store: ${JSON.stringify(rows)}`);
    } finally {
      await client.end();
    }
  });
}

async function main(): Promise<void> {
  let failure: unknown = null;
  try {
    await buildImage();
    await sqliteDefault();
    await scaledOut();
  } catch (err) {
    failure = err;
  } finally {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((err: unknown) => note(`clean-up: ${inspect(err)}`));
  }
  const total = seconds(performance.now() - started);
  if (failure !== null) {
    process.stdout.write(
      `FAILED: ${failure instanceof Error ? (failure.stack ?? failure.message) : inspect(failure)}\n`,
    );
    process.stdout.write(`container: ${tally.passed} passed, 1 failed (${total})\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(
    `image ${IMAGE} left in podman's image store\ncontainer: ${tally.passed} passed, 0 failed (${total})\n`,
  );
}

await main();
