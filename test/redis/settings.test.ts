/** The Redis settings: --redis-url / MAILVERDICT_REDIS_URL and --redis-key-prefix. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createHarness } from '../kit/api-harness.js';

describe('--redis-url', () => {
  it('is absent by default, and keys then carry the prefix mailverdict:', () => {
    const config = loadConfig({}, {});
    expect(config.redisUrl).toBeNull();
    expect(config.redisKeyPrefix).toBe('mailverdict:');
  });

  it('takes redis:// and rediss:// URLs and a prefix, from a flag or the environment', () => {
    expect(loadConfig({ redisUrl: 'redis://127.0.0.1:6379/' }, {}).redisUrl).toBe('redis://127.0.0.1:6379');
    expect(loadConfig({}, { MAILVERDICT_REDIS_URL: 'rediss://:secret@cache.internal:6380/2' }).redisUrl).toBe(
      'rediss://:secret@cache.internal:6380/2',
    );
    expect(loadConfig({ redisKeyPrefix: 'staging:' }, {}).redisKeyPrefix).toBe('staging:');
    expect(loadConfig({}, { MAILVERDICT_REDIS_KEY_PREFIX: 'eu:' }).redisKeyPrefix).toBe('eu:');
  });

  it('stops start-up on a bad URL, naming the setting', () => {
    expect(() => loadConfig({ redisUrl: 'http://127.0.0.1:6379' }, {})).toThrow(
      '--redis-url must use redis: or rediss:, got "http:"',
    );
    expect(() => loadConfig({}, { MAILVERDICT_REDIS_URL: 'not a url' })).toThrow(
      'MAILVERDICT_REDIS_URL must be a URL',
    );
  });

  it('without it the runtime opens no Redis connection', async () => {
    const h = await createHarness();
    try {
      expect(h.runtime.redis).toBeNull();
    } finally {
      await h.close();
    }
  });
});
