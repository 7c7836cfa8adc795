/**
 * Sends the job events queued in the outbox (services/batches/delivery.service.ts): signed webhook calls and
 * completion e-mails. Each attempt is recorded; a failed attempt is retried on the schedule
 * below; everything lives in the store, so a restart resumes where it stopped.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { SECOND, MINUTE, HOUR } from '../clock.js';
import type { Config } from '../config.js';
import type { JobView } from '../services/batches/job-view.js';
import { signWebhook } from '../services/webhooks/sign.js';
import {
  checkWebhookTarget,
  parseWebhookUrl,
  WebhookTargetError,
  type HostResolver,
} from '../services/webhooks/ssrf.js';
import {
  createDeliveryService,
  type Delivery,
  type DeliveryService,
} from '../services/batches/delivery.service.js';
import type { AppContext } from '../context.js';
import type { JobMetrics } from './job-metrics.js';
import { maskAddress, type Notifier } from './notify.js';
import { postWebhook } from './webhook-post.js';

/**
 * Wait before each retry, after the first attempt fails: 8 attempts over about 42 hours
 * (the Standard Webhooks reference schedule, with the last step at 24 h).
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  24 * HOUR,
];

/** Deliveries attempted at the same time by one runner. */
const DELIVERIES_AT_ONCE = 16;

export interface DeliveryDeps {
  db: AppContext['db'];
  clock: Clock;
  config: Readonly<Config>;
  logger: Logger;
  resolveHost: HostResolver;
  /** Null: no relay configured; e-mails are marked skipped. */
  notifier: Notifier | null;
  /** Told about each attempt's outcome (GET /metrics); optional. */
  metrics?: Pick<JobMetrics, 'deliveryAttempted'>;
}

interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  /** Give up at once (the target is forbidden); no retry can succeed. */
  permanent?: boolean;
  skipped?: boolean;
}

export class DeliveryRunner {
  readonly id = `dlv_${randomBytes(8).toString('hex')}`;
  readonly #deps: DeliveryDeps;
  readonly #outbox: DeliveryService;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<number> | null = null;

  constructor(deps: DeliveryDeps) {
    this.#deps = deps;
    this.#outbox = createDeliveryService(deps.db);
  }

