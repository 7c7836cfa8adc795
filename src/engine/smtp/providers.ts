/**
 * The provider table: which mail provider runs a domain's mail, read from its MX host names.
 * Big providers serve millions of domains from one fleet of MX hosts under their own names
 * (`aspmx.l.google.com` for every Google Workspace customer, `<tenant>.mail.protection.outlook.com`
 * for every Microsoft 365 tenant), and judge a client across that whole fleet. The result says
 * which one it is (`checks.mx.provider`), and the batch engine keeps a cap and a pace of sessions
 * per provider as well as per host (docs/batch-engine.md, "Provider-wide politeness").
 *
 * Each row is a DNS suffix the provider's MX hosts live under, with one MX host as the provider
 * publishes it (its setup documentation, or the MX of one of its own domains);
 * test/engine/providers.test.ts reads every example back to its row, and docs/verdicts.md
 * ("Which provider runs the mail") shows the same rows, checked against this file. A suffix
 * matches on label boundaries: `google.com` matches `aspmx.l.google.com` and `google.com`, never
 * `evilgoogle.com` nor `google.com.example`.
 */
import type { MxRecordInfo, Provider } from '../types.js';

export interface ProviderRow {
  provider: Provider;
  /** Lower-case DNS suffix (no trailing dot) under which the provider's MX hosts are named. */
  suffix: string;
  /** One MX host name as the provider publishes it: the row's test case and its line in the docs. */
  example: string;
  /** Where the MX names are documented. */
  source: string;
}

const GOOGLE =
  'Google Workspace admin help, "MX record values" (aspmx.l.google.com, alt1-4; older aspmx2-5.googlemail.com)';
const MICROSOFT =
  'Microsoft 365 admin help, "Add DNS records to connect your domain" (<tenant>.mail.protection.outlook.com; DNSSEC tenants <tenant>.<id>.mx.microsoft); the MX of outlook.com and hotmail.com';
const YAHOO = 'the MX of yahoo.com, aol.com and Yahoo Small Business (*.yahoodns.net)';
const APPLE =
  'iCloud+ custom e-mail domain setup (mx01/mx02.mail.icloud.com); the MX of icloud.com, me.com, mac.com';
const PROOFPOINT =
  'Proofpoint on Demand (mx0a/mx0b-<id>.pphosted.com) and Proofpoint Essentials (mx1/mx2-<region>.ppe-hosted.com) onboarding';
const MIMECAST =
  'Mimecast inbound MX hosts by region (<region>-smtp-inbound-1/2.mimecast.com, .mimecast.co.za)';
const BARRACUDA = 'Barracuda Email Gateway Defense MX records (<id>.ess.barracudanetworks.com, .ess.eu.…)';
const ZOHO = 'Zoho Mail MX values by data centre (mx/mx2/mx3.zoho.com, .eu, .in, .com.au)';
const YANDEX = 'Yandex 360 for business (mx.yandex.net); the MX of yandex.ru';
const MAILRU = 'VK WorkMail / Mail.ru for business (emx.mail.ru); the MX of mail.ru (mxs.mail.ru)';
const GMX =
  'the MX of gmx.de / gmx.net (mx00.emig.gmx.net), web.de (mx-ha02/03.web.de) and mail.com (1&1 Mail & Media)';
const FASTMAIL = 'Fastmail custom domain setup (in1-smtp / in2-smtp.messagingengine.com)';
const PROTON = 'Proton Mail custom domain setup (mail.protonmail.ch, mailsec.protonmail.ch)';

