/**
 * `mailverdict doctor`: checks the prober's identity and reputation from each egress (each
 * source address, each proxy, or the default route), with the engine's own settings, and says
 * what to fix. What each check means, and what a working prober needs: docs/prober.md.
 *
 * The offline part (what needs no network: the HELO name and the MAIL FROM domain are fully
 * qualified) is also what `serve` and `worker` warn about at start-up.
 */
import { isIP } from 'node:net';
import type { DnsTrustSettings, DoctorSettings } from '../../config.js';
import { DnsLookups } from '../../engine/dns/lookups.js';
import { MailHostResolver } from '../../engine/dns/resolver.js';
import {
  RESOLVER_UNTRUSTED,
  ResolverTrustMonitor,
  type ResolverTrustStatus,
} from '../../engine/dns/resolver-trust.js';
import { buildEgresses, type Egress } from '../../engine/egress/egress.js';
import { isFullyQualified } from '../../engine/net/host-name.js';
import { isInternalAddress } from '../../engine/net/internal-address.js';
import { echoedAddress, probeEhlo } from '../../engine/smtp/ehlo-probe.js';
import type { EngineOptions, SmtpOptions } from '../../engine/types.js';
import { dnsbl, domainOf, heloMatches, heloResolves, reverseDns, spf } from './doctor-dns-checks.js';

export type CheckStatus = 'pass' | 'warn' | 'fail';

export type CheckId =
  | 'dns_resolver'
  | 'port25'
  | 'helo_fqdn'
  | 'helo_resolves'
  | 'reverse_dns'
  | 'helo_matches_reverse_dns'
  | 'mail_from_domain'
  | 'spf'
  | 'dnsbl';

/** One finding; `egress` is absent for what holds for every egress (the MAIL FROM domain). */
export interface DoctorCheck {
  id: CheckId;
  status: CheckStatus;
  egress?: string;
  message: string;
  /** What to change, when the status is not pass. */
  fix?: string;
}

export interface DoctorReport {
  /** No check failed (warnings allowed). */
  ok: boolean;
  checks: DoctorCheck[];
}

export interface DoctorOptions {
  engine: EngineOptions;
  doctor: DoctorSettings;
  /** The names the resolver is judged by (the reference domain is asked too). */
  dnsTrust: DnsTrustSettings;
  /** Budget of the connection and of each reply of the port-25 probe. */
  timeoutMs: number;
}

const SEE_DOCTOR = 'see `mailverdict doctor`';

/** The checks that need no network: each egress's HELO name, and the MAIL FROM domain's form. */
export function offlineChecks(smtp: SmtpOptions): DoctorCheck[] {
  const egresses = buildEgresses(smtp);
  return [mailFromForm(smtp.mailFrom) ?? undefined, ...egresses.map(heloFqdn)].filter(
    (c): c is DoctorCheck => c !== undefined,
  );
}

/**
 * What `serve` and `worker` log at start-up: one line per problem the offline checks find (a HELO
 * name shared by several egresses is one problem).
 */
export function startupWarnings(smtp: SmtpOptions): string[] {
  const lines = offlineChecks(smtp)
    .filter((c) => c.status !== 'pass')
    .map((c) => `${c.message}${c.fix === undefined ? '' : `: ${c.fix}`}; ${SEE_DOCTOR}`);
  return [...new Set(lines)];
}

function heloFqdn(egress: Egress): DoctorCheck {
  const helo = egress.heloName;
  if (isFullyQualified(helo))
    return {
      id: 'helo_fqdn',
      status: 'pass',
      egress: egress.id,
      message: `HELO name '${helo}' is fully qualified`,
    };
  return {
    id: 'helo_fqdn',
    status: 'fail',
    egress: egress.id,
    message: `HELO name '${helo}' is not fully qualified`,
    fix:
      egress.localAddress === null
        ? "set --helo to the egress's reverse-DNS name"
        : `give the source address its reverse-DNS name: --source-address ${egress.localAddress}=<name>, or set --helo`,
  };
}

/** The MAIL FROM domain's form, or null when it is fully qualified (the DNS check follows). */
function mailFromForm(mailFrom: string): DoctorCheck | null {
  const domain = domainOf(mailFrom);
  if (isFullyQualified(domain)) return null;
  return {
    id: 'mail_from_domain',
    status: 'fail',
    message: `MAIL FROM domain '${domain}' (of ${mailFrom}) is not fully qualified`,
    fix: 'set --mail-from to an address at a domain you own, with MX or A records and an SPF record',
  };
}