  /** Attempts every due delivery once; returns how many were attempted. */
  async runOnce(): Promise<number> {
    const { clock, config } = this.#deps;
    const outbox = this.#outbox;
    let attempted = 0;
    for (;;) {
      const now = clock.now();
      const due = await outbox.due(now.toISOString(), DELIVERIES_AT_ONCE);
      const leaseUntil = new Date(now.getTime() + config.webhookTimeoutMs + 30 * SECOND).toISOString();
      const claimed: Delivery[] = [];
      for (const id of due) {
        const delivery = await outbox.claim(id, this.id, now.toISOString(), leaseUntil);
        if (delivery) claimed.push(delivery);
      }
      if (claimed.length === 0) return attempted;
      // In parallel: one receiver that takes its full timeout must not hold up the others.
      await Promise.all(claimed.map((d) => this.#attempt(d)));
      attempted += claimed.length;
    }
  }

  /** Polls every `intervalMs` until stop(). */
  start(intervalMs: number): void {
    if (this.#timer) return;
    const tick = (): void => {
      this.#running = this.runOnce().catch((err: unknown) => {
        this.#deps.logger.error({ err }, 'delivery pass failed');
        return 0;
      });
      void this.#running.finally(() => {
        if (this.#timer) this.#timer = setTimeout(tick, intervalMs);
      });
    };
    this.#timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  async #attempt(delivery: Delivery): Promise<void> {
    const { clock, logger } = this.#deps;
    const outbox = this.#outbox;
    const started = clock.now();
    const t0 = performance.now();
    let outcome: AttemptOutcome;
    try {
      outcome =
        delivery.channel === 'webhook' ? await this.#sendWebhook(delivery) : await this.#sendEmail(delivery);
    } catch (err) {
      outcome = { ok: false, statusCode: null, error: err instanceof Error ? err.message : String(err) };
    }
    await outbox.recordAttempt({
      delivery_id: delivery.id,
      attempt: delivery.attempts,
      started_at: started.toISOString(),
      status_code: outcome.statusCode,
      error: outcome.error,
      duration_ms: Math.round(performance.now() - t0),
    });
    const now = clock.now();
    const retryIn = RETRY_SCHEDULE_MS[delivery.attempts - 1];
    const log = logger.child({
      delivery_id: delivery.id,
      job_id: delivery.job_id,
      channel: delivery.channel,
    });
    if (outcome.ok || outcome.skipped === true) {
      await outbox.settle(delivery.id, this.id, {
        state: outcome.ok ? 'delivered' : 'skipped',
        statusCode: outcome.statusCode,
        error: outcome.error,
        finishedAt: now.toISOString(),
      });
      log.info({ attempt: delivery.attempts, state: outcome.ok ? 'delivered' : 'skipped' }, 'job event sent');
      this.#deps.metrics?.deliveryAttempted(delivery.channel, outcome.ok ? 'delivered' : 'skipped');
    } else if (outcome.permanent !== true && retryIn !== undefined) {
      await outbox.settle(delivery.id, this.id, {
        state: 'pending',
        nextAttemptAt: new Date(now.getTime() + retryIn).toISOString(),
        statusCode: outcome.statusCode,
        error: outcome.error,
        finishedAt: null,
      });
      log.warn(
        {
          attempt: delivery.attempts,
          status: outcome.statusCode,
          error: outcome.error,
          retry_in_ms: retryIn,
        },
        'job event failed; will retry',
      );
      this.#deps.metrics?.deliveryAttempted(delivery.channel, 'retry');
    } else {
      await outbox.settle(delivery.id, this.id, {
        state: 'failed',
        statusCode: outcome.statusCode,
        error: outcome.error,
        finishedAt: now.toISOString(),
      });
      log.warn(
        { attempt: delivery.attempts, status: outcome.statusCode, error: outcome.error },
        'job event given up',
      );
      this.#deps.metrics?.deliveryAttempted(delivery.channel, 'failed');
    }
  }

  async #sendWebhook(delivery: Delivery): Promise<AttemptOutcome> {
    const { clock, config, resolveHost } = this.#deps;
    if (delivery.target === null) return { ok: false, statusCode: null, error: 'no target', permanent: true };
    let target;
    try {
      target = await checkWebhookTarget(parseWebhookUrl(delivery.target, config.allowInsecureWebhooks), {
        allowInsecure: config.allowInsecureWebhooks,
        resolve: resolveHost,
      });
    } catch (err) {
      if (!(err instanceof WebhookTargetError)) throw err;
      // A name that stopped resolving may come back; one that now points inside never should.
      const permanent = !err.message.includes('does not resolve');
      return { ok: false, statusCode: null, error: err.message, permanent };
    }
    const secret = await this.#outbox.webhookSecret(delivery.account_id);
    if (secret === null) return { ok: false, statusCode: null, error: 'account is gone', permanent: true };
    const timestamp = Math.floor(clock.now().getTime() / 1000);
    const headers = signWebhook(secret, delivery.id, timestamp, delivery.payload);
    const res = await postWebhook(target, delivery.payload, { ...headers }, config.webhookTimeoutMs);
    const ok = res.statusCode !== null && res.statusCode >= 200 && res.statusCode < 300;
    return { ok, statusCode: res.statusCode, error: ok ? null : (res.error ?? `HTTP ${res.statusCode}`) };
  }

  async #sendEmail(delivery: Delivery): Promise<AttemptOutcome> {
    const { logger, notifier } = this.#deps;
    const to = await this.#outbox.accountEmail(delivery.account_id);
    if (to === undefined) return { ok: false, statusCode: null, error: 'account is gone', permanent: true };
    if (notifier === null) {
      logger.info(
        { job_id: delivery.job_id, to: maskAddress(to) },
        'no SMTP relay configured; notification skipped',
      );
      return { ok: false, skipped: true, statusCode: null, error: 'no SMTP relay configured' };
    }
    const event = JSON.parse(delivery.payload) as { data: JobView };
    await notifier.send(to, event.data);
    return { ok: true, statusCode: null, error: null };
  }
}