/** The table; suffixes do not overlap, so the order does not matter. */
export const PROVIDER_ROWS: readonly Readonly<ProviderRow>[] = [
  { provider: 'google', suffix: 'google.com', example: 'aspmx.l.google.com', source: GOOGLE },
  { provider: 'google', suffix: 'googlemail.com', example: 'aspmx2.googlemail.com', source: GOOGLE },
  {
    provider: 'microsoft',
    suffix: 'mail.protection.outlook.com',
    example: 'contoso-com.mail.protection.outlook.com',
    source: MICROSOFT,
  },
  {
    provider: 'microsoft',
    suffix: 'olc.protection.outlook.com',
    example: 'outlook-com.olc.protection.outlook.com',
    source: MICROSOFT,
  },
  {
    provider: 'microsoft',
    suffix: 'mx.microsoft',
    example: 'contoso-com.a-v1.mx.microsoft',
    source: MICROSOFT,
  },
  { provider: 'yahoo', suffix: 'yahoodns.net', example: 'mta5.am0.yahoodns.net', source: YAHOO },
  { provider: 'apple', suffix: 'mail.icloud.com', example: 'mx01.mail.icloud.com', source: APPLE },
  {
    provider: 'proofpoint',
    suffix: 'pphosted.com',
    example: 'mx0a-00123401.pphosted.com',
    source: PROOFPOINT,
  },
  { provider: 'proofpoint', suffix: 'ppe-hosted.com', example: 'mx1-us1.ppe-hosted.com', source: PROOFPOINT },
  {
    provider: 'mimecast',
    suffix: 'mimecast.com',
    example: 'us-smtp-inbound-1.mimecast.com',
    source: MIMECAST,
  },
  {
    provider: 'mimecast',
    suffix: 'mimecast.co.za',
    example: 'za-smtp-inbound-1.mimecast.co.za',
    source: MIMECAST,
  },
  {
    provider: 'barracuda',
    suffix: 'barracudanetworks.com',
    example: 'd123456a.ess.barracudanetworks.com',
    source: BARRACUDA,
  },
  { provider: 'zoho', suffix: 'zoho.com', example: 'mx.zoho.com', source: ZOHO },
  { provider: 'zoho', suffix: 'zoho.eu', example: 'mx2.zoho.eu', source: ZOHO },
  { provider: 'zoho', suffix: 'zoho.in', example: 'mx.zoho.in', source: ZOHO },
  { provider: 'zoho', suffix: 'zoho.com.au', example: 'mx.zoho.com.au', source: ZOHO },
  { provider: 'yandex', suffix: 'yandex.net', example: 'mx.yandex.net', source: YANDEX },
  { provider: 'yandex', suffix: 'yandex.ru', example: 'mx.yandex.ru', source: YANDEX },
  { provider: 'mailru', suffix: 'mail.ru', example: 'emx.mail.ru', source: MAILRU },
  { provider: 'gmx', suffix: 'gmx.net', example: 'mx00.emig.gmx.net', source: GMX },
  { provider: 'gmx', suffix: 'web.de', example: 'mx-ha03.web.de', source: GMX },
  { provider: 'gmx', suffix: 'mail.com', example: 'mx00.mail.com', source: GMX },
  {
    provider: 'fastmail',
    suffix: 'messagingengine.com',
    example: 'in1-smtp.messagingengine.com',
    source: FASTMAIL,
  },
  { provider: 'proton', suffix: 'protonmail.ch', example: 'mail.protonmail.ch', source: PROTON },
];

const BY_SUFFIX: ReadonlyMap<string, Provider> = new Map(
  PROVIDER_ROWS.map((row) => [row.suffix, row.provider]),
);

/**
 * The provider whose MX host `exchange` is, or null. Looks up the name and each parent suffix
 * (label boundaries only), case and trailing dot ignored.
 */
export function providerOfHost(exchange: string): Provider | null {
  let name = exchange.toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  for (;;) {
    const found = BY_SUFFIX.get(name);
    if (found !== undefined) return found;
    const dot = name.indexOf('.');
    if (dot < 0) return null;
    name = name.slice(dot + 1);
  }
}

/**
 * The provider of a domain from its MX records (in preference order): the provider of its most
 * preferred hosts (the first of them that the table knows). A backup MX at a provider behind the
 * domain's own primary does not make the provider run its mail. Null for none, and for a null MX.
 */
export function providerOfRecords(records: readonly MxRecordInfo[]): Provider | null {
  if (records.length === 0) return null;
  const best = Math.min(...records.map((r) => r.priority));
  for (const record of records) {
    if (record.priority !== best) continue;
    const provider = providerOfHost(record.exchange);
    if (provider !== null) return provider;
  }
  return null;
}
