/**
 * The input schemas of the MCP tools, read from the API's OpenAPI document (docs/openapi.json,
 * shipped with the package and generated from the route schemas by `npm run openapi`): a tool takes
 * what its operation takes, so the two cannot drift apart.
 */
import { readFileSync } from 'node:fs';

/** docs/openapi.json of this package, from src/mcp (tsx) and dist/mcp alike. */
export const OPENAPI_DOCUMENT = new URL('../../docs/openapi.json', import.meta.url);

export type JsonSchema = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema: JsonSchema;
}

interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: Record<string, Record<string, unknown>>;
}

export function readOpenApiDocument(path: URL = OPENAPI_DOCUMENT): OpenApiDocument {
  return JSON.parse(readFileSync(path, 'utf8')) as OpenApiDocument;
}

function operation(doc: OpenApiDocument, operationId: string): Operation {
  for (const item of Object.values(doc.paths))
    for (const op of Object.values(item)) if (op.operationId === operationId) return op;
  throw new Error(`the OpenAPI document has no operation ${operationId}`);
}

/** `value` with every local `$ref` (`#/components/…`) replaced by what it points to. */
function dereference(doc: OpenApiDocument, value: unknown, depth = 0): unknown {
  if (depth > 32) throw new Error('the OpenAPI document nests $ref too deeply');
  if (Array.isArray(value)) return value.map((v) => dereference(doc, v, depth + 1));
  if (typeof value !== 'object' || value === null) return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const target = ref
      .slice(2)
      .split('/')
      .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], doc);
    if (target === undefined) throw new Error(`the OpenAPI document has no ${ref}`);
    return dereference(doc, target, depth + 1);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, dereference(doc, v, depth + 1)]));
}

/** The JSON body schema of an operation's request, dereferenced. */
export function requestBodySchema(doc: OpenApiDocument, operationId: string): JsonSchema {
  const schema = operation(doc, operationId).requestBody?.content['application/json']?.schema;
  if (schema === undefined) throw new Error(`${operationId} takes no JSON body`);
  return dereference(doc, schema) as JsonSchema;
}

/** The schema of one parameter of an operation, with the parameter's description. */
export function parameterSchema(
  doc: OpenApiDocument,
  operationId: string,
  where: Parameter['in'],
  name: string,
): JsonSchema {
  const parameter = operation(doc, operationId).parameters?.find(
    (p) => p.in === where && p.name.toLowerCase() === name.toLowerCase(),
  );
  if (parameter === undefined) throw new Error(`${operationId} has no ${where} parameter ${name}`);
  const schema = dereference(doc, parameter.schema) as JsonSchema;
  return parameter.description === undefined || schema.description !== undefined
    ? schema
    : { ...schema, description: parameter.description };
}
