/**
 * How outcomes name an address without storing it: SHA-256 of the account id and the address
 * with its domain normalised (lower-cased, IDNA) and its local part lower-cased. Mail systems
 * report recipients in whatever case they were sent to, and a mailbox whose name differs only in
 * case from another is a curiosity no provider hands out; matching them as one keeps a bounce
 * reported as `jane@…` from missing the `Jane@…` that was verified (docs/outcomes.md, "Privacy").
 */
import { createHash } from 'node:crypto';
import { addressIdentity, parseAddress } from '../../engine/syntax.js';

export interface OutcomeAddress {
  /** The stored key; never the address. */
  key: string;
  /** Lower-cased, IDNA. */
  domain: string;
}

/** The address's key for the account, or the syntax error when `email` is not an address. */
export function outcomeAddress(accountId: string, email: string): OutcomeAddress | { error: string } {
  if (email.length > 254) return { error: 'the address is longer than 254 characters' };
  const parsed = parseAddress(email);
  if (!parsed.ok) return { error: parsed.error };
  const key = createHash('sha256')
    .update(accountId)
    .update('\0')
    .update(addressIdentity(parsed, 'case-folded'))
    .digest('base64url');
  return { key, domain: parsed.domain };
}
