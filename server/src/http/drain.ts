/**
 * Draining on close: once `app.close()` begins (SIGTERM/SIGINT, main.ts), Fastify stops accepting
 * connections and answers new requests 503, but a keep-alive connection whose request was still running when
 * the close began stays open after its answer, and the server's close waits for the client to drop it (undici
 * keeps one for the server's keep-alive hint, 72 s). So answers sent while closing carry `Connection: close`,
 * and idle connections (those of hijacked replies such as event streams, once they end) are closed every
 * 100 ms until the server has closed.
 */
import type { FastifyInstance } from 'fastify';

/** Install the drain hooks on `app` (before it is ready). */
export function installDrainOnClose(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    const reap = setInterval(() => app.server.closeIdleConnections(), 100);
    reap.unref();
    app.server.once('close', () => clearInterval(reap));
    done();
  });
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}
