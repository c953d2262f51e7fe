import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import crypto from 'node:crypto';
import { api, buildTestApp, createUser, type TestApp } from '../../../test/helpers.ts';

const URL = '/api/crm/account/settings';
const DEFAULTS = { llm_key: null, llm_key_set: false, upload_transcripts: false };
let t: TestApp;

const newKey = () => `sk-ant-api03-${crypto.randomBytes(24).toString('base64url')}`;
const storedRow = (userId: number) =>
  t.db.selectFrom('account_settings').selectAll().where('user_id', '=', userId).executeTakeFirst();

beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('account settings', () => {
  it('401 without a token', async () => {
    expect((await api(t.app, 'GET', URL)).status).toBe(401);
    expect((await api(t.app, 'PUT', URL, { body: { upload_transcripts: true } })).status).toBe(401);
  });

  it('a new user gets the defaults', async () => {
    const u = await createUser(t);
    const res = await api(t.app, 'GET', URL, { token: u.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(DEFAULTS);
  });

  it('stores llm_key sealed and answers only a masked prefix, never the key', async () => {
    const u = await createUser(t);
    const key = newKey();
    const put = await api(t.app, 'PUT', URL, { token: u.token, body: { llm_key: key } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ llm_key: `${key.slice(0, 8)}…`, llm_key_set: true, upload_transcripts: false });
    expect(put.text).not.toContain(key);
    expect(put.text).not.toContain(key.slice(8, 20));
    const get = await api(t.app, 'GET', URL, { token: u.token });
    expect(get.body).toEqual(put.body);
    expect(get.text).not.toContain(key.slice(8, 20));
    const row = await storedRow(u.id);
    expect(row!.llm_key_enc).toBeTruthy();
    expect(JSON.stringify(row)).not.toContain(key);
    expect(JSON.stringify(row)).not.toContain(key.slice(8, 20));
    expect(t.deps.sealer.open(row!.llm_key_enc!)).toBe(key);
  });

  it('upload_transcripts toggles and leaves the key alone', async () => {
    const u = await createUser(t);
    const key = newKey();
    await api(t.app, 'PUT', URL, { token: u.token, body: { llm_key: key } });
    const on = await api(t.app, 'PUT', URL, { token: u.token, body: { upload_transcripts: true } });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ upload_transcripts: true, llm_key_set: true });
    expect((await api(t.app, 'GET', URL, { token: u.token })).body.upload_transcripts).toBe(true);
    const off = await api(t.app, 'PUT', URL, { token: u.token, body: { upload_transcripts: false } });
    expect(off.body).toMatchObject({ upload_transcripts: false, llm_key_set: true });
    expect(t.deps.sealer.open((await storedRow(u.id))!.llm_key_enc!)).toBe(key);
    const first = await createUser(t);
    const only = await api(t.app, 'PUT', URL, { token: first.token, body: { upload_transcripts: true } });
    expect(only.body).toEqual({ llm_key: null, llm_key_set: false, upload_transcripts: true });
  });

  it("'' and null remove the key; the flag stays", async () => {
    const u = await createUser(t);
    for (const removal of ['', null]) {
      await api(t.app, 'PUT', URL, { token: u.token, body: { llm_key: newKey(), upload_transcripts: true } });
      const res = await api(t.app, 'PUT', URL, { token: u.token, body: { llm_key: removal } });
      expect(res.status, String(removal)).toBe(200);
      expect(res.body).toEqual({ llm_key: null, llm_key_set: false, upload_transcripts: true });
      expect((await storedRow(u.id))!.llm_key_enc).toBeNull();
    }
  });

  it('a short key or one with spaces gives 400 invalid_llm_key and keeps the stored key', async () => {
    const u = await createUser(t);
    const key = newKey();
    await api(t.app, 'PUT', URL, { token: u.token, body: { llm_key: key } });
    for (const bad of ['short', 'sk-ant api03 with spaces', 'abc\tdefghijk']) {
      const res = await api(t.app, 'PUT', URL, { token: u.token, body: { llm_key: bad } });
      expect(res.status, bad).toBe(400);
      expect(res.body.error).toBe('invalid_llm_key');
      expect(res.text).not.toContain(bad);
    }
    expect(t.deps.sealer.open((await storedRow(u.id))!.llm_key_enc!)).toBe(key);
  });

  it('wrong types give 400 invalid_request', async () => {
    const u = await createUser(t);
    for (const body of [
      { llm_key: { nested: 'object' } },
      { upload_transcripts: 'perhaps' },
      { upload_transcripts: { on: true } },
      { llm_key: 'x'.repeat(513) },
    ]) {
      const res = await api(t.app, 'PUT', URL, { token: u.token, body });
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    }
    expect((await api(t.app, 'GET', URL, { token: u.token })).body).toEqual(DEFAULTS);
  });

  it("one user cannot see or change another's settings", async () => {
    const a = await createUser(t);
    const b = await createUser(t);
    const key = newKey();
    await api(t.app, 'PUT', URL, { token: a.token, body: { llm_key: key, upload_transcripts: true } });
    const seen = await api(t.app, 'GET', URL, { token: b.token });
    expect(seen.body).toEqual(DEFAULTS);
    await api(t.app, 'PUT', URL, { token: b.token, body: { llm_key: '' } });
    const still = await api(t.app, 'GET', URL, { token: a.token });
    expect(still.body).toMatchObject({ llm_key_set: true, upload_transcripts: true });
    expect(t.deps.sealer.open((await storedRow(a.id))!.llm_key_enc!)).toBe(key);
  });
});
