/**
 * The ceiling of bench/api.bench.ts: a bare Fastify app in its own process answering one route
 * with a constant JSON body. Prints its URL on stdout, exits on SIGTERM.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const body = { ok: true, status: 'deliverable', score: 99 };
app.get('/ceiling', async () => body);
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
