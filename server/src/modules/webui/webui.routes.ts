/**
 * The web UI: its pages (every page path answers the app's `index.html`, so a reload works), its built assets
 * and its translation catalogs. Any other path a browser asks for as a page answers the app with status 404 (the
 * app shows its own not-found page, see `pageFallback`). Paths under `/api/`, `/healthz` and `/readyz`, and paths
 * of a file (a dot in the last segment), are never the app: an unknown one keeps its 404 envelope.
 */
import fastifyStatic from '@fastify/static';
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Upstream, type PageFallback } from '../../http/errors.ts';
import { errors } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { WebUiService } from './webui.service.ts';

/** The app's page paths (its router's routes); `*` covers every deeper path. */
export const PAGE_PATHS = [
  '/',
  '/login',
  '/login/callback',
  '/register',
  '/verify-email',
  '/reset-password',
  '/forgot-password',
  '/waitlist',
  '/onboarding',
  '/setup',
  '/projects',
  '/projects/*',
  '/account',
  '/account/*',
  '/admin',
  '/admin/*',
  '/cli/link',
  '/help',
];

const NEVER_APP = /^\/(?:api|healthz|readyz|assets)(?:\/|$)/;

/**
 * The not-found handler's fallback for browsers: a `GET` or `HEAD` that accepts `text/html`, of a path that is
 * not the API's, a probe's, an asset's or a file's (no dot in its last segment), answers the built app with
 * status 404, so the app shows its own not-found page instead of the JSON envelope. False (the envelope) for
 * anything else, or when the app is not built.
 */
export function pageFallback(webui: Pick<WebUiService, 'built'>): PageFallback {
  return (req: FastifyRequest, reply: FastifyReply) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    if (!(req.headers.accept ?? '').includes('text/html')) return false;
    const path = req.url.split('?')[0]!;
    if (NEVER_APP.test(path) || path.slice(path.lastIndexOf('/') + 1).includes('.')) return false;
    if (!webui.built()) return false;
    void reply.status(404).header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
    return true;
  };
}

export function webUiRoutes(app: TypedApp, { webui }: { webui: WebUiService }): void {
  const hidden = { hide: true };
  // sendFile only (serve: false): it refuses paths leaving the root and serves the build's .br/.gz copies.
  app.register(fastifyStatic, { root: webui.distDir, serve: false, preCompressed: true });

  const notBuilt = () =>
    new Upstream(503, 'web_ui_not_built', 'The web UI has not been built yet: npm start builds it.');
  for (const url of PAGE_PATHS)
    app.get(url, { config: { auth: 'public' }, schema: hidden }, async (_req, reply) => {
      if (!webui.built()) throw notBuilt();
      // The page itself is never cached (it names the current assets); the assets are immutable.
      return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
    });
  app.get('/assets/*', { config: { auth: 'public' }, schema: hidden }, async (req, reply) => {
    const rest = (req.params as { '*': string })['*'];
    if (!/^[A-Za-z0-9._-]+$/.test(rest) || rest.startsWith('.')) return reply.callNotFound();
    return reply.sendFile(`assets/${rest}`, { immutable: true, maxAge: '365d' });
  });
  for (const file of ['favicon.svg', 'robots.txt'])
    app.get(`/${file}`, { config: { auth: 'public' }, schema: hidden }, async (_req, reply) => reply.sendFile(file));

  app.get(
    '/api/crm/i18n/web/:locale',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['web'],
        security: [],
        summary: "The web UI's translation catalog of a locale",
        description:
          'Parsed at request time from the gettext catalog `locales/<locale>/web.po` (cached until the file ' +
          'changes), so an accepted translation suggestion shows without a rebuild. Untranslated entries are ' +
          'left out: the UI shows their English msgid.',
        params: Type.Object({
          locale: Type.String({
            pattern: '^[a-z]{2}$',
            description: 'two lower-case letters, e.g. en or uk',
          }),
        }),
        response: {
          200: Type.Object({
            locale: Type.String(),
            messages: Type.Record(Type.String(), Type.String(), { description: 'msgid → translation' }),
            plurals: Type.Record(Type.String(), Type.Array(Type.String()), {
              description:
                "plural entries (msgid_plural): msgid → the locale's forms in its plural rule's order (en: one, other; uk: one, few, many)",
            }),
          }),
          ...errors(400, 404, 502),
        },
      },
    },
    async (req) => webui.catalog(req.params.locale),
  );
}
