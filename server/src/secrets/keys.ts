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

/** Read or create the key file. Values given in the environment win and are never written to disk. */
export function ensureKeys(dataDir: string, given: { crmSecret?: string; secretEncryptionKey?: string }): Keys {
  if (given.crmSecret && given.secretEncryptionKey)
    return { crmSecret: given.crmSecret, secretEncryptionKey: given.secretEncryptionKey };
  const file = path.join(dataDir, 'keys.json');
  let stored: Partial<Keys> = {};
  if (fs.existsSync(file)) stored = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Keys>;
  const next: Keys = {
    crmSecret: stored.crmSecret ?? crypto.randomBytes(32).toString('hex'),
    secretEncryptionKey: stored.secretEncryptionKey ?? crypto.randomBytes(32).toString('hex'),
  };
  if (next.crmSecret !== stored.crmSecret || next.secretEncryptionKey !== stored.secretEncryptionKey) {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, JSON.stringify(next, null, 2), { mode: 0o600 });
  }
  return {
    crmSecret: given.crmSecret ?? next.crmSecret,
    secretEncryptionKey: given.secretEncryptionKey ?? next.secretEncryptionKey,
  };
}
