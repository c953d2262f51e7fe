/**
 * Breached-password check through the k-anonymity range API (specification, Authentication rule 9):
 * only the first 5 hex characters of the SHA-1 leave the process; `GET {base}/range/{PREFIX}` answers
 * `SUFFIX:COUNT` lines. The check passes (not breached) when the service does not answer within the
 * timeout or answers with an error.
 */
import crypto from 'node:crypto';

export interface BreachChecker {
  /** @returns true when the password appears in the breach corpus. Never throws. */
  isBreached(password: string): Promise<boolean>;
}

/** @param baseUrl range API base, or undefined to disable; @param timeoutMs default 4000. */
export function createBreachChecker(baseUrl: string | undefined, timeoutMs = 4000): BreachChecker {
  return {
    async isBreached(password) {
      if (!baseUrl) return false;
      const hash = crypto.createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
      const prefix = hash.slice(0, 5);
      const suffix = hash.slice(5);
      try {
        const res = await fetch(`${baseUrl}/range/${prefix}`, {
          signal: AbortSignal.timeout(timeoutMs),
          headers: { 'Add-Padding': 'true' },
        });
        if (!res.ok) return false;
        const body = await res.text();
        for (const line of body.split(/\r?\n/)) {
          const [s, count] = line.trim().split(':');
          if (s?.toUpperCase() === suffix && Number(count) > 0) return true;
        }
        return false;
      } catch {
        return false;
      }
    },
  };
}
