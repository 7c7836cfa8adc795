/** The reduced answer of POST /v1/verify to a publishable key (docs/widget.md). */
import type { VerificationResult } from '../engine/types.js';
import { verificationResultSchema } from './schemas.js';

const full = verificationResultSchema.properties;

/**
 * What a web page learns of an address: the verdict and the typo suggestion, nothing of the
 * domain's mail servers (no `checks`, `mx`, `catchAll` or timings).
 */
export const publishableResultSchema = {
  type: 'object',
  description: 'The result for a publishable key (docs/widget.md): the verdict only, no checks.',
  required: ['status', 'score', 'reason', 'did_you_mean', 'disposable', 'request_id'],
  additionalProperties: false,
  properties: {
    status: full.status,
    score: full.score,
    reason: full.reason,
    did_you_mean: full.did_you_mean,
    disposable: full.disposable,
    request_id: full.request_id,
  },
} as const;

/** The whole result as a body schema: `headers` belongs to a response, not to a schema (OpenAPI). */
const { headers: successHeaders, ...verificationResultBody } = verificationResultSchema;

/** The 200 of POST /v1/verify: the whole result for a secret key, the reduced one for a publishable key. */
export const verifyResponseSchema = {
  description: 'The verification result (a publishable key gets the reduced one).',
  headers: successHeaders,
  anyOf: [verificationResultBody, publishableResultSchema],
} as const;

export function reducedResult(
  result: Pick<VerificationResult, 'status' | 'score' | 'reason' | 'did_you_mean' | 'disposable'>,
  requestId: string,
) {
  return {
    status: result.status,
    score: result.score,
    reason: result.reason,
    did_you_mean: result.did_you_mean,
    disposable: result.disposable,
    request_id: requestId,
  };
}
