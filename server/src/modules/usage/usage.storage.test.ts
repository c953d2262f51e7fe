/**
 * Storage quotas and the disk floor through the HTTP API (docs/api.md, Storage quotas): a write past the owner's
 * quota answers 413 `storage_quota_exceeded` with the bytes used and allowed and leaves nothing behind; a write that
 * would take the free disk under DATA_DIR below the floor answers 507 `insufficient_storage`; the account's usage
 * answer shows the bytes used, the quota and every plan's quota.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';

const MiB = 1024 * 1024;

function multipart(parts: { name: string; filename?: string; content: string | Buffer }[]) {
  const boundary = `----quota${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}\r\n${p.filename ? 'Content-Type: application/octet-stream\r\n' : ''}\r\n`,
      ),
    );
    chunks.push(Buffer.isBuffer(p.content) ? p.content : Buffer.from(p.content));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('storage quota', () => {
  let t: TestApp;
  beforeAll(async () => {
    // A 1 MiB quota for the free plan, so a test can fill it.
    t = await buildTestApp({ env: { STORAGE_QUOTAS_MB: 'free=1', DISK_FREE_FLOOR_MB: '1' } });
  });
  afterAll(async () => t?.close());

  it('refuses an upload, a file save, a wiki page past the quota with 413 and the bytes used and allowed', async () => {
    const owner = await createUser(t, { plan: 'free' });
    const project = await createProject(t, owner.id);
    const files = `/api/crm/projects/${project.name}/files`;
    const up = (name: string, bytes: number) => {
      const m = multipart([{ name: 'file', filename: name, content: Buffer.alloc(bytes, 97) }]);
      return api(t.app, 'POST', `${files}/upload`, { token: owner.token, payload: m.payload, headers: m.headers });
    };
    expect((await up('a.bin', 600 * 1024)).status).toBe(201);

    const over = await up('b.bin', 600 * 1024);
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ error: 'storage_quota_exceeded', quota_bytes: MiB, needed_bytes: 600 * 1024 });
    expect(over.body.used_bytes).toBeGreaterThanOrEqual(600 * 1024);
    expect(over.body.used_bytes).toBeLessThanOrEqual(MiB);
    expect(typeof over.body.message).toBe('string');
    // Nothing of the refused upload stays.
    expect(fs.existsSync(path.join(project.dir, 'b.bin'))).toBe(false);
    expect(fs.readdirSync(path.join(project.dir, '.crm'))).toEqual([]);

    const save = await api(t.app, 'PUT', `${files}/save`, {
      token: owner.token,
      body: { path: 'c.txt', content: 'x'.repeat(500 * 1024) },
    });
    expect(save.status).toBe(413);
    expect(save.body).toMatchObject({ error: 'storage_quota_exceeded', quota_bytes: MiB });
    expect(fs.existsSync(path.join(project.dir, 'c.txt'))).toBe(false);

    const page = await api(t.app, 'PUT', `/api/crm/projects/${project.name}/wiki/save`, {
      token: owner.token,
      body: { path: 'big.md', content: 'y'.repeat(500 * 1024) },
    });
    expect(page.status).toBe(413);
    expect(page.body).toMatchObject({ error: 'storage_quota_exceeded', quota_bytes: MiB });

    // A small write still fits; deleting the big file makes room again.
    expect(
      (await api(t.app, 'PUT', `${files}/save`, { token: owner.token, body: { path: 'small.txt', content: 'hi' } }))
        .status,
    ).toBe(200);
    expect((await api(t.app, 'DELETE', `${files}/delete?path=a.bin`, { token: owner.token })).status).toBe(200);
    expect((await up('b.bin', 600 * 1024)).status).toBe(201);
  });

  it('shows the bytes used, the quota and every plan’s quota in the account’s usage', async () => {
    const owner = await createUser(t, { plan: 'free' });
    const project = await createProject(t, owner.id);
    fs.mkdirSync(project.dir, { recursive: true });
    fs.writeFileSync(path.join(project.dir, 'seed.bin'), Buffer.alloc(4096));
    const res = await api(t.app, 'GET', '/api/crm/account/usage', { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.storage).toMatchObject({ used_bytes: 4096, quota_bytes: MiB, plan: 'free' });
    expect(res.body.storage.quotas).toMatchObject({ free: MiB, max: 50 * 1024 * MiB, beta: null });
    const admin = await createUser(t, { role: 'admin' });
    expect((await api(t.app, 'GET', '/api/crm/account/usage', { token: admin.token })).body.storage.quota_bytes).toBe(
      null,
    );
  });
});

describe('disk floor', () => {
  let t: TestApp;
  beforeAll(async () => {
    // A floor no disk can keep: every write is refused.
    t = await buildTestApp({ env: { DISK_FREE_FLOOR_MB: '999999999' } });
  });
  afterAll(async () => t?.close());

  it('refuses writes with 507 insufficient_storage while the free disk is under the floor', async () => {
    const owner = await createUser(t, { plan: 'max' });
    const project = await createProject(t, owner.id);
    const files = `/api/crm/projects/${project.name}/files`;
    const m = multipart([{ name: 'file', filename: 'a.txt', content: 'hello' }]);
    const up = await api(t.app, 'POST', `${files}/upload`, {
      token: owner.token,
      payload: m.payload,
      headers: m.headers,
    });
    expect(up.status).toBe(507);
    expect(up.body).toMatchObject({ error: 'insufficient_storage' });
    const save = await api(t.app, 'PUT', `${files}/save`, {
      token: owner.token,
      body: { path: 'a.txt', content: 'x' },
    });
    expect(save.status).toBe(507);
    expect(fs.existsSync(path.join(project.dir, 'a.txt'))).toBe(false);
    // Reading still works.
    expect((await api(t.app, 'GET', files, { token: owner.token })).status).not.toBe(507);
  });
});
