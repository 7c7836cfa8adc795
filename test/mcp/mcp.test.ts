/**
 * `mailverdict mcp` through the official SDK's client: the command spawned over stdio
 * (StdioClientTransport), calling a real `mailverdict serve` on loopback with the bootstrap keys
 * and a key of a second account that has no quota and only the `verify` scope.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, cliCommand, runCli, spawnServe, type Served } from '../kit/cli.js';
import * as corpus from '../kit/bounce-corpus.js';
import { waitFor } from '../kit/wait-for.js';

interface Connected {
  client: Client;
  stderr: () => string;
  close: () => Promise<void>;
}

const doc = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content: Record<string, { schema: object }> };
        parameters?: { name: string; in: string; schema: object; description?: string }[];
      }
    >
  >;
};
const bodySchema = (path: string) => doc.paths[path]!.post!.requestBody!.content['application/json']!.schema;

let server: Served;
let dataDir: string;
let limitedKey: string;
/** Every text a tool answered and every line the command logged, to look for keys in. */
const outputs: string[] = [];
const opened: Connected[] = [];

/** Spawns `mailverdict mcp` with the key and URL in its environment and connects the SDK's client. */
async function connect(key: string, url = server.url): Promise<Connected> {
  const cli = cliCommand(['mcp']);
  const transport = new StdioClientTransport({
    ...cli,
    env: cleanEnv({ MAILVERDICT_URL: url, MAILVERDICT_API_KEY: key }) as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'mailverdict-test', version: '1.0.0' });
  await client.connect(transport);
  const connected = {
    client,
    stderr: () => stderr,
    close: async () => {
      await client.close();
      outputs.push(stderr);
    },
  };
  opened.push(connected);
  return connected;
}

async function callTool(
  c: Connected,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  const result = (await c.client.callTool({ name, arguments: args })) as CallToolResult;
  for (const part of result.content) if (part.type === 'text') outputs.push(part.text);
  outputs.push(JSON.stringify(result.structuredContent ?? null));
  return result;
}

const text = (r: CallToolResult) => r.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n');

