/** API keys of the signed-in member's account (docs/dashboard.md, "API keys"). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  createKeyItem,
  listKeyItems,
  revokeAccountKey,
  rotateAccountKey,
} from '../../services/keys/account-keys.service.js';
import { CreatedKey, CreateKeyBody, IdParams, KeyItem, KeyList } from '../contract.js';
import { byMember } from '../audit-origin.js';
import type { DashboardDeps } from '../deps.js';
import { requireSession } from '../security.js';
import { loadWidgetAsset } from '../../services/keys/widget-asset.js';

export function keysRoutes(deps: DashboardDeps) {
  const { db, clock } = deps;
  const spend = { plans: deps.plans, defaults: deps.config.publishable };
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    // The widget's snippet for a publishable key (docs/widget.md): its URL and SRI hash.
    const widget = () => {
      const asset = loadWidgetAsset();
      return asset === null
        ? null
        : { url: `${deps.config.publicBaseUrl}/widget.js`, integrity: asset.integrity };
    };
    app.get('/keys', { schema: { response: { 200: KeyList } } }, async (request) => ({
      ...(await listKeyItems(db, spend, requireSession(request).accountId)),
      widget: widget(),
    }));

    app.post(
      '/keys',
      { schema: { body: CreateKeyBody, response: { 201: CreatedKey } } },
      async (request, reply) => {
        const session = requireSession(request);
        const created = await createKeyItem(
          db,
          clock,
          spend,
          session.accountId,
          request.body,
          byMember(request, session),
        );
        return reply.code(201).send(created);
      },
    );

    app.post(
      '/keys/:id/revoke',
      { schema: { params: IdParams, response: { 200: KeyItem } } },
      async (request) => {
        const session = requireSession(request);
        return revokeAccountKey(
          db,
          clock,
          spend,
          session.accountId,
          request.params.id,
          byMember(request, session),
        );
      },
    );

    app.post(
      '/keys/:id/rotate',
      { schema: { params: IdParams, response: { 201: CreatedKey } } },
      async (request, reply) => {
        const session = requireSession(request);
        const created = await rotateAccountKey(
          db,
          clock,
          spend,
          session.accountId,
          request.params.id,
          byMember(request, session),
        );
        return reply.code(201).send(created);
      },
    );
  };
}