/** Runs every check from every egress. Never rejects on a network failure: that is a finding. */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const { engine } = options;
  const lookups = new DnsLookups(engine.dns);
  const trust = new ResolverTrustMonitor(
    {
      names: [...new Set([...options.dnsTrust.names, options.doctor.referenceDomain])],
      absentZone: options.dnsTrust.absentZone,
      // doctor checks once, whatever the interval of `serve`.
      intervalMs: 1,
    },
    { query: (name, type) => lookups.query(name, type), now: Date.now },
  );
  const trusted = await trust.check();
  // No caches worth keeping: each name is asked once or twice. Negative answers of a resolver that
  // is not trusted are not believed (the checks then say they cannot tell).
  const mailHosts = new MailHostResolver(engine.dns, { trust });
  try {
    const checks: DoctorCheck[] = [
      resolverCheck(trusted),
      await mailFromDomain(engine.smtp.mailFrom, mailHosts),
    ];
    for (const egress of buildEgresses(engine.smtp))
      checks.push(...(await egressChecks(egress, options, lookups, mailHosts, trusted)));
    return { ok: checks.every((c) => c.status !== 'fail'), checks };
  } finally {
    mailHosts.close();
    await trust.stop();
    lookups.close();
  }
}

/** The fix of every finding that rests on a resolver that is not trusted. */
const UNTRUSTED_FIX =
  'point --dns-server (MAILVERDICT_DNS_SERVERS) at a resolver that tells the truth (your own recursive resolver, or your provider’s); ' +
  'until then serve answers unknown / dns_error where it would say domain_not_found, and /readyz is not ready';

/** Whether the resolver tells the truth (engine/dns/resolver-trust.ts). */
function resolverCheck(status: ResolverTrustStatus): DoctorCheck {
  const must = status.probes.filter((p) => p.expect === 'exists');
  switch (status.state) {
    case 'trusted':
    case 'off':
      return {
        id: 'dns_resolver',
        status: 'pass',
        message: `the DNS resolver tells the truth: ${must.filter((p) => p.outcome === 'answered').length} of ${must.length} names that must exist answered, a name that must not exist is NXDOMAIN`,
      };
    case 'untrusted':
      return {
        id: 'dns_resolver',
        status: 'fail',
        message: `the DNS resolver is not trusted: ${status.reason ?? 'it lies'}`,
        fix: UNTRUSTED_FIX,
      };
    case 'unreachable':
    case 'unchecked':
      return {
        id: 'dns_resolver',
        status: 'fail',
        message: `the DNS resolver does not answer: ${status.reason ?? 'no answer'}`,
        fix: 'point --dns-server (MAILVERDICT_DNS_SERVERS) at a resolver that answers from this host, or fix /etc/resolv.conf',
      };
  }
}

async function mailFromDomain(mailFrom: string, mailHosts: MailHostResolver): Promise<DoctorCheck> {
  const form = mailFromForm(mailFrom);
  if (form !== null) return form;
  const domain = domainOf(mailFrom);
  const fix = 'set --mail-from to an address at a domain you own, with MX or A records';
  const outcome = await mailHosts.resolve(domain);
  switch (outcome.kind) {
    case 'ok':
      return {
        id: 'mail_from_domain',
        status: 'pass',
        message: outcome.implicit
          ? `MAIL FROM domain '${domain}' exists (an address, no MX)`
          : `MAIL FROM domain '${domain}' has MX ${outcome.records.map((r) => r.exchange).join(', ')}`,
      };
    case 'nxdomain':
      return {
        id: 'mail_from_domain',
        status: 'fail',
        message: `MAIL FROM domain '${domain}' does not exist (NXDOMAIN): servers that check senders refuse it`,
        fix,
      };
    case 'no_mail_host':
    case 'null_mx':
      return {
        id: 'mail_from_domain',
        status: 'fail',
        message: `MAIL FROM domain '${domain}' ${outcome.kind === 'null_mx' ? 'accepts no mail (null MX)' : 'has neither MX nor an address'}: servers that check senders refuse it`,
        fix,
      };
    case 'error':
      return {
        id: 'mail_from_domain',
        status: 'warn',
        message: `cannot tell whether MAIL FROM domain '${domain}' exists: DNS ${outcome.detail}`,
        fix: outcome.detail === RESOLVER_UNTRUSTED ? UNTRUSTED_FIX : 'check --dns-server and try again',
      };
  }
}

