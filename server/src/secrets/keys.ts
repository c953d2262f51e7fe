/**
 * Development keys: when `CRM_SECRET` or `SECRET_ENCRYPTION_KEY` is not set, one is generated once and
 * kept in `DATA_DIR/keys.json` (mode 0600), so tokens and sealed secrets survive restarts.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface Keys {
  crmSecret: string;
  secretEncryptionKey: string;
}

/**
 * Read or create the key file. Values given in the environment win and are never written to disk.
 * Instances sharing one DATA_DIR and starting at the same moment agree on the keys: a new file is written
 * aside and linked into place only if none exists yet (an atomic create), else the one that won is read.
 */
export function ensureKeys(dataDir: string, given: { crmSecret?: string; secretEncryptionKey?: string }): Keys {
  if (given.crmSecret && given.secretEncryptionKey)
    return { crmSecret: given.crmSecret, secretEncryptionKey: given.secretEncryptionKey };
  const file = path.join(dataDir, 'keys.json');
  const read = (): Partial<Keys> =>
    fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Keys>) : {};
  const existed = fs.existsSync(file);
  let stored = read();
  const fill = (from: Partial<Keys>): Keys => ({
    crmSecret: from.crmSecret ?? crypto.randomBytes(32).toString('hex'),
    secretEncryptionKey: from.secretEncryptionKey ?? crypto.randomBytes(32).toString('hex'),
  });
  let next = fill(stored);
  if (next.crmSecret !== stored.crmSecret || next.secretEncryptionKey !== stored.secretEncryptionKey) {
    fs.mkdirSync(dataDir, { recursive: true });
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
    fs.writeFileSync(tmp, JSON.stringify(next, null, 2), { mode: 0o600 });
    try {
      // A file that lacked a key is completed (ours replaces it); a new one is linked into place, which fails
      // when another instance created it meanwhile.
      if (existed) fs.renameSync(tmp, file);
      else fs.linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      stored = read();
      next = fill(stored);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }
  return {
    crmSecret: given.crmSecret ?? next.crmSecret,
    secretEncryptionKey: given.secretEncryptionKey ?? next.secretEncryptionKey,
  };
}
