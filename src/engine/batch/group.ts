/**
 * The first step of a batch: parse every input once, fold duplicates together, and group the
 * distinct addresses by domain, so that each address is probed once and each domain resolved
 * once per call.
 */
import { addressIdentity, parseAddress } from '../syntax.js';

/** A distinct, well-formed address and every input position that holds it. */
export interface UniqueAddress {
  /** Position in `GroupedInput.unique`. */
  id: number;
  /** `local@domain` as parsed: local part as given, domain normalised. */
  address: string;
  local: string;
  domain: string;
  /** The domain is an address literal ([IPv4] / [IPv6:...]). */
  literal: boolean;
  /** Input indexes, in input order. */
  indexes: number[];
}

/** An input string that is not a well-formed address. */
export interface MalformedInput {
  index: number;
  input: string;
  error: string;
}

export interface GroupedInput {
  unique: UniqueAddress[];
  malformed: MalformedInput[];
  /** Distinct addresses by domain, domains in order of first appearance. */
  byDomain: Map<string, UniqueAddress[]>;
}

/**
 * Parses and deduplicates `emails`. Two inputs are the same address when they parse to the
 * same `local@domain` (the domain is case-insensitive and IDNA-normalised; the local part is
 * kept as given, since RFC 5321 leaves its case to the receiving server).
 */
export function groupAddresses(emails: readonly string[]): GroupedInput {
  const seen = new Map<string, UniqueAddress>();
  const malformed: MalformedInput[] = [];
  const byDomain = new Map<string, UniqueAddress[]>();
  for (let index = 0; index < emails.length; index++) {
    const input = emails[index]!;
    const parsed = parseAddress(input);
    if (!parsed.ok) {
      malformed.push({ index, input, error: parsed.error });
      continue;
    }
    const identity = addressIdentity(parsed);
    const known = seen.get(identity);
    if (known !== undefined) {
      known.indexes.push(index);
      continue;
    }
    const entry: UniqueAddress = {
      id: seen.size,
      address: identity,
      local: parsed.local,
      domain: parsed.domain,
      literal: parsed.literal,
      indexes: [index],
    };
    seen.set(identity, entry);
    const group = byDomain.get(parsed.domain);
    if (group === undefined) byDomain.set(parsed.domain, [entry]);
    else group.push(entry);
  }
  return { unique: [...seen.values()], malformed, byDomain };
}
