/**
 * Which DNS failures are facts about the domain and which only mean the answer could not be
 * found out. Only a permanent failure may ever make an address undeliverable; anything not in
 * the table is transient, because an unfamiliar error is no proof that a domain is bad.
 * Codes are those of `node:dns` (c-ares).
 */
export type DnsFailureClass = 'permanent' | 'transient';

const DNS_FAILURES: Readonly<Record<string, DnsFailureClass>> = {
  /** NXDOMAIN: the name does not exist. */
  ENOTFOUND: 'permanent',
  /** NOERROR with no record of the asked type (NODATA). */
  ENODATA: 'permanent',
  ESERVFAIL: 'transient',
  ETIMEOUT: 'transient',
  ECONNREFUSED: 'transient',
  EREFUSED: 'transient',
  EFORMERR: 'transient',
  EBADRESP: 'transient',
  ECANCELLED: 'transient',
  EDESTRUCTION: 'transient',
  ENOMEM: 'transient',
};

/** Classifies a `node:dns` error code. */
export function classifyDnsError(code: string): DnsFailureClass {
  return DNS_FAILURES[code] ?? 'transient';
}

/** The `code` of an error thrown by `node:dns`, or a stand-in for anything else. */
export function dnsErrorCode(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string')
    return err.code;
  return 'EUNKNOWN';
}
