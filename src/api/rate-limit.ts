/**
 * Per-account request rate limit. Behind a small interface so that the scale-out issue can put
 * a shared (Redis) limiter in place of the in-memory one without touching the routes.
 *
 * The in-memory limiter is rate-limiter-flexible's RateLimiterMemory with a 1-second window: an
 * account has `per_second` requests each second, refilled whole when the second ends (a token
 * bucket whose refill is the window boundary). The IETF RateLimit headers describe exactly that
 * window (`w=1`).
 */
import type { FastifyReply } from 'fastify';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

export interface RateLimitDecision {
  allowed: boolean;
  /** The policy's quota per window (requests per second). */
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets (at least 1). */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Takes one request from `key`'s allowance of `perSecond`. */
  consume(key: string, perSecond: number): Promise<RateLimitDecision>;
}

function toDecision(res: RateLimiterRes, limit: number, allowed: boolean): RateLimitDecision {
  return {
    allowed,
    limit,
    remaining: allowed ? res.remainingPoints : 0,
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  };
}

/** An in-process limiter; one RateLimiterMemory per distinct per-second allowance. */
export function createMemoryRateLimiter(): RateLimiter {
  const limiters = new Map<number, RateLimiterMemory>();
  const limiterFor = (perSecond: number): RateLimiterMemory => {
    let limiter = limiters.get(perSecond);
    if (!limiter) {
      limiter = new RateLimiterMemory({ points: perSecond, duration: 1, keyPrefix: `rl${perSecond}` });
      limiters.set(perSecond, limiter);
    }
    return limiter;
  };
  return {
    async consume(key, perSecond) {
      try {
        return toDecision(await limiterFor(perSecond).consume(key, 1), perSecond, true);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return toDecision(rejection, perSecond, false);
        throw rejection;
      }
    },
  };
}

/**
 * Sets the IETF draft RateLimit headers (draft-ietf-httpapi-ratelimit-headers) of a decision on a
 * reply.
 */
export function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision): void {
  void reply
    .header('ratelimit-policy', `"default";q=${decision.limit};w=1`)
    .header('ratelimit', `"default";r=${decision.remaining};t=${decision.resetSeconds}`);
}
