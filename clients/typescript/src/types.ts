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

export type OutcomesReport = Json<paths['/v1/outcomes']['post']['requestBody']>;
/** One delivery outcome of `OutcomesReport` (docs/outcomes.md). */
export type OutcomeEvent = OutcomesReport['events'][number];
export type OutcomesTaken = Json<paths['/v1/outcomes']['post']['responses'][200]>;
export type OutcomesErased = Json<paths['/v1/outcomes']['delete']['responses'][200]>;
/** GET /v1/account/outcomes: how accurate the verdicts were (docs/outcomes.md, "How accurate are we?"). */
export type OutcomesAccuracy = Json<paths['/v1/account/outcomes']['get']['responses'][200]>;
export type FilterList = Json<paths['/v1/filters']['get']['responses'][200]>;
/** An allow or block filter as `GET /v1/filters` lists it (no `request_id`). */
export type FilterItem = FilterList['filters'][number];
export type FilterRequest = Json<paths['/v1/filters']['post']['requestBody']>;
export type Filter = Json<paths['/v1/filters']['post']['responses'][200]>;
export type FilterDeleted = Json<paths['/v1/filters/{id}']['delete']['responses'][200]>;
export type OutcomeSourceList = Json<paths['/v1/outcome-sources']['get']['responses'][200]>;
/** A mail system's webhook as `GET /v1/outcome-sources` lists it (never its URL). */
export type OutcomeSourceItem = OutcomeSourceList['sources'][number];
export type OutcomeSourceRequest = Json<paths['/v1/outcome-sources']['post']['requestBody']>;
/** The new source with its webhook URL (and Postmark's basic-auth credentials), shown this once. */
export type OutcomeSourceCreated = Json<paths['/v1/outcome-sources']['post']['responses'][200]>;
export type OutcomeSourceDeleted = Json<paths['/v1/outcome-sources/{id}']['delete']['responses'][200]>;
