/**
 * One back-off per lane for a process's batches and single verifications (the session broker's
 * `backoff`, src/engine/sessions/lane-backoff.ts), at a mail host of the kit that answers 421 at
 * the banner: a host that failed for a batch is not asked by the single verifications before its
 * back-off ends (they say why, with the batch's failure), and the single verifications' failures
 * count in the batch's streak. Without a shared broker, each kind keeps its own, as before.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import type { Verifier } from '../../src/engine/index.js';
import { createVerifier } from '../../src/engine/index.js';
import { SessionBroker } from '../../src/engine/sessions/broker.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import type { SmtpKit } from '../kit/smtp-servers.js';
import { REPLIES, startSmtpServers } from '../kit/smtp-servers.js';

let kit: SmtpKit;
let dns: FakeDnsServer;
const closing: (Verifier | BatchEngine)[] = [];

beforeAll(async () => {
  kit = await startSmtpServers({ busy: { kind: 'mta', bannerReply: REPLIES.bannerBusy } });
  dns = await startDnsServer({
    'busy.test': { mx: [{ exchange: 'mx.busy.test', priority: 10 }] },
    'mx.busy.test': { a: [kit.hosts.busy!.ip] },
  });
});

afterEach(async () => {
  await Promise.all(closing.splice(0).map((c) => c.close()));
  kit.resetRecords();
});

afterAll(async () => {
  await kit.close();
  await dns.close();
});

/**
 * A verifier (its back-off the default: 1 s, doubling) and a batch engine on the kit, asking
 * `broker` if given, with the batch's first back-off and failures in a row before it gives a host up.
 */
function engines(
  broker: SessionBroker | null,
  tuning: { batchBackoffMs: number; maxHostFailures: number },
): { verifier: Verifier; batch: BatchEngine } {
  const options = kitEngineOptions(dns.address, kit.port);
  const verifier = createVerifier(options, broker === null ? {} : { broker });
  const batch = createBatchEngine(
    {
      ...options,
      concurrency: 4,
      perHostConcurrency: 2,
      greylistRetries: 0,
      greylistDelayMs: 10,
      timeoutMs: 3_000,
      hostBackoffMs: tuning.batchBackoffMs,
      maxHostFailures: tuning.maxHostFailures,
    },
    broker === null ? {} : { broker },
  );
  closing.push(verifier, batch);
  return { verifier, batch };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("a batch's failures at a host", () => {
  it('back off the single verifications to that lane, which say why with the batch’s failure', async () => {
    const { verifier, batch } = engines(new SessionBroker({ perHostConcurrency: 2 }), {
      batchBackoffMs: 60_000,
      maxHostFailures: 1,
    });
    const [given] = await batch.verifyMany(['bulk@busy.test']);
    expect(given!.checks.smtp.message).toMatch(
      /^host given up after 1 failure\(s\) in a row; last: banner: 421/,
    );
    expect(kit.hosts.busy!.connections).toBe(1);

    const single = await verifier.verify('single@busy.test', { transcript: true });
    expect(single.status).toBe('unknown');
    expect(single.checks.smtp.message).toMatch(
      /^not asked: backed off after 1 failure\(s\) in a row \(last: banner: 421/,
    );
    expect(single.transcript!.map((line) => line.text)).toContain(
      `[skip mx.busy.test (${kit.hosts.busy!.ip}): ${single.checks.smtp.message}]`,
    );
    // The single verification did not knock again.
    expect(kit.hosts.busy!.connections).toBe(1);
  });

  it('do not hold back the single verifications of a verifier with a broker of its own', async () => {
    const { verifier, batch } = engines(null, { batchBackoffMs: 60_000, maxHostFailures: 1 });
    await batch.verifyMany(['bulk@busy.test']);
    const single = await verifier.verify('single@busy.test');
    expect(single.checks.smtp.message).toMatch(/^banner: 421/);
    expect(kit.hosts.busy!.connections).toBe(2);
  });
});

describe("single verifications' failures at a host", () => {
  /** Two single verifications fail at the host, the second after the back-off of the first (1 s). */
  async function twoSinglesFail(verifier: Verifier): Promise<void> {
    for (const address of ['single1@busy.test', 'single2@busy.test']) {
      for (;;) {
        const single = await verifier.verify(address);
        if (!/^not asked/.test(single.checks.smtp.message ?? '')) break;
        await sleep(50);
      }
    }
    expect(kit.hosts.busy!.connections).toBe(2);
  }

  it("count in the batch's streak: the batch gives the host up after its first session", async () => {
    const { verifier, batch } = engines(new SessionBroker({ perHostConcurrency: 2 }), {
      batchBackoffMs: 1,
      maxHostFailures: 3,
    });
    await twoSinglesFail(verifier);
    const [given] = await batch.verifyMany(['bulk@busy.test']);
    expect(given!.checks.smtp.message).toMatch(
      /^host given up after 3 failure\(s\) in a row; last: banner: 421/,
    );
    expect(kit.hosts.busy!.connections).toBe(3);
  });

  it('do not count for a batch engine with a back-off of its own', async () => {
    const { verifier, batch } = engines(null, { batchBackoffMs: 1, maxHostFailures: 3 });
    await twoSinglesFail(verifier);
    const [given] = await batch.verifyMany(['bulk@busy.test']);
    expect(given!.checks.smtp.message).toMatch(
      /^host given up after 3 failure\(s\) in a row; last: banner: 421/,
    );
    expect(kit.hosts.busy!.connections).toBe(2 + 3);
  });
});
