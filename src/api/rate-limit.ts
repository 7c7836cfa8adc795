/** The RateLimit headers of a rate-limit decision (src/services/usage/rate-limit.ts). */
import type { FastifyReply } from 'fastify';
import type { RateLimitDecision } from '../services/usage/rate-limit.js';

/**
 * Sets the IETF draft RateLimit headers (draft-ietf-httpapi-ratelimit-headers) of a decision on a
 * reply.
 */
export function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision): void {
  void reply
    .header('ratelimit-policy', `"default";q=${decision.limit};w=1`)
    .header('ratelimit', `"default";r=${decision.remaining};t=${decision.resetSeconds}`);
}
