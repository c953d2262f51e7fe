/**
 * The web UI as the service serves it: page paths answer the app (a reload works), built assets are served
 * immutable and pre-compressed, API paths keep their 404 envelope, and the catalogs come from the .po files.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, type TestApp } from '../../../test/helpers.ts';

const html = { accept: 'text/html,application/xhtml+xml' };

describe('web UI', () => {
  let t: TestApp;
  let missing: TestApp;
  const dist = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'web-dist-'));
  const INDEX =
    '<!doctype html><html><body><div id="root"></div><script src="/assets/app-abc123.js"></script></body></html>';
  const JS = `console.log(${JSON.stringify('x'.repeat(2000))});`;

  beforeAll(async () => {
    fs.mkdirSync(path.join(dist, 'assets'));
    fs.writeFileSync(path.join(dist, 'index.html'), INDEX);
    fs.writeFileSync(path.join(dist, 'assets', 'app-abc123.js'), JS);
    fs.writeFileSync(path.join(dist, 'assets', 'app-abc123.js.gz'), zlib.gzipSync(JS));
    fs.writeFileSync(path.join(dist, 'secret.txt'), 'not an asset');
    t = await buildTestApp({ env: { WEB_DIST_DIR: dist } });
    missing = await buildTestApp({ env: { WEB_DIST_DIR: path.join(dist, 'nothing-here'), TRUST_PROXY: '1' } });
  });
  afterAll(async () => {
    await t?.close();
    await missing?.close();
    fs.rmSync(dist, { recursive: true, force: true });
  });

  it('every page path, with its query and deeper segments, answers the app, never cached', async () => {
    for (const url of [
      '/',
      '/login',
      '/verify-email?token=abc',
      '/reset-password?token=abc',
      '/projects/market-study',
      '/projects/market-study/issues',
      '/account?tab=notifications',
      '/cli/link?code=ABCD-1234',
      '/admin/users',
    ]) {
      const res = await api(t.app, 'GET', url, { headers: html });
      expect(res.status, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.text, url).toBe(INDEX);
    }
  });

  it('pages and answers carry a strict CSP, refuse framing and send no referrer; HSTS only over https', async () => {
    for (const [app, url] of [
      [t.app, '/projects/market-study'],
      [t.app, '/api/reference/'],
      [missing.app, '/login'],
    ] as const) {
      const res = await api(app, 'GET', url, { headers: html });
      const csp = String(res.headers['content-security-policy']);
      expect(csp, url).toContain("script-src 'self';");
      expect(csp, url).not.toMatch(/script-src[^;]*(unsafe-inline|unsafe-eval)/);
      expect(csp, url).toContain("frame-ancestors 'none'");
      expect(csp, url).toContain("object-src 'none'");
      expect(res.headers['x-frame-options'], url).toBe('DENY');
      expect(res.headers['referrer-policy'], url).toBe('no-referrer');
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['strict-transport-security'], url).toBeUndefined();
    }
    // Behind a trusted proxy that says https: HSTS. Without TRUST_PROXY the header is not believed.
    const proxied = { ...html, 'x-forwarded-proto': 'https' };
    const secure = await api(missing.app, 'GET', '/login', { headers: proxied });
    expect(secure.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    const untrusted = await api(t.app, 'GET', '/login', { headers: proxied });
    expect(untrusted.headers['strict-transport-security']).toBeUndefined();
  });

  it("the API's answers (never HTML) carry a shorter, stricter set: nothing may load, run, frame or submit", async () => {
    for (const [app, url] of [
      [t.app, '/api/crm/skills'],
      [t.app, '/api/auth/me'],
      [t.app, '/api/no-such-route'],
      [missing.app, '/api/openapi.json'],
    ] as const) {
      const res = await api(app, 'GET', url, { headers: html });
      expect(res.headers['content-type'], url).not.toMatch(/html/);
      expect(res.headers['content-security-policy'], url).toBe(
        "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      );
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['x-frame-options'], url).toBe('DENY');
      expect(res.headers['referrer-policy'], url).toBe('no-referrer');
      expect(res.headers['cross-origin-resource-policy'], url).toBe('same-origin');
      expect(res.headers['cross-origin-opener-policy'], url).toBe('same-origin');
      expect(res.headers['strict-transport-security'], url).toBeUndefined();
    }
    const secure = await api(missing.app, 'GET', '/api/crm/skills', {
      headers: { ...html, 'x-forwarded-proto': 'https' },
    });
    expect(secure.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });

  it('assets are immutable and sent pre-compressed to clients that accept gzip', async () => {
    const plain = await api(t.app, 'GET', '/assets/app-abc123.js');
    expect(plain.status).toBe(200);
    expect(plain.text).toBe(JS);
    expect(plain.headers['cache-control']).toMatch(/immutable/);
    const gz = await t.app.inject({
      method: 'GET',
      url: '/assets/app-abc123.js',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.rawPayload).toString()).toBe(JS);
  });

  it('a missing asset, a path leaving the assets folder and API paths keep the 404 envelope', async () => {
    for (const url of [
      '/assets/nope.js',
      '/assets/..%2fsecret.txt',
      '/assets/%2e%2e/secret.txt',
      '/assets/.build-key',
      '/secret.txt',
      '/api/crm/no-such-thing',
      '/api/no-such-thing',
    ]) {
      const res = await api(t.app, 'GET', url, { headers: html });
      expect(res.status, url).toBe(404);
      expect(res.body.error, url).toBe('not_found');
      expect(res.text, url).not.toMatch(/not an asset|<html/);
    }
    const post = await api(t.app, 'POST', '/api/crm/no-such-thing', { body: {} });
    expect(post.status).toBe(404);
  });

  it("a browser's unknown page path answers the app with 404 (its own not-found page); other clients the envelope", async () => {
    for (const url of ['/no-such-page', '/projects-typo/x?y=1', '/settings/deep/path']) {
      const res = await api(t.app, 'GET', url, { headers: html });
      expect(res.status, url).toBe(404);
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expect(res.text, url).toBe(INDEX);
      const json = await api(t.app, 'GET', url);
      expect([json.status, json.body.error], url).toEqual([404, 'not_found']);
    }
    const post = await api(t.app, 'POST', '/no-such-page', { body: {}, headers: html });
    expect([post.status, post.body.error]).toEqual([404, 'not_found']);
    const built = await api(missing.app, 'GET', '/no-such-page', { headers: html });
    expect([built.status, built.body.error]).toEqual([404, 'not_found']);
  });

  it('without a build the pages answer 503 web_ui_not_built, and the API still works', async () => {
    const res = await api(missing.app, 'GET', '/projects', { headers: html });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('web_ui_not_built');
    expect((await api(missing.app, 'GET', '/healthz')).status).toBe(200);
  });

  it('the catalogs: Ukrainian translations from locales/uk/web.po; English leaves msgids to the UI', async () => {
    const uk = await api(t.app, 'GET', '/api/crm/i18n/web/uk');
    expect(uk.status).toBe(200);
    expect(uk.body.locale).toBe('uk');
    expect(uk.body.messages['Sign in']).toBe('Увійти');
    // Plural entries: the three Ukrainian forms (one, few, many), not in the plain messages.
    expect(uk.body.plurals['{n} worker']).toEqual(['{n} працівник', '{n} працівники', '{n} працівників']);
    expect(uk.body.messages['{n} worker']).toBeUndefined();
    const en = await api(t.app, 'GET', '/api/crm/i18n/web/en');
    expect(en.status).toBe(200);
    expect(en.body.messages).toEqual({});
    expect(en.body.plurals).toEqual({});
    const unknown = await api(t.app, 'GET', '/api/crm/i18n/web/fr');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('locale_not_found');
    for (const bad of ['UK', 'u-k', 'ukr', 'u%00']) {
      const res = await api(t.app, 'GET', `/api/crm/i18n/web/${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.error, bad).toBe('invalid_request');
    }
  });
});