async function egressChecks(
  egress: Egress,
  options: DoctorOptions,
  lookups: DnsLookups,
  mailHosts: MailHostResolver,
  trust: ResolverTrustStatus,
): Promise<DoctorCheck[]> {
  const port25 = await port25Check(egress, options, mailHosts, trust);
  const known = port25.publicAddress ?? egress.localAddress;
  // A private source address behind NAT is not what mail servers see (tests on loopback allow it).
  const address =
    known !== null && isInternalAddress(known) && options.engine.dns.allowInternalTargets !== true
      ? null
      : known;
  const at = (check: Omit<DoctorCheck, 'egress'>): DoctorCheck => ({ ...check, egress: egress.id });
  const checks = [port25.check, heloFqdn(egress), at(await heloResolves(egress.heloName, address, lookups))];
  if (address === null) {
    const unknown = (id: CheckId): DoctorCheck =>
      at({
        id,
        status: 'warn',
        message:
          known === null
            ? "cannot tell: the egress's public address is unknown (no mail host answered EHLO with it)"
            : `cannot tell: ${known} is an internal address, not the one mail servers see (NAT)`,
        fix:
          known === null
            ? 'make port25 pass first; a mail server that echoes the client address in its EHLO reply shows it'
            : 'set --reference-domain to a domain whose mail servers echo the client address in their EHLO reply (most large providers do)',
      });
    return [
      ...checks,
      unknown('reverse_dns'),
      unknown('helo_matches_reverse_dns'),
      unknown('spf'),
      unknown('dnsbl'),
    ];
  }
  const reverse = await reverseDns(address, lookups);
  checks.push(at(reverse.check), at(heloMatches(egress, address, reverse.confirmed)));
  checks.push(at(await spf(options.engine.smtp.mailFrom, address, egress.heloName, lookups)));
  const zones = await Promise.all(options.doctor.dnsblZones.map((zone) => dnsbl(address, zone, lookups)));
  checks.push(...zones.map(at));
  return checks;
}

interface Port25 {
  check: DoctorCheck;
  /** The egress's address as a mail server saw it (echoed in EHLO), when one said. */
  publicAddress: string | null;
}

async function port25Check(
  egress: Egress,
  options: DoctorOptions,
  mailHosts: MailHostResolver,
  trust: ResolverTrustStatus,
): Promise<Port25> {
  const { referenceDomain } = options.doctor;
  const { smtp } = options.engine;
  const port = smtp.port;
  const check = (status: CheckStatus, message: string, fix?: string): DoctorCheck => ({
    id: 'port25',
    status,
    egress: egress.id,
    message,
    ...(fix === undefined ? {} : { fix }),
  });
  const outcome = await mailHosts.resolve(referenceDomain);
  if (outcome.kind !== 'ok' || outcome.hosts.length === 0) {
    const why =
      outcome.kind === 'ok'
        ? 'no mail host it may probe'
        : outcome.kind === 'error'
          ? `DNS ${outcome.detail}`
          : outcome.kind;
    return {
      check: check(
        'warn',
        `cannot tell: the reference domain '${referenceDomain}' gives ${why}`,
        trust.state === 'trusted' || trust.state === 'off'
          ? 'set --reference-domain to a domain whose MX hosts answer, and check --dns-server'
          : UNTRUSTED_FIX,
      ),
      publicAddress: null,
    };
  }
  const failures: string[] = [];
  let refusal: { temporary: boolean; text: string; seen: string | null } | null = null;
  for (const host of outcome.hosts.slice(0, smtp.maxMxHosts)) {
    const address = host.addresses.find(
      (a) => egress.localAddress === null || isIP(a) === isIP(egress.localAddress),
    );
    if (address === undefined) continue;
    const result = await probeEhlo(address, {
      port,
      heloName: egress.heloName,
      proxy: egress.proxy,
      localAddress: egress.localAddress,
      timeoutMs: options.timeoutMs,
    });
    const where = `${host.exchange} (${address}) port ${port}`;
    if (result.ok) {
      const seen = result.echoedAddress;
      const echo = seen === null ? '' : `; it sees this egress as ${seen}`;
      return {
        check: check('pass', `${where} answered EHLO ${egress.heloName} with ${result.ehlo.code}${echo}`),
        publicAddress: seen,
      };
    }
    if (result.cause === 'reply' && result.reply !== null) {
      refusal ??= {
        temporary: result.reply.code < 500,
        text: `${where} refused at ${result.stage}: ${result.detail}`,
        // A refusal often names the client ("Client host [203.0.113.7] blocked using ...").
        seen: echoedAddress(result.reply),
      };
    } else {
      failures.push(`${where}: ${result.stage} ${result.cause}`);
    }
  }
  if (refusal !== null) {
    return {
      check: check(
        refusal.temporary ? 'warn' : 'fail',
        refusal.text,
        'port 25 is open, but the mail host refused the prober: read its reply, and the reverse_dns and dnsbl checks',
      ),
      publicAddress: refusal.seen,
    };
  }
  return {
    check: check(
      'fail',
      `no MX host of ${referenceDomain} could be reached on port ${port}: ${failures.join('; ') || 'none of its addresses fits this egress'}`,
      egress.proxy === null
        ? 'outbound port 25 is blocked here (most cloud hosts block it by default): ask the provider to open it, or probe through --proxy / --source-address that can reach it'
        : 'the proxy cannot reach port 25: check that it allows outbound port 25',
    ),
    publicAddress: null,
  };
}
