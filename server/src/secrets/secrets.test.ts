import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { openTestDatabase } from '../../test/helpers.ts';
import type { Database } from '../db/database.ts';
import { createSealer, deriveKey, maskSecret, safeEqual } from './crypto.ts';
import { createSecretStore, type SecretStore } from './secret-store.ts';
import { ensureKeys } from './keys.ts';

const made: string[] = [];
const tmpDir = () => {
  const dir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'keys-'));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

describe('AES-256-GCM sealing', () => {
  const sealer = createSealer('a key of some sort, not hex at all');

  it('round-trips text (also empty and non-ASCII) and never repeats a sealed form', () => {
    for (const plain of ['sk-ant-api03-secret', '', 'ключ 🔑 with spaces', 'x'.repeat(10_000)]) {
      const sealed = sealer.seal(plain);
      expect(sealed.startsWith('v1.')).toBe(true);
      if (plain) expect(sealed).not.toContain(plain);
      expect(sealer.open(sealed)).toBe(plain);
    }
    expect(sealer.seal('same')).not.toBe(sealer.seal('same'));
  });

  it('a tampered value throws secret_unreadable', () => {
    const sealed = sealer.seal('the real secret');
    const [v, iv, tag, ct] = sealed.split('.');
    const flip = (s: string) => {
      const b = Buffer.from(s, 'base64url');
      b[0] ^= 1;
      return b.toString('base64url');
    };
    for (const bad of [
      [v, iv, tag, flip(ct)],
      [v, iv, flip(tag), ct],
      [v, flip(iv), tag, ct],
      ['v2', iv, tag, ct],
      [v, iv, tag],
    ].map((p) => p.join('.'))) {
      expect(() => sealer.open(bad), bad).toThrow('secret_unreadable');
    }
    expect(() => sealer.open('garbage')).toThrow('secret_unreadable');
  });

  it('a wrong key throws secret_unreadable', () => {
    const sealed = sealer.seal('the real secret');
    expect(() => createSealer('another key entirely').open(sealed)).toThrow('secret_unreadable');
  });

  it('64 hex characters are the key itself; other material goes through SHA-256', () => {
    const hex = crypto.randomBytes(32).toString('hex');
    expect(deriveKey(hex).equals(Buffer.from(hex, 'hex'))).toBe(true);
    expect(deriveKey('passphrase').equals(crypto.createHash('sha256').update('passphrase').digest())).toBe(true);
    const sealed = createSealer(hex).seal('v');
    const iv = Buffer.from(sealed.split('.')[1], 'base64url');
    const d = crypto.createDecipheriv('aes-256-gcm', Buffer.from(hex, 'hex'), iv);
    d.setAuthTag(Buffer.from(sealed.split('.')[2], 'base64url'));
    expect(Buffer.concat([d.update(Buffer.from(sealed.split('.')[3], 'base64url')), d.final()]).toString()).toBe('v');
  });

  it('maskSecret shows only a prefix; safeEqual compares exactly', () => {
    expect(maskSecret('sk-ant-api03-abcdefghijklmnop')).toBe('sk-ant-a…');
    expect(maskSecret('shortkey12')).toBe('sho…');
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
});

describe('secret store', () => {
  let database: Database;
  let drop: () => Promise<void>;
  let store: SecretStore;
  const sealer = createSealer('store key material 0123456789');

  beforeAll(async () => {
    ({ database, drop } = await openTestDatabase(tmpDir()));
    store = createSecretStore(database.db, sealer);
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  it('set/get/delete, stored sealed; list shows metadata only', async () => {
    expect(await store.get('PLATFORM_LLM_KEY')).toBeUndefined();
    await store.set('PLATFORM_LLM_KEY', 'sk-platform-first', 'admin@example.com');
    expect(await store.get('PLATFORM_LLM_KEY')).toBe('sk-platform-first');
    await store.set('PLATFORM_LLM_KEY', 'sk-platform-second', 'other@example.com');
    expect(await store.get('PLATFORM_LLM_KEY')).toBe('sk-platform-second');
    const row = await database.db
      .selectFrom('secrets')
      .selectAll()
      .where('name', '=', 'PLATFORM_LLM_KEY')
      .executeTakeFirstOrThrow();
    expect(row.value_enc).not.toContain('sk-platform');
    expect(sealer.open(row.value_enc)).toBe('sk-platform-second');
    await store.set('EMAIL_API_KEY', 'mail-key-123');
    const list = await store.list();
    expect(list.map((s) => s.name)).toEqual(['EMAIL_API_KEY', 'PLATFORM_LLM_KEY']);
    expect(list.find((s) => s.name === 'PLATFORM_LLM_KEY')).toMatchObject({ updated_by: 'other@example.com' });
    expect(list[0].updated_at).toBeInstanceOf(Date);
    expect(JSON.stringify(list)).not.toMatch(/sk-platform|mail-key/);
    await store.delete('EMAIL_API_KEY');
    expect(await store.get('EMAIL_API_KEY')).toBeUndefined();
  });

  it('importMissing imports only absent names; an environment value never overwrites a stored one', async () => {
    await store.set('MASTER_BOT_TOKEN', 'stored-by-admin', 'admin@example.com');
    const imported = await store.importMissing({
      MASTER_BOT_TOKEN: 'from-environment',
      PAYPROV_MERCHANT_TOKEN: 'merchant-env',
      IDP_CLIENT_ID: undefined,
      CODEHOST_CLIENT_ID: '',
    });
    expect(imported).toEqual(['PAYPROV_MERCHANT_TOKEN']);
    expect(await store.get('MASTER_BOT_TOKEN')).toBe('stored-by-admin');
    expect(await store.get('PAYPROV_MERCHANT_TOKEN')).toBe('merchant-env');
    expect(await store.get('IDP_CLIENT_ID')).toBeUndefined();
    expect(await store.get('CODEHOST_CLIENT_ID')).toBeUndefined();
    expect((await store.list()).find((s) => s.name === 'PAYPROV_MERCHANT_TOKEN')!.updated_by).toBe('environment');
    expect(await store.importMissing({ PAYPROV_MERCHANT_TOKEN: 'changed-env' })).toEqual([]);
    expect(await store.get('PAYPROV_MERCHANT_TOKEN')).toBe('merchant-env');
  });
});

describe('development keys (DATA_DIR/keys.json)', () => {
  it('creates the file once with mode 0600 and reuses it', () => {
    const dir = path.join(tmpDir(), 'nested', 'data');
    const first = ensureKeys(dir, {});
    const file = path.join(dir, 'keys.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(first.crmSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(first.secretEncryptionKey).toMatch(/^[0-9a-f]{64}$/);
    expect(first.crmSecret).not.toBe(first.secretEncryptionKey);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(first);
    const mtime = fs.statSync(file).mtimeMs;
    const content = fs.readFileSync(file, 'utf8');
    const second = ensureKeys(dir, {});
    expect(second).toEqual(first);
    expect(fs.readFileSync(file, 'utf8')).toBe(content);
    expect(fs.statSync(file).mtimeMs).toBe(mtime);
  });

  it('processes starting at the same moment on one DATA_DIR all get the keys of the file', async () => {
    const dir = tmpDir();
    const go = path.join(tmpDir(), 'go');
    // Each process loads, says so, waits for the same signal (a file appearing), then reads or creates keys.json.
    const code = `import fs from 'node:fs';
      import { ensureKeys } from ${JSON.stringify(path.resolve('server/src/secrets/keys.ts'))};
      process.stderr.write('ready');
      while (!fs.existsSync(${JSON.stringify(go)}));
      process.stdout.write(JSON.stringify(ensureKeys(${JSON.stringify(dir)}, {})));`;
    let ready = 0;
    const run = () =>
      new Promise<string>((resolve, reject) => {
        const child = execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], (err, out) =>
          err ? reject(err) : resolve(out),
        );
        child.stderr!.on('data', () => {
          if (++ready === 4) fs.writeFileSync(go, '');
        });
      });
    const got = await Promise.all([run(), run(), run(), run()]);
    const stored = fs.readFileSync(path.join(dir, 'keys.json'), 'utf8');
    for (const out of got) expect(JSON.parse(out)).toEqual(JSON.parse(stored));
    expect(fs.readdirSync(dir)).toEqual(['keys.json']);
  });

  it('environment values win and are never written', () => {
    const dir = tmpDir();
    const both = ensureKeys(dir, {
      crmSecret: 'env-signing-secret-123456',
      secretEncryptionKey: 'env-encryption-key-123456',
    });
    expect(both).toEqual({ crmSecret: 'env-signing-secret-123456', secretEncryptionKey: 'env-encryption-key-123456' });
    expect(fs.existsSync(path.join(dir, 'keys.json'))).toBe(false);

    const stored = ensureKeys(dir, {});
    const one = ensureKeys(dir, { crmSecret: 'env-signing-secret-123456' });
    expect(one).toEqual({ crmSecret: 'env-signing-secret-123456', secretEncryptionKey: stored.secretEncryptionKey });
    const text = fs.readFileSync(path.join(dir, 'keys.json'), 'utf8');
    expect(text).not.toContain('env-signing-secret');
    expect(JSON.parse(text)).toEqual(stored);

    const fresh = tmpDir();
    const partial = ensureKeys(fresh, { secretEncryptionKey: 'env-encryption-key-123456' });
    expect(partial.secretEncryptionKey).toBe('env-encryption-key-123456');
    expect(fs.readFileSync(path.join(fresh, 'keys.json'), 'utf8')).not.toContain('env-encryption-key');
  });
});
