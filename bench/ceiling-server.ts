/**
 * The ceiling of bench/api.bench.ts: a bare Fastify app in its own process answering one route
 * with a constant JSON body. Prints its URL on stdout, exits on SIGTERM.
 *
 * It also answers POST /ceiling with the same constant after reading and validating a JSON body
 * against the schema of POST /v1/verify's body: not the ceiling (the ratio is against GET), but
 * the part of the gap that a route with a JSON body costs in Fastify alone.
 */
import Fastify from 'fastify';
import { verifyBodySchema } from '../src/api/schemas.js';

const app = Fastify({ logger: false });
const body = { ok: true, status: 'deliverable', score: 99 };
app.get('/ceiling', async () => body);
app.post('/ceiling', { schema: { body: verifyBodySchema } }, async () => body);
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
