import { describe, expect, it } from 'vitest';
import { REDACTED, redactSecrets } from './mail.ts';

describe('the record of a mail sent over SMTP keeps no live token', () => {
  it('replaces the named secrets and every token= value of a link', () => {
    const text =
      'Open https://app.test/verify-email?token=abc_DEF-123 within 48 hours.\n' +
      'Or https://app.test/reset-password?x=1&token=zzz#top. Code: INV-7788 (INV-7788).';
    const out = redactSecrets(text, ['INV-7788', '']);
    expect(out).toBe(
      `Open https://app.test/verify-email?token=${REDACTED} within 48 hours.\n` +
        `Or https://app.test/reset-password?x=1&token=${REDACTED}#top. Code: ${REDACTED} (${REDACTED}).`,
    );
    expect(redactSecrets('nothing secret here')).toBe('nothing secret here');
  });
});
