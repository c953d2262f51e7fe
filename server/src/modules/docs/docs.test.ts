import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, type TestApp } from '../../../test/helpers.ts';
import { createDocsService } from './docs.service.ts';

describe('public documentation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t?.close());

  it('serves the tree without authentication, in English by default and in Ukrainian', async () => {
    const en = await api(t.app, 'GET', '/api/crm/docs/tree');
    expect(en.status).toBe(200);
    expect(en.body.lang).toBe('en');
    const paths = en.body.tree.map((n: any) => n.path);
    expect(paths[0]).toBe('getting-started.md');
    for (const p of [
      'projects-and-workers.md',
      'issues.md',
      'skills.md',
      'wiki.md',
      'notes.md',
      'transcripts.md',
      'voice.md',
      'cli.md',
      'plans-and-billing.md',
      'cloud-container.md',
      'privacy.md',
    ])
      expect(paths).toContain(p);
    expect(en.body.tree[0]).toMatchObject({ title: 'Getting started', lang: 'en' });
    // a page that exists only in Ukrainian is listed, served in Ukrainian
    expect(en.body.tree.find((n: any) => n.path === 'terminology.md')).toMatchObject({ lang: 'uk' });
    const uk = await api(t.app, 'GET', '/api/crm/docs/tree?lang=uk');
    expect(uk.body.lang).toBe('uk');
    expect(uk.body.tree[0]).toMatchObject({ path: 'getting-started.md', title: 'Початок роботи', lang: 'uk' });
    expect((await api(t.app, 'GET', '/api/crm/docs/tree?lang=de')).status).toBe(400);
  });

  it('serves a page and falls back across languages', async () => {
    const en = await api(t.app, 'GET', '/api/crm/docs/file?path=wiki.md');
    expect(en.status).toBe(200);
    expect(en.body).toMatchObject({ path: 'wiki.md', lang: 'en', fallback: false, title: 'Wiki' });
    expect(en.body.content).toContain('/api/crm/projects/<name>/wiki/save');
    const noExt = await api(t.app, 'GET', '/api/crm/docs/file?path=wiki&lang=uk');
    expect(noExt.body).toMatchObject({ path: 'wiki.md', lang: 'uk', fallback: false, title: 'Вікі' });
    const fb = await api(t.app, 'GET', '/api/crm/docs/file?path=terminology.md&lang=en');
    expect(fb.status).toBe(200);
    expect(fb.body).toMatchObject({ lang: 'uk', requested_lang: 'en', fallback: true });
    expect((await api(t.app, 'GET', '/api/crm/docs/file?path=nope.md')).status).toBe(404);
    expect((await api(t.app, 'GET', '/api/crm/docs/file')).status).toBe(400);
  });

  it('refuses path traversal and never returns files outside the docs folder', async () => {
    for (const p of [
      '../../package.json',
      '..%2F..%2Fpackage.json',
      '../en/wiki.md',
      '/etc/passwd',
      'en/../../README.md',
      '%2e%2e/%2e%2e/README.md',
      'wiki.md%00.txt',
      'a\\..\\b.md',
    ]) {
      const r = await api(t.app, 'GET', `/api/crm/docs/file?path=${p}`);
      expect([400, 403, 404], p).toContain(r.status);
      expect(r.text).not.toContain('"dependencies"');
      expect(r.body.error).toBeTruthy();
    }
    expect((await api(t.app, 'GET', '/api/crm/docs/file?path=../../package.json')).body.error).toBe('invalid_path');
  });

  it('indexes the public docs as global documents after start', async () => {
    await t.services.knowledge.globalDocsSynced();
    const rows = await t.db
      .selectFrom('knowledge_documents')
      .select(['doc_id', 'scope', 'project_id'])
      .where('doc_type', '=', 'doc')
      .execute();
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.every((r) => r.scope === 'global' && r.project_id === null)).toBe(true);
    expect(rows.map((r) => r.doc_id)).toContain('en/getting-started.md');
  });

  it('refuses a symlink that leads outside the docs folder (403)', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-'));
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'outside-'));
    fs.mkdirSync(path.join(root, 'en'));
    fs.writeFileSync(path.join(outside, 'secret.md'), 'top secret');
    fs.symlinkSync(path.join(outside, 'secret.md'), path.join(root, 'en', 'leak.md'));
    const docs = createDocsService({ root });
    expect(() => docs.file('leak.md')).toThrowError(
      expect.objectContaining({ statusCode: 403, code: 'forbidden_path' }),
    );
    fs.rmSync(root, { recursive: true });
    fs.rmSync(outside, { recursive: true });
  });
});
