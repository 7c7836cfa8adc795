/**
 * What a bounce says about one recipient's mailbox, from its action, its enhanced status code
 * (RFC 3463) and its diagnostic (docs/outcomes.md, "What a bounce becomes"). A table, in the way
 * SMTP 4xx and 5xx are classified elsewhere: only what speaks of the mailbox becomes an event.
 *
 * - 2.x.x with `Action: delivered` (or relayed, expanded): `delivered`.
 * - 4.x.x, or `Action: delayed`: `soft_bounce`.
 * - 5.1.0-3, 5.1.6, 5.1.10 (no such mailbox or domain, moved, null MX) and 5.2.1 (mailbox
 *   disabled): `hard_bounce`.
 * - 5.2.2 (mailbox full): `soft_bounce`.
 * - 5.7.x and 5.1.7/5.1.8 (about the sender: policy, spam, reputation, DMARC, the sender's
 *   address): no event, `sender_policy`. So is a hard code whose diagnostic is about the sender
 *   (`5.1.0 Sender address rejected`).
 * - 5.2.3/4, 5.3.x to 5.6.x (message size or content, the receiving system, routing, protocol):
 *   no event, `not_about_mailbox`.
 * - A generic x.0.0 (Exim writes `Status: 5.0.0`) is read from the more precise code in the
 *   diagnostic when there is one, else from its words: "user unknown" and the like are a hard
 *   bounce, "mailbox full" a soft one, spam and block-list words `sender_policy`; anything else is
 *   `unclassified`, no event: a permanent failure of unknown cause is no proof that the mailbox is
 *   gone.
 */
import { findEnhancedStatus, formatStatus, type EnhancedStatus } from './dsn-fields.js';

/** Why a recipient of a bounce became no event. */
export type IgnoredReason =
  'sender_policy' | 'not_about_mailbox' | 'unclassified' | 'feedback_type' | 'no_recipient';

export type BounceVerdict =
  | { type: 'delivered' | 'hard_bounce' | 'soft_bounce'; status: string | null }
  | { ignored: IgnoredReason; status: string | null; message: string };

const USER_UNKNOWN =
  /\b(user(name)? unknown|unknown (user|recipient|mailbox|address)|no such (user|mailbox|recipient|address|account)|(user|recipient|mailbox|account|address) (does not|doesn'?t) exist|does not exist|recipient not found|(user|mailbox|address) not found|invalid (recipient|mailbox|address)|recip(ient)?notfound|mailbox unavailable: no such|not our customer|no mailbox here|doesn'?t have an? [\w.-]+ account|account (is )?(disabled|inactive|deactivated))/i;
const MAILBOX_FULL =
  /\b(mailbox (is )?full|over ?quota|quota exceeded|exceeded (the )?storage|insufficient storage)/i;
const SENDER_POLICY =
  /\b(spam|junk|blocked|block ?list|black ?list|deny ?list|reputation|policy|dmarc|spf|dkim|not authori[sz]ed|rejected by (the )?recipient domain|sender)\b/i;
const ABOUT_SENDER = /\bsender\b/i;

/**
 * One recipient of a bounce. `action`: the DSN's `Action` (lower-case), absent in a text bounce;
 * `status`: its `Status` field, or what a text bounce's SMTP answer gives; `diagnostic`: the
 * remote server's words.
 */
export function classifyBounce(input: {
  action?: string | undefined;
  status?: string | undefined;
  diagnostic?: string | undefined;
}): BounceVerdict {
  const action = input.action?.toLowerCase().split(/[\s(]/)[0];
  let status = findEnhancedStatus(input.status);
  // A generic x.0.0 says less than the code the remote server gave in its own words.
  if (status === null || (status.subject === 0 && status.detail === 0)) {
    const said = findEnhancedStatus(input.diagnostic);
    if (said !== null && (status === null || said.cls === status.cls)) status = said;
  }
  const shown = status === null ? null : formatStatus(status);
  if (action === 'delivered' || action === 'relayed' || action === 'expanded') {
    if (status === null || status.cls === 2) return { type: 'delivered', status: shown };
    return unclassified(shown, `the action is "${action}" but the status is ${shown}`);
  }
  if (action === 'delayed') return { type: 'soft_bounce', status: shown };
  if (action !== undefined && action !== 'failed')
    return unclassified(shown, `the action "${action}" is not one of RFC 3464's`);
  if (status === null) return unclassified(null, 'no status code');
  if (status.cls === 2) return unclassified(shown, 'a success code in a failure');
  if (status.cls === 4) return { type: 'soft_bounce', status: shown };
  return permanent(status, formatStatus(status), input.diagnostic ?? '');
}

function permanent(status: EnhancedStatus, shown: string, diagnostic: string): BounceVerdict {
  const code = `${status.subject}.${status.detail}`;
  switch (status.subject) {
    case 0:
      return fromWords(shown, diagnostic);
    case 1:
      if (code === '1.7' || code === '1.8')
        return { ignored: 'sender_policy', status: shown, message: "the sender's address was refused" };
      if (['1.0', '1.1', '1.2', '1.3', '1.6', '1.10'].includes(code)) return hard(shown, diagnostic);
      return unclassified(shown, 'an address status that does not say the mailbox is gone');
    case 2:
      if (code === '2.2') return { type: 'soft_bounce', status: shown };
      if (code === '2.1') return hard(shown, diagnostic);
      if (code === '2.0') return fromWords(shown, diagnostic);
      return notAboutMailbox(shown, 'the message, not the mailbox, was refused (size, list expansion)');
    case 7:
      return {
        ignored: 'sender_policy',
        status: shown,
        message: 'a security or policy refusal of the sender',
      };
    case 3:
    case 4:
    case 5:
    case 6:
      return notAboutMailbox(shown, 'the receiving system, routing, protocol or content failed');
    default:
      return unclassified(shown, 'an unknown status subject');
  }
}

function hard(shown: string, diagnostic: string): BounceVerdict {
  if (ABOUT_SENDER.test(diagnostic) && !USER_UNKNOWN.test(diagnostic))
    return { ignored: 'sender_policy', status: shown, message: 'the diagnostic is about the sender' };
  return { type: 'hard_bounce', status: shown };
}

function fromWords(shown: string, diagnostic: string): BounceVerdict {
  if (MAILBOX_FULL.test(diagnostic)) return { type: 'soft_bounce', status: shown };
  if (SENDER_POLICY.test(diagnostic))
    return {
      ignored: 'sender_policy',
      status: shown,
      message: 'the diagnostic speaks of policy or the sender',
    };
  if (USER_UNKNOWN.test(diagnostic)) return { type: 'hard_bounce', status: shown };
  return unclassified(shown, 'a permanent failure whose cause is not given');
}

function unclassified(status: string | null, message: string): BounceVerdict {
  return { ignored: 'unclassified', status, message };
}

function notAboutMailbox(status: string, message: string): BounceVerdict {
  return { ignored: 'not_about_mailbox', status, message };
}
