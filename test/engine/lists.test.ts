import { describe, expect, it } from 'vitest';
import { isDisposableDomain } from '../../src/engine/lists/disposable.js';
import { loadDomainList } from '../../src/engine/lists/domain-set.js';
import { isFreeProvider } from '../../src/engine/lists/free-provider.js';
import { isRoleAddress, ROLE_LOCAL_PARTS } from '../../src/engine/lists/role.js';
import { parseAddress } from '../../src/engine/syntax.js';

describe('isDisposableDomain', () => {
  it('recognises a listed throw-away domain', () => {
    expect(isDisposableDomain('mailinator.com')).toBe(true);
    expect(isDisposableDomain('10minutemail.com')).toBe(true);
  });

  it('matches subdomains of a listed domain', () => {
    expect(isDisposableDomain('a.b.mailinator.com')).toBe(true);
    expect(isDisposableDomain('anything.33mail.com')).toBe(true);
  });

  it('is case-insensitive and ignores a trailing dot', () => {
    expect(isDisposableDomain('MailInator.COM')).toBe(true);
    expect(isDisposableDomain('mailinator.com.')).toBe(true);
  });

  it('does not flag ordinary providers or a domain that merely ends like a listed one', () => {
    expect(isDisposableDomain('gmail.com')).toBe(false);
    expect(isDisposableDomain('example.org')).toBe(false);
    expect(isDisposableDomain('bestcompany-mailinator.com')).toBe(false);
    expect(isDisposableDomain('com')).toBe(false);
  });

  it('never flags an address literal', () => {
    expect(isDisposableDomain('[127.0.0.1]')).toBe(false);
    expect(isFreeProvider('[IPv6:::1]')).toBe(false);
  });

  it('matches Unicode list entries in the punycode form the syntax check produces', () => {
    // The package lists 'gmaıl.net' (dotless ı) in Unicode.
    const parsed = parseAddress('a@gmaıl.net');
    expect(parsed.ok && parsed.domain).toMatch(/^xn--/);
    expect(parsed.ok && isDisposableDomain(parsed.domain)).toBe(true);
  });
});

describe('isRoleAddress', () => {
  it.each(['postmaster', 'abuse', 'admin', 'info', 'support', 'sales', 'noreply', 'hostmaster', 'webmaster'])(
    'flags %s',
    (local) => {
      expect(isRoleAddress(local)).toBe(true);
    },
  );

  it('lists every role in the normalised form it is matched in', () => {
    for (const role of ROLE_LOCAL_PARTS) expect(role).toMatch(/^[a-z0-9]+$/);
    expect(new Set(ROLE_LOCAL_PARTS).size).toBe(ROLE_LOCAL_PARTS.length);
  });

  it('is case-insensitive', () => {
    expect(isRoleAddress('PostMaster')).toBe(true);
    expect(isRoleAddress('INFO')).toBe(true);
  });

  it('ignores a +tag suffix', () => {
    expect(isRoleAddress('support+billing-issue')).toBe(true);
    expect(isRoleAddress('info+newsletter')).toBe(true);
  });

  it('treats ., - and _ separators as the same word', () => {
    for (const local of [
      'no-reply',
      'no_reply',
      'no.reply',
      'No.Reply',
      'do-not-reply',
      'customer.service',
    ]) {
      expect(isRoleAddress(local)).toBe(true);
    }
  });

  it('unquotes a quoted local part', () => {
    expect(isRoleAddress('"info"')).toBe(true);
  });

  it('does not flag personal names, even ones that contain a role word', () => {
    for (const local of ['john', 'john.doe', 'jane+info', 'infoman', 'salesman', 'mary-admin', 'support2']) {
      expect(isRoleAddress(local)).toBe(false);
    }
  });
});

describe('isFreeProvider', () => {
  it('recognises the big free providers', () => {
    for (const domain of ['gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'gmx.de', 'yahoo.co.uk']) {
      expect(isFreeProvider(domain)).toBe(true);
    }
  });

  it('is case-insensitive', () => {
    expect(isFreeProvider('GMail.com')).toBe(true);
  });

  it('does not flag company domains or subdomains of a provider', () => {
    expect(isFreeProvider('acme-corp-widgets.com')).toBe(false);
    expect(isFreeProvider('example.org')).toBe(false);
    expect(isFreeProvider('corp.gmail.com')).toBe(false);
  });

  it.each(['gmial.com', 'hotmail.con', 'yahoo.om', 'gamil.com', 'hotmail.cm'])(
    'does not call a typo domain that the package lists a free provider: %s',
    (domain) => {
      expect(loadDomainList('email-providers/all.json').has(domain)).toBe(true);
      expect(isFreeProvider(domain)).toBe(false);
      expect(isFreeProvider(domain.toUpperCase())).toBe(false);
    },
  );

  it('keeps the free providers that are real domains one slip from a big one', () => {
    for (const domain of [
      'mail.com',
      'ymail.com',
      'yahoo.se',
      'hotmail.nl',
      'gmx.fr',
      'foxmail.com',
      'web.de',
    ]) {
      expect(isFreeProvider(domain)).toBe(true);
    }
  });
});
