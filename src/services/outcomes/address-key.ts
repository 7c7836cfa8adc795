/**
 * How outcomes name an address without storing it: SHA-256 of the account id and the address
 * with its domain normalised (lower-cased, IDNA) and its local part lower-cased. Mail systems
 * report recipients in whatever case they were sent to, and a mailbox whose name differs only in
 * case from another is a curiosity no provider hands out; matching them as one keeps a bounce
 * reported as `jane@…` from missing the `Jane@…` that was verified (docs/outcomes.md, "Privacy").
 */
import { createHash } from 'node:crypto';
import { addressIdentity, parseAddress } from '../../engine/syntax.js';
import type { ParsedAddress, WellFormedAddress } from '../../engine/types.js';

/** An address as given, or as the request's one parse gave it (services/verify/verify.service.ts). */
export type AddressInput = string | WellFormedAddress;

/** `input` parsed: a parsed address as it is, a string through parseAddress. */
export function parsedOf(input: AddressInput): ParsedAddress {
  return typeof input === 'string' ? parseAddress(input) : input;
}

/** The address's text: a string as it is, a parsed address's `address`. */
export function textOf(input: AddressInput): string {
  return typeof input === 'string' ? input : input.address;
}

export interface OutcomeAddress {
  /** The stored key; never the address. */
  key: string;
  /** Lower-cased, IDNA. */
  domain: string;
}

/** The address's key for the account, or the syntax error when `email` is not an address. */
export function outcomeAddress(accountId: string, email: AddressInput): OutcomeAddress | { error: string } {
  if (typeof email === 'string' && email.length > 254)
    return { error: 'the address is longer than 254 characters' };
  const parsed = parsedOf(email);
  if (!parsed.ok) return { error: parsed.error };
  return keyed(accountId, parsed);
}

function keyed(accountId: string, address: { local: string; domain: string }): OutcomeAddress {
  const key = createHash('sha256')
    .update(accountId)
    .update('\0')
    .update(addressIdentity(address, 'case-folded'))
    .digest('base64url');
  return { key, domain: address.domain };
}
