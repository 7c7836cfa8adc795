/**
 * Taking one bounce or complaint message in (docs/outcomes.md, "Bounce and complaint messages"):
 * its events (bounce-message.ts) go through the same intake as JSON events, with source
 * `message`, so they are checked, deduplicated and stored in one transaction the same way. A
 * message that is not a bounce or a complaint throws before anything is stored.
 */
import {
  eventsFromMessage,
  type IgnoredRecipient,
  type MessageEventType,
  type MessageKind,
} from './bounce-message.js';
import { takeOutcomes, type IntakeDeps, type IntakeReport } from './intake.service.js';

export interface MessageIntakeReport extends IntakeReport {
  kind: MessageKind;
  /** The events the message yielded, in order (a refusal's `index` points here). */
  events: { email: string; type: MessageEventType; status?: string; at?: string }[];
  /** Recipients that became no event, and why. */
  ignored: IgnoredRecipient[];
}

/** Reads `raw` (one RFC 5322 message) and takes its events; throws AppError as eventsFromMessage does. */
export async function takeOutcomeMessage(
  deps: IntakeDeps,
  input: { accountId: string; raw: Uint8Array; dryRun?: boolean },
): Promise<MessageIntakeReport> {
  const found = await eventsFromMessage(input.raw);
  const report = await takeOutcomes(deps, {
    accountId: input.accountId,
    source: 'message',
    events: found.events,
    ...(input.dryRun === undefined ? {} : { dryRun: input.dryRun }),
  });
  return {
    kind: found.kind,
    ...report,
    events: found.events.map(({ email, type, status, at }) => ({
      email,
      type,
      ...(status === undefined ? {} : { status }),
      ...(at === undefined ? {} : { at }),
    })),
    ignored: found.ignored,
  };
}
