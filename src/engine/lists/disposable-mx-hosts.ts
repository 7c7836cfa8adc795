/**
 * Mail hosts of disposable (throw-away) mail providers. A provider's new domain is on no domain
 * list for days or weeks, but its MX records point at the provider's own mail hosts from the first
 * minute: a domain whose MX host is one of these is disposable whatever its name.
 *
 * An entry is a domain that belongs to the provider itself; an MX host matches when it is that
 * domain or a name under it (`mail2.mailinator.com` matches `mailinator.com`). Only the provider's
 * own domains go here, never a host it rents or shares: a forwarding service, a cloud mail
 * router or a hosting company's MX (forwardemail.net, mx.cloudflare.net, an OVH or Hetzner name)
 * also carries the mail of ordinary people, and listing it would call their domains disposable.
 * For the same reason the list holds names, not addresses: a rented address changes hands.
 *
 * Source: the MX records of each provider's domains as published in DNS, taken from public
 * lookups (`dig MX` / `nslookup` output and other open-source lists of such hosts), reviewed on
 * 2026-11-24; `seen` names the host observed. They were not re-resolved from here: the service
 * never sends traffic outside the machine in development. Every suffix except Mail.tm's is itself
 * on the disposable domain list, so a wrong `seen` can only make an entry never fire, never flag
 * an ordinary domain. To update: look up the MX of a few of a provider's current domains, add the
 * provider's own registrable domain with the host seen, and run test/engine/disposable-mx.test.ts
 * (it checks the form of every entry and that the suffix is a listed disposable domain, or one of
 * the exceptions it names). Remove an entry when the provider closes or moves its mail elsewhere.
 */

export interface DisposableMxProvider {
  /** The provider's name, for the reader of this list. */
  provider: string;
  /** Lower-case domain of the provider's own mail hosts; an MX host equal to it or under it matches. */
  suffix: string;
  /** An MX host observed for the provider's domains. */
  seen: string;
}

export const DISPOSABLE_MX_PROVIDERS: readonly DisposableMxProvider[] = [
  { provider: 'Mailinator', suffix: 'mailinator.com', seen: 'mail2.mailinator.com' },
  { provider: 'Guerrilla Mail', suffix: 'guerrillamail.com', seen: 'mx.guerrillamail.com' },
  // Mail.tm hands out rotating domains (none of them mail.tm itself), all received at in.mail.tm.
  { provider: 'Mail.tm', suffix: 'mail.tm', seen: 'in.mail.tm' },
  { provider: '10 Minute Mail', suffix: '10minutemail.com', seen: 'prd-smtp.10minutemail.com' },
  { provider: 'YOPmail', suffix: 'yopmail.com', seen: 'smtp.yopmail.com' },
  { provider: 'DropMail', suffix: 'dropmail.me', seen: 'mx.dropmail.me' },
  { provider: 'Nada', suffix: 'getnada.com', seen: 'mail.getnada.com' },
  { provider: 'Discard.Email', suffix: 'discard.email', seen: 'mx.discard.email' },
  { provider: 'TrashMail', suffix: 'trashmail.com', seen: 'mx.trashmail.com' },
  { provider: 'MintEmail', suffix: 'mintemail.com', seen: 'mintserver.mintemail.com' },
];
