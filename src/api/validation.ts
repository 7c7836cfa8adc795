import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Request bodies are validated without type coercion ("300" and 300.5 are not an integer
 * timeout_ms); query strings and path parameters keep Fastify's coercion, since they are text.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const factory = AjvCompiler();
  const strict = factory(
    {},
    { customOptions: { coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false } },
  );
  const coercing = factory(
    {},
    { customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false } },
  );
  return (route) => (route.httpPart === 'body' ? strict(route) : coercing(route));
}
