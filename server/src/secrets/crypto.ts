/**
 * AES-256-GCM sealing of secrets at rest (the secret store and users' `llm_key`).
 * Sealed form: `v1.<iv b64url>.<tag b64url>.<ciphertext b64url>`; the key is 32 bytes derived from
 * `SECRET_ENCRYPTION_KEY` (64 hex characters are used as-is; anything else through SHA-256).
 */
import crypto from 'node:crypto';

export interface Sealer {
  /** Encrypt a UTF-8 string. */
  seal(plain: string): string;
  /** Decrypt what `seal` made. @throws Error('secret_unreadable') on a wrong key or tampered value. */
  open(sealed: string): string;
}

export function deriveKey(material: string): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(material)) return Buffer.from(material, 'hex');
  return crypto.createHash('sha256').update(material, 'utf8').digest();
}

export function createSealer(material: string): Sealer {
  const key = deriveKey(material);
  return {
    seal(plain) {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(
        '.',
      );
    },
    open(sealed) {
      const [v, iv, tag, ct] = sealed.split('.');
      if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('secret_unreadable');
      try {
        const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new Error('secret_unreadable');
      }
    },
  };
}

/** SHA-256 hex of a string (single-use tokens are stored only as this). */
export const sha256hex = (s: string): string => crypto.createHash('sha256').update(s, 'utf8').digest('hex');

/** A URL-safe random token of `bytes` random bytes. */
export const randomToken = (bytes = 32): string => crypto.randomBytes(bytes).toString('base64url');

/** Constant-time string comparison (different lengths compare unequal without early exit on content). */
export function safeEqual(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb) && a.length === b.length;
}

/**
 * Mask a secret for display: a short prefix and the length, never the rest.
 * `sk-ant-api03-abcdef…` → `sk-ant-a…` (8 characters for keys of 20 or more, otherwise 3).
 */
export function maskSecret(value: string): string {
  const n = value.length >= 20 ? 8 : 3;
  return `${value.slice(0, n)}…`;
}
