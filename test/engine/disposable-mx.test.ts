/**
 * Disposable by infrastructure (issue 10, part 3): a domain on no list is disposable when its MX
 * hosts are a disposable provider's own mail hosts. Through the in-process DNS server and SMTP kit:
 * the provider's host names resolve to a kit MTA, so a probe, if one were made, would show.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EngineOptions, Verifier } from '../../src/engine/index.js';
import { createVerifier } from '../../src/engine/index.js';
import { DISPOSABLE_MX_PROVIDERS } from '../../src/engine/lists/disposable-mx-hosts.js';
import { disposableMxHost, isDisposableDomain } from '../../src/engine/lists/disposable.js';
import { startDnsServer, type FakeDnsServer } from '../kit/dns-server.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';
import { kitEngineOptions } from '../kit/engine-options.js';

let kit: SmtpKit;
let dns: FakeDnsServer;
let verifier: Verifier;

function engineOptions(): EngineOptions {
  return kitEngineOptions(dns.address, kit.port);
}

/** `domain`'s MX records name `exchanges`; each of them resolves to the kit's MTA. */
function mxAt(domain: string, ...exchanges: string[]): void {
  dns.setDomain(domain, { mx: exchanges.map((exchange, i) => ({ exchange, priority: 10 * (i + 1) })) });
  for (const exchange of exchanges) dns.setDomain(exchange, { a: [kit.hosts.mta!.ip] });
}

beforeAll(async () => {
  kit = await startSmtpServers({ mta: { kind: 'mta', mailboxes: ['anna'] } });
  dns = await startDnsServer();
  mxAt('fresh-throwaway.test', 'mail2.mailinator.com');
  mxAt('rotating-domain.test', 'IN.Mail.TM.');
  mxAt('backup-at-provider.test', 'mx1.backup-at-provider.test', 'mx.guerrillamail.com');
  mxAt('ordinary.test', 'mx1.ordinary.test');
  mxAt('lookalike.test', 'mail.notmailinator.com', 'mailinator.com.lookalike.test');
  mxAt('mailinator.com', 'mail.mailinator.com');
  verifier = createVerifier(engineOptions());
});

afterAll(async () => {
  await verifier?.close();
  await kit?.close();
  await dns?.close();
});

beforeEach(() => {
  kit.resetRecords();
});

describe('disposable by MX host, through real DNS and SMTP sockets', () => {
  it('flags a domain on no list whose MX is a disposable provider host, without probing it', async () => {
    expect(isDisposableDomain('fresh-throwaway.test')).toBe(false);
    const result = await verifier.verify('anna@fresh-throwaway.test');
    expect(result).toMatchObject({
      status: 'risky',
      reason: 'disposable_domain',
      disposable: true,
      mx: true,
    });
    expect(result.checks.disposable).toEqual({
      passed: false,
      value: true,
      signal: 'mx_host',
      mx_host: 'mail2.mailinator.com',
    });
    expect(result.checks.smtp.passed).toBeNull();
    expect(kit.hosts.mta!.connections).toBe(0);
  });

  it('matches the MX host name whatever its case and a trailing dot', async () => {
    const result = await verifier.verify('anna@rotating-domain.test');
    expect(result.checks.disposable).toMatchObject({ value: true, signal: 'mx_host' });
    expect(result.reason).toBe('disposable_domain');
  });

  it('flags a domain when any of its MX hosts is a provider host, not only the first', async () => {
    const result = await verifier.verify('anna@backup-at-provider.test');
    expect(result.checks.disposable).toMatchObject({ signal: 'mx_host', mx_host: 'mx.guerrillamail.com' });
  });

  it('does not flag a domain whose own MX host merely contains a provider name, and probes it', async () => {
    const result = await verifier.verify('anna@lookalike.test');
    expect(result.checks.disposable).toEqual({ passed: true, value: false, signal: null, mx_host: null });
    expect(result.status).toBe('deliverable');
    expect(kit.hosts.mta!.connections).toBeGreaterThan(0);
  });

  it('does not flag an ordinary domain, and probes it', async () => {
    const result = await verifier.verify('anna@ordinary.test');
    expect(result).toMatchObject({ status: 'deliverable', disposable: false });
    expect(result.checks.disposable).toEqual({ passed: true, value: false, signal: null, mx_host: null });
  });

  it('names the domain list when the domain is listed, even though its MX is a provider host too', async () => {
    const result = await verifier.verify('anna@mailinator.com');
    expect(result.checks.disposable).toEqual({
      passed: false,
      value: true,
      signal: 'domain_list',
      mx_host: null,
    });
  });

  it('cannot see MX hosts offline: verifyOffline flags only listed domains', () => {
    expect(verifier.verifyOffline('anna@fresh-throwaway.test').checks.disposable).toMatchObject({
      value: false,
      signal: null,
    });
    expect(verifier.verifyOffline('anna@mailinator.com').checks.disposable).toMatchObject({
      value: true,
      signal: 'domain_list',
    });
  });
});

describe('the list of disposable providers’ mail hosts', () => {
  /** Suffixes that are a provider's own mail domain but not an address domain it hands out. */
  const NOT_ADDRESS_DOMAINS = new Set(['mail.tm']);

  it('holds lower-case domain names, once each, each covering the host it was seen at', () => {
    const suffixes = DISPOSABLE_MX_PROVIDERS.map((p) => p.suffix);
    expect(new Set(suffixes).size).toBe(suffixes.length);
    for (const { suffix, seen } of DISPOSABLE_MX_PROVIDERS) {
      expect(suffix).toMatch(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/);
      expect(seen === suffix || seen.endsWith(`.${suffix}`), `${seen} under ${suffix}`).toBe(true);
      expect(disposableMxHost([seen])?.host).toBe(seen);
    }
  });

  it('names only domains that are themselves on the disposable domain list, or a named exception', () => {
    // A hosting company's or a forwarding service's MX (which ordinary domains use too) would
    // fail here: it is on no disposable list.
    for (const { suffix } of DISPOSABLE_MX_PROVIDERS) {
      expect(isDisposableDomain(suffix) || NOT_ADDRESS_DOMAINS.has(suffix), suffix).toBe(true);
    }
  });

  it('matches a host under a listed suffix and nothing that only ends with the same characters', () => {
    expect(disposableMxHost(['a.b.mailinator.com'])).toEqual({
      host: 'a.b.mailinator.com',
      provider: 'Mailinator',
    });
    expect(disposableMxHost(['notmailinator.com', 'mailinator.com.example.org', 'com'])).toBeNull();
    expect(disposableMxHost([])).toBeNull();
  });
});
