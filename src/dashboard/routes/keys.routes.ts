/** API keys of the signed-in member's account (docs/dashboard.md, "API keys"). */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  createKeyItem,
  listKeyItems,
  revokeAccountKey,
  rotateAccountKey,
} from '../../services/dashboard-keys.service.js';
import { CreatedKey, CreateKeyBody, KeyItem, KeyList } from '../contract.js';
import type { DashboardDeps } from '../deps.js';
import { requireSession } from '../security.js';

const KeyParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export function keysRoutes(deps: DashboardDeps) {
  const { db, clock } = deps;
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/keys', { schema: { response: { 200: KeyList } } }, async (request) =>
      listKeyItems(db, requireSession(request).accountId),
    );

    app.post(
      '/keys',
      { schema: { body: CreateKeyBody, response: { 201: CreatedKey } } },
      async (request, reply) => {
        const created = await createKeyItem(
          db,
          clock,
          requireSession(request).accountId,
          request.body as CreateKeyBody,
        );
        return reply.code(201).send(created);
      },
    );

    app.post(
      '/keys/:id/revoke',
      { schema: { params: KeyParams, response: { 200: KeyItem } } },
      async (request) =>
        revokeAccountKey(db, clock, requireSession(request).accountId, (request.params as { id: string }).id),
    );

    app.post(
      '/keys/:id/rotate',
      { schema: { params: KeyParams, response: { 201: CreatedKey } } },
      async (request, reply) => {
        const created = await rotateAccountKey(
          db,
          clock,
          requireSession(request).accountId,
          (request.params as { id: string }).id,
        );
        return reply.code(201).send(created);
      },
    );
  };
}
