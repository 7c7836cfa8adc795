/** The reduced answer of POST /v1/verify to a publishable key (docs/widget.md). */
import { Type } from '@sinclair/typebox';
import type { VerificationResult } from '../engine/types.js';
import { SUCCESS_HEADERS, verificationResultBody } from './schemas.js';

const full = verificationResultBody.properties;

/**
 * What a web page learns of an address: the verdict and the typo suggestion, nothing of the
 * domain's mail servers (no `checks`, `mx`, `catchAll` or timings).
 */
export const publishableResultSchema = Type.Object(
  {
    status: full.status,
    score: full.score,
    reason: full.reason,
    did_you_mean: full.did_you_mean,
    disposable: full.disposable,
    request_id: full.request_id,
  },
  {
    description: 'The result for a publishable key (docs/widget.md): the verdict only, no checks.',
    additionalProperties: false,
  },
);

/** The 200 of POST /v1/verify: the whole result for a secret key, the reduced one for a publishable key. */
export const verifyResponseSchema = Type.Union([verificationResultBody, publishableResultSchema], {
  description: 'The verification result (a publishable key gets the reduced one).',
  headers: SUCCESS_HEADERS,
});

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
