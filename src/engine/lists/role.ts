/**
 * Role addresses: mailboxes that belong to a function rather than a person (RFC 2142 names and
 * the common business ones). A role address can be perfectly deliverable; it is only a flag
 * that lowers the score a little, because mail to it is read by whoever is on duty, is often a
 * list, and complains more.
 */

/** Role local parts, lower-case and written without separators (`noreply` covers `no-reply`, `no_reply`, `no.reply`). */
export const ROLE_LOCAL_PARTS: readonly string[] = [
  // RFC 2142 and mail/DNS operations
  'postmaster',
  'hostmaster',
  'webmaster',
  'abuse',
  'noc',
  'security',
  'root',
  'usenet',
  'news',
  'uucp',
  'ftp',
  'www',
  'mailerdaemon',
  'dmarc',
  'dmarcreports',
  'bounce',
  'bounces',
  // administration
  'admin',
  'administrator',
  'sysadmin',
  'it',
  'helpdesk',
  'servicedesk',
  'devnull',
  'nobody',
  'noreply',
  'donotreply',
  'dontreply',
  'notifications',
  'notification',
  'alerts',
  // customer-facing
  'info',
  'information',
  'support',
  'customersupport',
  'customerservice',
  'customercare',
  'service',
  'services',
  'help',
  'contact',
  'contactus',
  'enquiries',
  'enquiry',
  'inquiries',
  'inquiry',
  'feedback',
  'hello',
  'hi',
  'welcome',
  'office',
  'reception',
  'mail',
  'email',
  'team',
  'staff',
  'all',
  'everyone',
  // business functions
  'sales',
  'billing',
  'accounts',
  'accounting',
  'finance',
  'invoice',
  'invoices',
  'payments',
  'orders',
  'order',
  'purchasing',
  'procurement',
  'marketing',
  'newsletter',
  'newsletters',
  'press',
  'media',
  'pr',
  'partners',
  'partnerships',
  'legal',
  'compliance',
  'privacy',
  'gdpr',
  'dpo',
  'hr',
  'humanresources',
  'jobs',
  'careers',
  'recruiting',
  'recruitment',
  'talent',
  'shop',
  'store',
  'subscribe',
  'unsubscribe',
  'list',
  'lists',
  'community',
  'events',
  'investor',
  'investors',
  'ir',
];
const ROLES: ReadonlySet<string> = new Set(ROLE_LOCAL_PARTS);

/**
 * True when the local part is a role mailbox. Case-insensitive; a `+tag` suffix is ignored, and
 * so are `.`, `-` and `_` separators (`no-reply`, `No.Reply+x` both match `noreply`).
 */
export function isRoleAddress(local: string): boolean {
  let name = local;
  if (name.length >= 2 && name.startsWith('"') && name.endsWith('"')) {
    name = name.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  const plus = name.indexOf('+');
  if (plus > 0) name = name.slice(0, plus);
  return ROLES.has(name.toLowerCase().replace(/[._-]/g, ''));
}
