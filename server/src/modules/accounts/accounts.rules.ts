/** Pure helpers of the accounts area. */
import crypto from 'node:crypto';

const INVITE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** A new invite code `svc-XXXX-XXXX` (docs/api.md, Authentication and tokens), from an unambiguous alphabet. */
export function newInviteCode(): string {
  const pick = () => INVITE_ALPHABET[crypto.randomInt(INVITE_ALPHABET.length)];
  const group = () => Array.from({ length: 4 }, pick).join('');
  return `svc-${group()}-${group()}`;
}

/** Canonical form of a typed code (`SVC-abcd-efgh ` → `svc-ABCD-EFGH`); undefined when not of the format. */
export function normalizeInviteCode(input: string): string | undefined {
  const m = /^\s*svc-([A-Za-z0-9]{4})-([A-Za-z0-9]{4})\s*$/i.exec(input);
  return m ? `svc-${m[1].toUpperCase()}-${m[2].toUpperCase()}` : undefined;
}

export const normalizeEmail = (e: string): string => e.trim().toLowerCase();

/** Password rule for new passwords: 8 to 128 characters, not only spaces. @returns the problem, or undefined. */
export function passwordProblem(pw: string): string | undefined {
  if (pw.length < 8) return 'The password must be at least 8 characters long.';
  if (pw.length > 128) return 'The password must be at most 128 characters long.';
  if (!pw.trim()) return 'The password must not be only spaces.';
  return undefined;
}
