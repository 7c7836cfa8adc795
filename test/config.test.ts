import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  defaultText,
  formatDuration,
  loadConfig,
  parseDuration,
  SETTINGS,
  type Setting,
} from '../src/config.js';
import { DAY, HOUR, MINUTE, SECOND } from '../src/clock.js';

describe('config', () => {
  it('parses durations with units', () => {
    expect(parseDuration('72h')).toBe(72 * 3600 * 1000);
    expect(parseDuration('15m')).toBe(15 * 60 * 1000);
    expect(parseDuration('2s')).toBe(2000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1d')).toBe(24 * 3600 * 1000);
  });

  it('shows durations in the largest unit that states them exactly, hours up to 72h', () => {
    expect(formatDuration(500)).toBe('500ms');
    expect(formatDuration(2 * SECOND)).toBe('2s');
    expect(formatDuration(90 * SECOND)).toBe('90s');
    expect(formatDuration(10 * MINUTE)).toBe('10m');
    expect(formatDuration(24 * HOUR)).toBe('24h');
    expect(formatDuration(72 * HOUR)).toBe('72h');
    expect(formatDuration(7 * DAY)).toBe('7d');
  });

  it('reads back each default as help and docs show it', () => {
    for (const s of Object.values(SETTINGS) as Setting<unknown>[]) {
      if (typeof s.default === 'function' || s.defaultText !== undefined) continue;
      expect(s.parser.parse(defaultText(s), s.env), s.flag).toEqual(s.default);
    }
  });

  it('rejects a malformed duration naming the setting', () => {
    expect(() => loadConfig({}, { MAILVERDICT_RESULT_RETENTION: 'soon' })).toThrow(
      /MAILVERDICT_RESULT_RETENTION/,
    );
  });

  it('prefers a flag over the environment over the default', () => {
    expect(loadConfig({}, {}).port).toBe(8080);
    expect(loadConfig({}, { MAILVERDICT_PORT: '9000' }).port).toBe(9000);
    expect(loadConfig({ port: '9100' }, { MAILVERDICT_PORT: '9000' }).port).toBe(9100);
  });

  it('rejects an out-of-range port with a ConfigError', () => {
    expect(() => loadConfig({}, { MAILVERDICT_PORT: '70000' })).toThrow(ConfigError);
  });

  it('returns a frozen object', () => {
    const c = loadConfig({}, {});
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.engine.smtp)).toBe(true);
  });

  it('stops on a bad store URL naming the setting, without echoing its password', () => {
    expect(() => loadConfig({}, { MAILVERDICT_DATABASE_URL: 'mysql://db/x' })).toThrow(
      /MAILVERDICT_DATABASE_URL/,
    );
    let message = '';
    try {
      loadConfig({ databaseUrl: 'postgres://app:s3cret@db:notaport/x' }, {});
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('--database-url');
    expect(message).not.toContain('s3cret');
    expect(() => loadConfig({}, { MAILVERDICT_REDIS_URL: 'http://cache:6379' })).toThrow(
      /MAILVERDICT_REDIS_URL/,
    );
  });

  it('rejects a non-socks proxy URL', () => {
    expect(() => loadConfig({}, { MAILVERDICT_PROXIES: 'http://proxy:3128' })).toThrow(/--proxy/);
  });

  it('reads egress source addresses, each optionally with its own HELO name, from the flag or the environment', () => {
    expect(loadConfig({}, {}).engine.smtp.sourceAddresses).toEqual([]);
    const env = {
      MAILVERDICT_SOURCE_ADDRESSES: '192.0.2.10=mx1.example.net, 192.0.2.11,2001:db8::5=mx3.example.net',
    };
    expect(loadConfig({}, env).engine.smtp.sourceAddresses).toEqual([
      '192.0.2.10=mx1.example.net',
      '192.0.2.11',
      '2001:db8::5=mx3.example.net',
    ]);
    expect(
      loadConfig({ sourceAddress: ['127.0.0.2', '127.0.0.3=b.test'] }, env).engine.smtp.sourceAddresses,
    ).toEqual(['127.0.0.2', '127.0.0.3=b.test']);
  });

  it('stops start-up on a source address that is not an IP address or a HELO name that is not a host name, naming the setting', () => {
    expect(() => loadConfig({}, { MAILVERDICT_SOURCE_ADDRESSES: '192.0.2.10,mail.example.net' })).toThrow(
      /MAILVERDICT_SOURCE_ADDRESSES: "mail.example.net" is not an IP address/,
    );
    expect(() => loadConfig({ sourceAddress: ['192.0.2.10=bad name!'] }, {})).toThrow(
      /--source-address: .*is not a host name/,
    );
  });

  it('does not let the service probe internal mail hosts unless told to', () => {
    expect(loadConfig({}, {}).engine.dns.allowInternalTargets).toBe(false);
    expect(loadConfig({ allowInternalTargets: true }, {}).engine.dns.allowInternalTargets).toBe(true);
    expect(
      loadConfig({}, { MAILVERDICT_ALLOW_INTERNAL_TARGETS: 'true' }).engine.dns.allowInternalTargets,
    ).toBe(true);
  });

  it('refuses --trust-proxy true and the bare flag, saying to set a hop count or the proxies’ addresses', () => {
    // Issue 26: `true` believes the left-most X-Forwarded-For entry, which the client writes.
    for (const value of ['true', true, 'yes'])
      expect(() => loadConfig({ trustProxy: value }, {})).toThrow(
        /--trust-proxy .*refused: .*client writes; set --trust-proxy to the number of proxies .*--trust-proxy 1 .*addresses\/CIDRs/,
      );
    expect(() => loadConfig({}, { MAILVERDICT_TRUST_PROXY: 'true' })).toThrow(/MAILVERDICT_TRUST_PROXY=1/);
  });

  it('takes --trust-proxy as a hop count or a list of addresses and CIDRs, and refuses anything else', () => {
    expect(loadConfig({}, {}).trustProxy).toBe(false);
    expect(loadConfig({ trustProxy: 'false' }, {}).trustProxy).toBe(false);
    expect(loadConfig({ trustProxy: '2' }, {}).trustProxy).toBe(2);
    expect(
      loadConfig({}, { MAILVERDICT_TRUST_PROXY: '10.0.0.5, 10.0.1.0/24,2001:db8::/32,loopback' }).trustProxy,
    ).toEqual(['10.0.0.5', '10.0.1.0/24', '2001:db8::/32', 'loopback']);
    for (const bad of ['proxy.example.net', '10.0.0.0/33', '10.0.0', '999.1.1.1'])
      expect(() => loadConfig({ trustProxy: bad }, {}), bad).toThrow(ConfigError);
  });
});
