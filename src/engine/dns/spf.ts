/**
 * SPF (RFC 7208) evaluation of a sender for a client address, by mailauth, asked through our
 * own resolver (its servers, timeout and tries): a mail server would judge the prober's MAIL FROM
 * the same way.
 */
import { spf } from 'mailauth/lib/spf/index.js';
import type { DnsLookups, RecordType } from './lookups.js';

/** RFC 7208 §2.6 results. */
export type SpfResult = 'pass' | 'fail' | 'softfail' | 'neutral' | 'none' | 'permerror' | 'temperror';

export interface SpfCheck {
  result: SpfResult;
  /** mailauth's explanation, or the record that was read. */
  comment: string;
}

const RESULTS = new Set<string>(['pass', 'fail', 'softfail', 'neutral', 'none', 'permerror', 'temperror']);

/** Evaluates the SPF policy of `sender`'s domain for mail from `ip` greeting as `helo`. Never rejects. */
export async function checkSpf(
  lookups: DnsLookups,
  query: { sender: string; ip: string; helo: string },
): Promise<SpfCheck> {
  try {
    const answer = await spf({
      sender: query.sender,
      ip: query.ip,
      helo: query.helo,
      // The name mailauth writes into its comment; without it, it reads os.hostname().
      mta: 'mailverdict',
      resolver: (name, type) => lookups.query(name, type as RecordType) as Promise<string[]>,
    });
    const result = RESULTS.has(answer.status.result) ? (answer.status.result as SpfResult) : 'temperror';
    const comment = typeof answer.status.comment === 'string' ? answer.status.comment : result;
    return { result, comment: comment.replace(/^mailverdict: /, '') };
  } catch (error) {
    return { result: 'temperror', comment: error instanceof Error ? error.message : String(error) };
  }
}
