// Filled by the batch issue (jobs, chunks, idempotency keys, webhook deliveries).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface JobTables {}
