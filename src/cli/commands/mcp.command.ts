/**
 * `mailverdict mcp`: an MCP server over stdio (src/mcp/, docs/mcp.md) for AI agents and desktop
 * assistants, calling the API of the mailverdict server at MAILVERDICT_URL with the key in
 * MAILVERDICT_API_KEY. stdout carries the protocol only; one line on stderr says where it calls,
 * never the key. Ends when the client closes stdin (exit 0); 2 when the key or the URL is missing
 * or bad.
 */
import type { Command } from 'commander';
import { ConfigError, loadConfig } from '../../config.js';
import { addSettingsOptions, settingsFlags } from '../cli-support.js';

export function registerMcpCommand(program: Command): void {
  addSettingsOptions(
    program
      .command('mcp')
      .description(
        'Serve MCP tools over stdio (verify, batch jobs, usage) that call a mailverdict server with an API key (docs/mcp.md).',
      ),
  ).action(async (flags: Record<string, unknown>, command: Command) => {
    await runMcp(flags, command.parent?.version() ?? '0.0.0');
  });
}

/** What a key is, for the start-up line: its kind, never a character of its secret part. */
function keyKind(key: string): string {
  const kind = /^svc_(live|test)_/.exec(key)?.[1];
  return kind === undefined ? 'an API key' : `a ${kind} key`;
}

async function runMcp(flags: Record<string, unknown>, version: string): Promise<void> {
  const { mcp } = loadConfig(settingsFlags(flags));
  if (mcp.apiKey === null)
    throw new ConfigError(
      'MAILVERDICT_API_KEY (or --api-key) must be set: the API key the tools call the server with (docs/mcp.md)',
    );
  // Loaded here, not with the program: every other command would pay for importing the SDK (0.66 s
  // measured on this 2-core machine under load).
  const [{ StdioServerTransport }, { createApiClient }, { readOpenApiDocument }, { serveMcp }] =
    await Promise.all([
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('../../mcp/api-client.js'),
      import('../../mcp/openapi-schemas.js'),
      import('../../mcp/server.js'),
    ]);
  const api = createApiClient({ url: mcp.url, apiKey: mcp.apiKey });
  const transport = new StdioServerTransport();
  // The client ends the session by closing our stdin; the transport does not notice by itself.
  process.stdin.once('end', () => void transport.close());
  process.stderr.write(
    `mailverdict mcp: serving tools over stdio, calling ${api.url} with ${keyKind(mcp.apiKey)}\n`,
  );
  await serveMcp(api, readOpenApiDocument(), version, transport);
}
