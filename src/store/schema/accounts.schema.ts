// Filled by the API issue (accounts, plans, keys, usage).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface AccountTables {}
