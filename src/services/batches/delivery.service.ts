/**
 * The outbox side of job events for the delivery runner (jobs/delivery-runner.ts): find the due
 * deliveries, claim one for an attempt under a lease, record the attempt, settle or reschedule it,
 * and read what an attempt needs (the account's webhook secret, created on first use; its e-mail).
 * The runner decides when and how to send; the store is reached only through here.
 */
import {
  claimDelivery,
  findDueDeliveries,
  getAccountEmail,
  getOrCreateWebhookSecret,
  recordDeliveryAttempt,
  settleDelivery,
} from '../../store/delivery.store.js';
import type { Executor } from '../../store/executor.js';
import type { DeliveryRow, JobDeliveryAttemptsTable } from '../../store/schema/jobs.schema.js';
import { newWebhookSecret } from '../webhooks/sign.js';

/** A queued job event (webhook call or e-mail) claimed for one attempt. */
export type Delivery = DeliveryRow;
export type DeliveryAttempt = JobDeliveryAttemptsTable;
export type DeliveryOutcome = Parameters<typeof settleDelivery>[3];

export interface DeliveryService {
  /** Ids of pending deliveries due at `now` (ISO) that nobody holds, at most `limit`. */
  due: (now: string, limit: number) => Promise<string[]>;
  /** Takes a delivery for one attempt (attempts counted); undefined when another runner took it. */
  claim: (id: string, owner: string, now: string, leaseUntil: string) => Promise<Delivery | undefined>;
  recordAttempt: (attempt: DeliveryAttempt) => Promise<void>;
  /** Ends or reschedules the attempt `owner` holds. */
  settle: (id: string, owner: string, outcome: DeliveryOutcome) => Promise<void>;
  /** The account's webhook signing secret, created on first use; null when the account is gone. */
  webhookSecret: (accountId: string) => Promise<string | null>;
  /** The account's address; undefined when the account is gone. */
  accountEmail: (accountId: string) => Promise<string | undefined>;
}

export function createDeliveryService(db: Executor): DeliveryService {
  return {
    due: (now, limit) => findDueDeliveries(db, now, limit),
    claim: (id, owner, now, leaseUntil) => claimDelivery(db, id, owner, now, leaseUntil),
    recordAttempt: (attempt) => recordDeliveryAttempt(db, attempt),
    settle: (id, owner, outcome) => settleDelivery(db, id, owner, outcome),
    webhookSecret: (accountId) => getOrCreateWebhookSecret(db, accountId, newWebhookSecret()),
    accountEmail: (accountId) => getAccountEmail(db, accountId),
  };
}
