/**
 * The MCP server of `mailverdict mcp` (docs/mcp.md): the tools of tools.ts over the official SDK,
 * each a call to a mailverdict server's API. An edge like the others, but one that talks HTTP to the
 * API rather than to the services, so that a key's scopes, quota and rate limit hold for an agent.
 *
 * The SDK's low-level `Server` rather than `McpServer`: McpServer takes Zod schemas, and the input
 * schemas here are the OpenAPI document's JSON schemas as they are.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { ApiCallError, type ApiClient } from './api-client.js';
import type { OpenApiDocument } from './openapi-schemas.js';
import { ToolInputError, toolDefinitions } from './tools.js';

export const MCP_SERVER_NAME = 'mailverdict';

const INSTRUCTIONS =
  'Verifies e-mail addresses with a mailverdict server. verify_email checks one address now; for many, ' +
  'submit_batch answers a job id, get_job tells when it has completed and get_job_results reads its rows ' +
  'a page at a time. get_usage tells how much of the quota is left. report_outcomes tells the server what ' +
  "the account's sends found (bounces, deliveries, complaints), erase_outcomes forgets an address, and " +
  'list_filters, add_filter and delete_filter keep the allow and block filters that decide verifications ' +
  "before any network check. Errors carry the API's code " +
  '(e.g. quota_exceeded, rate_limit_exceeded, insufficient_permissions) and message.';

/** A tool error an agent can read: the API's code and message (and when to retry). */
export function toolError(err: ApiCallError | ToolInputError): CallToolResult {
  const code = err instanceof ApiCallError ? err.code : 'invalid_request';
  const details: Record<string, unknown> = { error: code, message: err.message };
  const notes: string[] = [];
  if (err instanceof ApiCallError) {
    details.status = err.status;
    details.request_id = err.requestId;
    if (err.retryAfter !== null) {
      details.retry_after = err.retryAfter;
      notes.push(`retry after ${err.retryAfter} s`);
    }
    if (err.requestId !== null) notes.push(`request ${err.requestId}`);
  }
  return {
    isError: true,
    content: [
      { type: 'text', text: `${code}: ${err.message}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}` },
    ],
    structuredContent: details,
  };
}

export function createMcpServer(api: ApiClient, doc: OpenApiDocument, version: string): Server {
  const tools = toolDefinitions(doc);
  // Deprecated for the high-level API only (see the module comment).
  const server = new Server(
    { name: MCP_SERVER_NAME, version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map(({ name, title, description, inputSchema, annotations }) => ({
      name,
      title,
      description,
      inputSchema,
      annotations,
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `no tool ${request.params.name}`);
    try {
      const { text, data } = await tool.run(api, request.params.arguments ?? {});
      return {
        content: [
          { type: 'text', text },
          { type: 'text', text: JSON.stringify(data, null, 2) },
        ],
        structuredContent: data,
      };
    } catch (err) {
      if (err instanceof ApiCallError || err instanceof ToolInputError) return toolError(err);
      throw err;
    }
  });
  return server;
}

/** Serves the tools on `transport` (stdio for `mailverdict mcp`) until it closes. */
export async function serveMcp(
  api: ApiClient,
  doc: OpenApiDocument,
  version: string,
  transport: Transport,
): Promise<void> {
  const server = createMcpServer(api, doc, version);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  await server.connect(transport);
  await closed;
}
