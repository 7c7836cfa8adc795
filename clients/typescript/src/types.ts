/** Names for the API's bodies, taken from the generated OpenAPI types (src/generated/openapi.ts). */
import type { paths } from './generated/openapi.js';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

export type VerifyRequest = Json<paths['/v1/verify']['post']['requestBody']>;
export type VerifyResult = Json<paths['/v1/verify']['post']['responses'][200]>;
export type Usage = Json<paths['/v1/account/usage']['get']['responses'][200]>;
export type BatchRequest = Json<paths['/v1/verify/batch']['post']['requestBody']>;
export type BatchAccepted = Json<paths['/v1/verify/batch']['post']['responses'][202]>;
export type Job = Json<paths['/v1/jobs/{id}']['get']['responses'][200]>;
export type JobStatus = Job['status'];
export type JobList = Json<paths['/v1/jobs']['get']['responses'][200]>;
/** A job as `GET /v1/jobs` lists it (no `request_id`). */
export type JobSummary = JobList['jobs'][number];
export type JobListQuery = NonNullable<paths['/v1/jobs']['get']['parameters']['query']>;
export type JobResults = Json<paths['/v1/jobs/{id}/results']['get']['responses'][200]>;
/** One row of a job's results, in submission order (`index` is the position in `emails`). */
export type ResultRow = JobResults['results'][number];