describe('mailverdict mcp', () => {
  let agent: Connected;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-mcp-'));
    server = await spawnServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], {
      env: cleanEnv({
        MAILVERDICT_LOG_LEVEL: 'warn',
        // A customer's plan with a quota to report (a first start's own is `unlimited`).
        MAILVERDICT_BOOTSTRAP_PLAN: 'free',
        MAILVERDICT_PLANS: '{"free":{"rate_limit_per_second":1000}}',
      }),
    });
    const account = await runCli(
      [
        'accounts',
        'create',
        '--email',
        'agent@shop.example',
        '--quota-limit',
        '0',
        '--data-dir',
        dataDir,
        '--json',
      ],
      cleanEnv(),
    );
    const accountId = (JSON.parse(account.stdout) as { id: string }).id;
    const key = await runCli(
      [
        'keys',
        'create',
        '--account',
        accountId,
        '--kind',
        'live',
        '--scopes',
        'verify',
        '--data-dir',
        dataDir,
        '--json',
      ],
      cleanEnv(),
    );
    limitedKey = (JSON.parse(key.stdout) as { key: string }).key;
    agent = await connect(server.keys!.test_key);
  });

  afterAll(async () => {
    for (const c of opened) await c.client.close().catch(() => undefined);
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists its twelve tools, each with the input schema of its operation in docs/openapi.json', async () => {
    const { tools } = await agent.client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual([
      'add_filter',
      'delete_filter',
      'erase_outcomes',
      'get_job',
      'get_job_results',
      'get_outcomes_report',
      'get_usage',
      'list_filters',
      'report_bounce_message',
      'report_outcomes',
      'submit_batch',
      'verify_email',
    ]);
    expect(byName.report_outcomes!.inputSchema).toEqual(bodySchema('/v1/outcomes'));
    expect(byName.add_filter!.inputSchema).toEqual(bodySchema('/v1/filters'));
    const email = doc.paths['/v1/outcomes']!.delete!.parameters!.find((p) => p.name === 'email')!;
    expect(byName.erase_outcomes!.inputSchema).toEqual({
      type: 'object',
      properties: { email: { ...email.schema, description: email.description } },
      required: ['email'],
    });
    const filterId = doc.paths['/v1/filters/{id}']!.delete!.parameters!.find((p) => p.name === 'id')!;
    expect(byName.delete_filter!.inputSchema.properties!.id).toMatchObject(filterId.schema);
    expect(byName.list_filters!.annotations?.readOnlyHint).toBe(true);
    expect(byName.erase_outcomes!.annotations?.destructiveHint).toBe(true);
    expect(byName.delete_filter!.annotations?.destructiveHint).toBe(true);
    expect(byName.verify_email!.inputSchema).toEqual(bodySchema('/v1/verify'));
    const batch = bodySchema('/v1/verify/batch') as { properties: object };
    expect(byName.submit_batch!.inputSchema.properties).toMatchObject(batch.properties);
    const header = doc.paths['/v1/verify/batch']!.post!.parameters!.find(
      (p) => p.name === 'idempotency-key',
    )!;
    expect(byName.submit_batch!.inputSchema.properties!.idempotency_key).toEqual({
      ...header.schema,
      description: header.description,
    });
    const id = doc.paths['/v1/jobs/{id}']!.get!.parameters!.find((p) => p.name === 'id')!;
    expect(byName.get_job!.inputSchema).toEqual({
      type: 'object',
      properties: { id: { ...id.schema, description: id.description } },
      required: ['id'],
    });
    expect(byName.get_job!.annotations?.readOnlyHint).toBe(true);
    // docs/mcp.md lists each tool in its table.
    const page = readFileSync(new URL('../../docs/mcp.md', import.meta.url), 'utf8');
    for (const name of Object.keys(byName)) expect(page).toMatch(new RegExp(`^\\| \`${name}\` \\|`, 'm'));
    expect(byName.verify_email!.annotations?.readOnlyHint).toBe(false);
  });

  it('verify_email answers the verdict in a line and the API result as JSON', async () => {
    const result = await callTool(agent, 'verify_email', {
      email: 'anna@valid.example.com',
      include_checks: false,
    });
    expect(result.isError).toBeFalsy();
    expect(result.content[0]).toEqual({
      type: 'text',
      text: expect.stringMatching(
        /^anna@valid\.example\.com: deliverable \(score 99\); no reason against it;/,
      ),
    });
    expect(result.structuredContent).toMatchObject({
      email: 'anna@valid.example.com',
      status: 'deliverable',
      checks: {},
    });
    expect(JSON.parse((result.content[1] as { text: string }).text)).toEqual(result.structuredContent);
  });

  it('submits a batch, follows the job to its end and reads its results page by page', async () => {
    const emails = [
      'a@valid.example.com',
      'b@invalid.example.com',
      'not an address',
      'c@valid.example.com',
      'd@valid.example.com',
    ];
    const submitted = await callTool(agent, 'submit_batch', {
      emails,
      notify_email: false,
      idempotency_key: 'mcp-1',
    });
    expect(submitted.isError).toBeFalsy();
    const jobId = (submitted.structuredContent as { job_id: string }).job_id;
    expect(text(submitted)).toContain(`Job ${jobId} accepted: 5 addresses`);
    // The same idempotency key and body: the same job, not a second one.
    const again = await callTool(agent, 'submit_batch', {
      emails,
      notify_email: false,
      idempotency_key: 'mcp-1',
    });
    expect((again.structuredContent as { job_id: string }).job_id).toBe(jobId);

    const done = await waitFor(
      'the job completes',
      async () => {
        const job = await callTool(agent, 'get_job', { id: jobId });
        return (job.structuredContent as { status: string }).status === 'completed' ? job : undefined;
      },
      60_000,
      200,
    );
    expect(text(done)).toContain(`Job ${jobId} completed: 5 addresses`);

    const pages: { rows: { index: number; email: string }[]; next_offset: number | null }[] = [];
    let offset: number | null = 0;
    while (offset !== null && pages.length < 5) {
      const page = await callTool(agent, 'get_job_results', { id: jobId, offset, limit: 2 });
      expect(page.isError).toBeFalsy();
      pages.push(page.structuredContent as (typeof pages)[number]);
      offset = pages.at(-1)!.next_offset;
    }
    expect(pages.map((p) => p.next_offset)).toEqual([2, 4, null]);
    expect(pages.flatMap((p) => p.rows.map((r) => [r.index, r.email]))).toEqual(emails.map((e, i) => [i, e]));
    const last = await callTool(agent, 'get_job_results', { id: jobId, offset: 4, limit: 2 });
    expect(text(last)).toMatch(
      /^Job job_\S+, rows 4 to 4:\n4\. d@valid\.example\.com: deliverable \(score \d+\)\nThat is the last row\./,
    );
  });

  it("get_usage answers the account's plan and quota", async () => {
    const usage = await callTool(agent, 'get_usage');
    expect(usage.isError).toBeFalsy();
    expect(usage.structuredContent).toMatchObject({ plan: 'free', quota: { used: expect.any(Number) } });
    expect(text(usage)).toMatch(/^Plan free: \d+ of \d+ verifications used this period/);
  });

  it("answers the API's refusals as tool errors with its code and message", async () => {
    const limited = await connect(limitedKey);
    const scope = await callTool(limited, 'get_usage');
    expect(scope.isError).toBe(true);
    expect(scope.structuredContent).toMatchObject({ error: 'insufficient_permissions', status: 403 });
    expect(text(scope)).toMatch(/^insufficient_permissions: .+ \(request req_\S+\)$/);
    const quota = await callTool(limited, 'verify_email', { email: 'anna@valid.example.com' });
    expect(quota.structuredContent).toMatchObject({ error: 'quota_exceeded', status: 429 });
    expect(text(quota)).toMatch(/^quota_exceeded: /);

    const invalid = await callTool(agent, 'verify_email', { email: 42 });
    expect(invalid.isError).toBe(true);
    expect(invalid.structuredContent).toMatchObject({ error: 'invalid_request', status: 422 });
    const missing = await callTool(agent, 'get_job', { id: 'job_00000000000000000000' });
    expect(missing.structuredContent).toMatchObject({ error: 'not_found', status: 404 });
    const page = await callTool(agent, 'get_job_results', { id: 'job_00000000000000000000', limit: 0 });
    expect(page.structuredContent).toMatchObject({ error: 'invalid_request' });
    expect(text(page)).toContain('limit must be an integer from 1 to 1000');
  });

  it('report_outcomes takes a hard bounce that suppresses the address at once, lists refusals; erase_outcomes forgets it', async () => {
    const live = await connect(server.keys!.live_key);
    const bounced = 'gone@bounced.mcp.test';
    const reported = await callTool(live, 'report_outcomes', {
      events: [
        { email: bounced, type: 'hard_bounce', at: '2026-01-05T08:00:00Z', detail: '550 5.1.1 user unknown' },
        { email: 'not an address', type: 'hard_bounce' },
        { email: bounced, type: 'bounced_maybe' },
      ],
    });
    expect(reported.isError).toBeFalsy();
    expect(reported.structuredContent).toMatchObject({
      taken: 1,
      duplicates: 0,
      refused: 2,
      refusals: [
        { index: 1, reason: 'invalid_email' },
        { index: 2, reason: 'invalid_type' },
      ],
    });
    expect(text(reported)).toMatch(
      /^Taken 1 event \(0 already held\), refused 2\.\nEvent 1 refused, invalid_email: .+\nEvent 2 refused, invalid_type: unknown type/,
    );
    // The same event again: held already, nothing stored twice.
    const again = await callTool(live, 'report_outcomes', {
      events: [{ email: bounced, type: 'hard_bounce', at: '2026-01-05T08:00:00Z' }],
    });
    expect(again.structuredContent).toMatchObject({ taken: 1, duplicates: 1, refused: 0 });

    // Suppressed: decided without any network check.
    const verdict = await callTool(live, 'verify_email', { email: bounced });
    expect(verdict.structuredContent).toMatchObject({
      status: 'undeliverable',
      reason: 'previously_bounced',
    });

    const erased = await callTool(live, 'erase_outcomes', { email: bounced.toUpperCase() });
    expect(erased.isError).toBeFalsy();
    expect(erased.structuredContent).toMatchObject({ deleted: 1 });
    expect(text(erased)).toMatch(/^Erased 1 event of the address, and its cached verification\./);
    expect((await callTool(live, 'erase_outcomes', { email: bounced })).structuredContent).toMatchObject({
      deleted: 0,
    });
    const malformed = await callTool(live, 'erase_outcomes', { email: 'not an address' });
    expect(malformed.structuredContent).toMatchObject({ error: 'invalid_email_format', status: 422 });
    const missing = await callTool(live, 'erase_outcomes', {});
    expect(missing.structuredContent).toMatchObject({ error: 'invalid_request' });
    expect(text(missing)).toContain('email must be the address to forget');
  });

  it('report_bounce_message reads a raw bounce into events that suppress at once, and refuses a message that is no bounce', async () => {
    const live = await connect(server.keys!.live_key);
    const gone = 'left@bounced-message.mcp.test';
    const bounce = corpus.postfixHardBounce({ rcpt: gone, messageId: 'mcp-1@sender.example' });
    const reported = await callTool(live, 'report_bounce_message', { message: bounce });
    expect(reported.isError).toBeFalsy();
    expect(reported.structuredContent).toMatchObject({
      kind: 'dsn',
      taken: 1,
      duplicates: 0,
      events: [{ email: gone, type: 'hard_bounce', status: '5.1.1' }],
    });
    expect(text(reported)).toMatch(/^A delivery status notification: Taken 1 event/);
    expect(text(reported)).toContain(`- ${gone}: hard_bounce (5.1.1)`);
    // The same message again stores nothing twice.
    expect(
      (await callTool(live, 'report_bounce_message', { message: bounce })).structuredContent,
    ).toMatchObject({
      taken: 1,
      duplicates: 1,
    });
    expect((await callTool(live, 'verify_email', { email: gone })).structuredContent).toMatchObject({
      status: 'undeliverable',
      reason: 'previously_bounced',
    });
    const policy = await callTool(live, 'report_bounce_message', {
      message: corpus.postfixPolicyBounce({ rcpt: 'kept@bounced-message.mcp.test' }),
    });
    expect(policy.structuredContent).toMatchObject({ taken: 0, ignored: [{ reason: 'sender_policy' }] });
    const letter = await callTool(live, 'report_bounce_message', {
      message: corpus.notABounce({ rcpt: 'friend@bounced-message.mcp.test' }),
    });
    expect(letter.structuredContent).toMatchObject({ error: 'not_a_bounce', status: 422 });
  });

  it('get_outcomes_report says how many addresses of each verdict bounced, with the counts behind each rate', async () => {
    const live = await connect(server.keys!.live_key);
    const report = await callTool(live, 'get_outcomes_report', {});
    expect(report.isError).toBeFalsy();
    expect(report.structuredContent).toMatchObject({
      totals: { verified: expect.any(Number), sent: expect.any(Number), hard_bounced: expect.any(Number) },
      reliability: expect.any(Array),
    });
    expect(text(report)).toMatch(
      /^(Of the \d+ addresses called deliverable|From .+: no address called deliverable)/,
    );
    expect(text(report)).toMatch(/\nAll verdicts: \d+ addresses verified, \d+ sent to, \d+ hard bounced/);
    const period = await callTool(live, 'get_outcomes_report', {
      from: '2026-01-01T00:00:00Z',
      to: '2026-01-31T00:00:00Z',
    });
    expect(period.structuredContent).toMatchObject({
      from: '2026-01-01T00:00:00.000Z',
      totals: { verified: 0, sent: 0, bounce_rate: null },
    });
    const bad = await callTool(live, 'get_outcomes_report', { from: 'last tuesday' });
    expect(bad.structuredContent).toMatchObject({ error: 'invalid_request', status: 422 });
  });

  it('add_filter, list_filters and delete_filter keep the filters that decide verifications before any network check', async () => {
    const live = await connect(server.keys!.live_key);
    const empty = await callTool(live, 'list_filters');
    expect(empty.structuredContent).toMatchObject({ filters: [] });
    expect(text(empty)).toMatch(/^The account has no filters/);

    const block = await callTool(live, 'add_filter', {
      action: 'block',
      match: 'domain',
      value: '@Blocked.MCP.test.',
    });
    expect(block.isError).toBeFalsy();
    const blockId = (block.structuredContent as { id: string }).id;
    expect(block.structuredContent).toMatchObject({
      action: 'block',
      match: 'domain',
      value: 'blocked.mcp.test',
    });
    expect(text(block)).toMatch(
      new RegExp(
        `^Filter ${blockId}: block domain blocked\\.mcp\\.test\\. Live verifications it matches now answer undeliverable / blocked_by_filter`,
      ),
    );
    const allow = await callTool(live, 'add_filter', {
      action: 'allow',
      match: 'email',
      value: 'Vip@Partner.MCP.test',
    });
    const allowId = (allow.structuredContent as { id: string }).id;

    const listed = await callTool(live, 'list_filters');
    expect((listed.content[0] as { text: string }).text).toBe(
      `2 filters, oldest first:\n- block domain blocked.mcp.test (${blockId})\n- allow email vip@partner.mcp.test (${allowId})`,
    );
    expect(
      (await callTool(live, 'verify_email', { email: 'ann@mail.blocked.mcp.test' })).structuredContent,
    ).toMatchObject({
      status: 'undeliverable',
      reason: 'blocked_by_filter',
      checks: { filter: { id: blockId } },
    });
    expect(
      (await callTool(live, 'verify_email', { email: 'VIP@partner.mcp.test' })).structuredContent,
    ).toMatchObject({ status: 'deliverable', reason: 'allowed_by_filter' });

    const bad = await callTool(live, 'add_filter', { action: 'block', match: 'tld', value: 'co.uk' });
    expect(bad.structuredContent).toMatchObject({ error: 'invalid_request', status: 422 });
    expect(text(bad)).toContain('a top-level domain is one label');

    const deleted = await callTool(live, 'delete_filter', { id: blockId });
    expect(deleted.structuredContent).toMatchObject({ id: blockId, deleted: true });
    expect((deleted.content[0] as { text: string }).text).toBe(`Filter ${blockId} deleted.`);
    expect((await callTool(live, 'delete_filter', { id: blockId })).structuredContent).toMatchObject({
      error: 'not_found',
      status: 404,
    });
    expect((await callTool(live, 'list_filters')).structuredContent).toMatchObject({
      filters: [{ id: allowId }],
    });
    await callTool(live, 'delete_filter', { id: allowId });

    // A key without filters:write (nor outcomes:write) is refused by the API.
    const limited = await connect(limitedKey);
    const refused = await callTool(limited, 'add_filter', {
      action: 'block',
      match: 'domain',
      value: 'x.test',
    });
    expect(refused.structuredContent).toMatchObject({ error: 'insufficient_permissions', status: 403 });
    const report = await callTool(limited, 'report_outcomes', {
      events: [{ email: 'a@x.test', type: 'delivered' }],
    });
    expect(report.structuredContent).toMatchObject({ error: 'insufficient_permissions', status: 403 });
  });

  it('answers connection_failed as a tool error when the server cannot be reached', async () => {
    // Port 9 (discard) on loopback: nothing listens there in the test environment.
    const nowhere = await connect(server.keys!.test_key, 'http://127.0.0.1:9');
    const result = await callTool(nowhere, 'get_usage');
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: 'connection_failed' });
    expect(text(result)).toContain('could not reach the mailverdict server at http://127.0.0.1:9');
  });

  it('refuses to start without a key, naming MAILVERDICT_API_KEY (exit 2)', async () => {
    const res = await runCli(['mcp'], cleanEnv({ MAILVERDICT_URL: server.url }));
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('MAILVERDICT_API_KEY');
  });

  it('never shows a key: not in a tool answer, not in its log', async () => {
    for (const c of opened) await c.close();
    const logs = opened.map((c) => c.stderr()).join('');
    expect(logs).toContain(`calling ${server.url} with a test key`);
    expect(logs).toContain('with a live key');
    expect(outputs.length).toBeGreaterThan(20);
    for (const key of [server.keys!.test_key, limitedKey]) {
      const secret = key.slice('svc_live_'.length);
      expect(outputs.filter((o) => o.includes(secret))).toEqual([]);
    }
  });
});
