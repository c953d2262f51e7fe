/** Baselines of bench/auth-me.ts and bench/cli-heartbeat.ts: bare Fastify routes answering the same JSON. */
import Fastify from 'fastify';

const body = JSON.parse(process.env.BARE_BODY ?? '{}');
const app = Fastify({ logger: false });
app.get('/api/auth/me', async () => body);
app.get('/readyz', async () => ({ ok: true }));
// The baseline of bench/cli-heartbeat.ts: a bare POST route parsing a JSON body and answering the same JSON.
app.post('/api/cli/heartbeat', async () => body);
await app.listen({ port: Number(process.env.PORT), host: process.env.HOST ?? '127.0.0.1' });
const close = () => void app.close().then(() => process.exit(0));
process.on('SIGTERM', close);
process.on('SIGINT', close);
