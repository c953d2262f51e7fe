/**
 * Backup and restore round trip: a service's database (embedded, or the PostgreSQL server with TEST_DATABASE_URL)
 * and DATA_DIR — keys.json included — are backed up, restored into a fresh DATA_DIR and an empty database, and the
 * restored service gives the same answers: the same token is accepted, the password logs in, the sealed LLM key
 * is readable, the wiki file and the issues are there.
 */
import { afterAll, describe, expect, inject, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import {
  api,
  appOverDatabase,
  createProject,
  createServerDatabase,
  createUser,
  type TestApp,
} from '../../test/helpers.ts';
import { type Database, openDatabase } from '../db/database.ts';
import { ensureKeys } from '../secrets/keys.ts';
import { BackupError, createBackup, restoreBackup } from './backup.ts';

const onServer = inject('dbKind') === 'postgres';
const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {});
});

const tempDir = (prefix: string) => {
  const d = fs.mkdtempSync(path.join(path.resolve('.tmp'), `${prefix}-`));
  cleanup.push(async () => fs.rmSync(d, { recursive: true, force: true }));
  return d;
};

/** The app over an open database and DATA_DIR, with the keys of DATA_DIR/keys.json, as `npm start` builds it. */
const appOn = (dataDir: string, database: Database, url: string | undefined): Promise<TestApp> =>
  appOverDatabase(dataDir, database, { env: url ? { DATABASE_URL: url } : {}, keys: ensureKeys(dataDir, {}) });

/** A database for a service: the embedded one in `dataDir` (from the migrated template), or a server database. */
async function sourceDatabase(dataDir: string): Promise<{ database: Database; url: string | undefined }> {
  if (onServer) {
    const { url, drop } = await createServerDatabase();
    cleanup.push(drop);
    return { database: await openDatabase({ url, dataDir }), url };
  }
  const blob = new Blob([fs.readFileSync(inject('template'))]);
  return { database: await openDatabase({ url: undefined, dataDir, loadDataDir: blob }), url: undefined };
}

describe('backup and restore', () => {
  it('restores the database, the files and the keys into a fresh DATA_DIR with the same answers', async () => {
    const source = tempDir('backup-src');
    const { database, url } = await sourceDatabase(source);
    const t = await appOn(source, database, url);
    const u = await createUser(t, { password: 'a long passphrase' });
    const p = await createProject(t, u.id);
    const put = await api(t.app, 'PUT', '/api/crm/account/settings', {
      token: u.token,
      body: { llm_key: 'sk-ant-example-0123456789abcdef' },
    });
    expect(put.status).toBe(200);
    const saved = await api(t.app, 'PUT', `/api/crm/projects/${p.name}/wiki/save`, {
      token: u.token,
      body: { path: 'guides/onboarding.md', content: '# Onboarding\n\nRestored intact.' },
    });
    expect(saved.status).toBe(200);
    const issue = await api(t.app, 'POST', `/api/crm/projects/${p.name}/issues`, {
      token: u.token,
      body: { title: 'Check the backup', priority: 'P1' },
    });
    expect(issue.status).toBe(201);
    const reads = [
      '/api/auth/me',
      '/api/crm/account/settings',
      `/api/crm/projects/${p.name}/issues`,
      `/api/crm/projects/${p.name}/wiki/file?path=guides/onboarding.md`,
    ];
    const before = await Promise.all(reads.map((r) => api(t.app, 'GET', r, { token: u.token })));
    for (const r of before) expect(r.status).toBe(200);
    // The sealed key is readable only with the keys of keys.json.
    expect(await t.services.settings.llmKey(u.id)).toBe('sk-ant-example-0123456789abcdef');
    await t.close();

    const file = path.join(tempDir('backup-out'), 'b.tar.gz');
    const manifest = await createBackup({ dataDir: source, databaseUrl: url, out: file });
    expect(manifest).toMatchObject({ format: 1, database: onServer ? 'postgres' : 'pglite' });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    // Into a fresh DATA_DIR and an empty database.
    const target = tempDir('backup-dst');
    let targetUrl: string | undefined;
    if (onServer) {
      const empty = await createServerDatabase({ empty: true });
      cleanup.push(empty.drop);
      targetUrl = empty.url;
    }
    await restoreBackup({ file, dataDir: target, databaseUrl: targetUrl });
    expect(fs.readFileSync(path.join(target, 'keys.json'), 'utf8')).toBe(
      fs.readFileSync(path.join(source, 'keys.json'), 'utf8'),
    );
    // A second restore into the same place is refused.
    await expect(restoreBackup({ file, dataDir: target, databaseUrl: targetUrl })).rejects.toThrow(BackupError);

    const restored = await appOn(target, await openDatabase({ url: targetUrl, dataDir: target }), targetUrl);
    cleanup.push(() => restored.close());
    const after = await Promise.all(reads.map((r) => api(restored.app, 'GET', r, { token: u.token })));
    for (let i = 0; i < reads.length; i++) {
      expect(after[i].status, reads[i]).toBe(200);
      expect(after[i].body, reads[i]).toEqual(before[i].body);
    }
    expect(await restored.services.settings.llmKey(u.id)).toBe('sk-ant-example-0123456789abcdef');
    const login = await api(restored.app, 'POST', '/api/auth/login', {
      body: { email: u.email, password: 'a long passphrase' },
    });
    expect(login.status).toBe(200);
    expect((await api(restored.app, 'GET', '/readyz')).body.ok).toBe(true);
  }, 180_000);
});
