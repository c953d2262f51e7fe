/** The baseline of bench/auth-me.ts: a bare Fastify route answering the same JSON as GET /api/auth/me. */
import Fastify from 'fastify';

const body = JSON.parse(process.env.BARE_BODY ?? '{}');
const app = Fastify({ logger: false });
app.get('/api/auth/me', async () => body);
app.get('/readyz', async () => ({ ok: true }));
await app.listen({ port: Number(process.env.PORT), host: process.env.HOST ?? '127.0.0.1' });
const close = () => void app.close().then(() => process.exit(0));
process.on('SIGTERM', close);
process.on('SIGINT', close);
