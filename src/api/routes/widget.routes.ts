/** GET /widget.js: the signup-form widget (docs/widget.md), for pages of any origin. */
import type { FastifyPluginAsync } from 'fastify';
import { AppError } from '../../errors.js';
import { loadWidgetAsset, WIDGET_CACHE_CONTROL } from '../../services/keys/widget-asset.js';

export function widgetRoutes(): FastifyPluginAsync {
  return async (app) => {
    app.get('/widget.js', { schema: { hide: true } }, async (request, reply) => {
      const asset = loadWidgetAsset();
      if (asset === null)
        throw new AppError('not_found', 'the widget is not built in this installation; run `npm run build`');
      void reply
        .header('cache-control', WIDGET_CACHE_CONTROL)
        .header('etag', asset.etag)
        // Any page may load it, with `integrity` (a CORS request: crossorigin="anonymous").
        .header('access-control-allow-origin', '*')
        .header('cross-origin-resource-policy', 'cross-origin')
        .header('x-content-type-options', 'nosniff');
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      return reply.type('text/javascript; charset=utf-8').send(asset.body);
    });
  };
}
