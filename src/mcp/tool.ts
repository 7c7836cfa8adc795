/** What every MCP tool is: its definition, its answer, and its own input errors. */
import type { ApiClient, Json } from './api-client.js';
import type { JsonSchema } from './openapi-schemas.js';

/** What a tool answers: `text` for the reader, `data` the structured content. */
export interface ToolAnswer {
  text: string;
  data: Json;
}

/** Invalid arguments of a tool's own (the API checks the rest and answers `invalid_request` too). */
export class ToolInputError extends Error {
  override readonly name = 'ToolInputError';
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  /** The API operation the tool calls. */
  operationId: string;
  inputSchema: JsonSchema & { type: 'object' };
  annotations: {
    readOnlyHint: boolean;
    idempotentHint: boolean;
    destructiveHint: boolean;
    openWorldHint: boolean;
  };
  run(api: ApiClient, args: Json): Promise<ToolAnswer>;
}

/** A value of the API's JSON as text. */
export const str = (v: unknown): string =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
    ? String(v)
    : (JSON.stringify(v) ?? '');
