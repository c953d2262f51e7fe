/**
 * Breached-password check through the k-anonymity range API (docs/api.md, Authentication and tokens):
 * only the first 5 hex characters of the SHA-1 leave the process; `GET {base}/range/{PREFIX}` answers
 * `SUFFIX:COUNT` lines. The check passes (not breached) when the service does not answer within the
 * timeout or answers with an error: registration must not depend on a third party.
 *
 * Failing open is made visible: while the service cannot be used the checker is `degraded` (reported by
 * `/readyz`), the log warns once per period (not per request) with how many checks were skipped, and says
 * when the service answers again. While degraded, a status read re-tries the service in the background
 * (a fixed prefix, no password involved) at most every `recheckMs`, so the status recovers without traffic.
 */
import crypto from 'node:crypto';
import type { Logger } from '../../lib/logger.ts';

/** `ok`: the last check reached the service; `degraded`: it could not (passwords pass unchecked); `off`: disabled. */
export type BreachStatus = 'ok' | 'degraded' | 'off';

export interface BreachChecker {
  /** @returns true when the password appears in the breach corpus. Never throws. */
  isBreached(password: string): Promise<boolean>;
  /** The service's state as seen by the last check; when degraded, may start a background re-check. */
  status(): BreachStatus;
}

export interface BreachCheckerOptions {
  /** Time limit of one request to the range API (default 4000 ms). */
  timeoutMs?: number;
  /** Where the warnings go (default: nowhere). */
  log?: Pick<Logger, 'warn' | 'info'>;
  /** At most one warning per this many milliseconds while the service is unavailable (default 10 minutes). */
  warnEveryMs?: number;
  /** While degraded, re-try the service from `status()` at most this often (default 30 s). */
  recheckMs?: number;
}

/** @param baseUrl range API base, or undefined to disable. */
export function createBreachChecker(baseUrl: string | undefined, opts: BreachCheckerOptions = {}): BreachChecker {
  const timeoutMs = opts.timeoutMs ?? 4000;
  const warnEveryMs = opts.warnEveryMs ?? 10 * 60_000;
  const recheckMs = opts.recheckMs ?? 30_000;
  let degraded = false;
  let lastAttempt = 0;
  let lastWarning = 0;
  let skipped = 0;
  let rechecking = false;

  /** GET one range. @returns the body, or the reason the service could not be used. */
  const range = async (prefix: string): Promise<{ body: string } | { failure: string }> => {
    lastAttempt = Date.now();
    try {
      const res = await fetch(`${baseUrl}/range/${prefix}`, {
        signal: AbortSignal.timeout(timeoutMs),
        headers: { 'Add-Padding': 'true' },
      });
      if (!res.ok) {
        await res.body?.cancel();
        return { failure: `answered ${res.status}` };
      }
      return { body: await res.text() };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      return {
        failure: e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (e.cause?.code ?? e.message),
      };
    }
  };

  const failed = (reason: string) => {
    degraded = true;
    skipped++;
    const now = Date.now();
    if (now - lastWarning < warnEveryMs) return;
    opts.log?.warn(
      { breach_check_url: baseUrl, reason, passwords_unchecked: skipped, next_warning_in_s: warnEveryMs / 1000 },
      'breached-password check unavailable: new passwords are accepted without it',
    );
    lastWarning = now;
    skipped = 0;
  };

  const answered = () => {
    if (!degraded) return;
    degraded = false;
    lastWarning = 0;
    opts.log?.info(
      { breach_check_url: baseUrl, passwords_unchecked: skipped },
      'breached-password check available again',
    );
    skipped = 0;
  };

  return {
    async isBreached(password) {
      if (!baseUrl) return false;
      const hash = crypto.createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
      const prefix = hash.slice(0, 5);
      const suffix = hash.slice(5);
      const r = await range(prefix);
      if ('failure' in r) {
        failed(r.failure);
        return false;
      }
      answered();
      for (const line of r.body.split(/\r?\n/)) {
        const [s, count] = line.trim().split(':');
        if (s?.toUpperCase() === suffix && Number(count) > 0) return true;
      }
      return false;
    },

    status() {
      if (!baseUrl) return 'off';
      if (degraded && !rechecking && Date.now() - lastAttempt >= recheckMs) {
        rechecking = true;
        void range('00000')
          .then((r) => {
            if ('body' in r) answered();
          })
          .finally(() => {
            rechecking = false;
          });
      }
      return degraded ? 'degraded' : 'ok';
    },
  };
}
