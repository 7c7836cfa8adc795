/**
 * Host names as mail servers judge them in HELO and in the sender's domain: fully qualified
 * (`mx1.example.net`), not `localhost`, a bare name or an address. Postfix's
 * `reject_non_fqdn_helo_hostname` and `reject_non_fqdn_sender`, both common, refuse the rest.
 */

// RFC 1123 labels; a fully qualified name also needs a dot and a top-level label that is not all digits.
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;
/** Top-level labels of names that only mean something inside a network. */
const LOCAL_TLDS = new Set(['localhost', 'localdomain', 'local', 'internal', 'lan']);

/** Whether `name` (a trailing dot allowed) is a fully qualified host name: `mx1.example.com`. */
export function isFullyQualified(name: string): boolean {
  const labels = name.toLowerCase().replace(/\.$/, '').split('.');
  if (labels.length < 2 || name.length > 253) return false;
  if (!labels.every((l) => LABEL.test(l))) return false;
  const tld = labels.at(-1)!;
  return !/^\d+$/.test(tld) && !LOCAL_TLDS.has(tld);
}
