/**
 * What a provider's payload becomes: the events for `takeOutcomes`, and how many of the
 * provider's events say nothing about a mailbox (a send, a block of the sender, an unknown type).
 */
import { AppError } from '../../../errors.js';
import type { OutcomeEventInput } from '../intake.service.js';
import type { OutcomeType } from '../outcome-types.js';

export interface Mapped {
  events: OutcomeEventInput[];
  /** Provider events that became none of ours (counted on the source). */
  ignored: number;
}

export class MappedEvents implements Mapped {
  readonly events: OutcomeEventInput[] = [];
  ignored = 0;

  /** Adds the event, or counts it ignored when `type` is null or the recipient is missing. */
  add(type: OutcomeType | null, email: unknown, at: Date | null, sourceId: unknown, detail?: unknown): void {
    if (type === null || typeof email !== 'string' || email === '') {
      this.ignored++;
      return;
    }
    const event: OutcomeEventInput = { email, type };
    if (at !== null && !Number.isNaN(at.getTime())) event.at = at.toISOString();
    if (typeof sourceId === 'string' && sourceId !== '') event.source_id = sourceId.slice(0, 200);
    if (typeof detail === 'string' && detail !== '') event.detail = detail;
    this.events.push(event);
  }
}

/** A plain JSON object, or null. */
export function objectOf(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** The body as JSON; invalid_json (400) when it is not. */
export function parseJson(body: Buffer, what: string): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new AppError('invalid_json', `the ${what} body is not valid JSON`);
  }
}

/** invalid_hook_payload (422): a payload of the right provider that cannot be read. */
export function unreadable(message: string): never {
  throw new AppError('invalid_hook_payload', message);
}

/** A time from epoch seconds (a number or its text). */
export function fromEpochSeconds(value: unknown): Date | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isFinite(n) ? new Date(Math.round(n * 1000)) : null;
}

/** A time from an ISO 8601 text. */
export function fromIso(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : new Date(t);
}
