/**
 * Caches that are full drop their least recently used entry (lru-cache), not everything: the auth hook's user
 * cache; the verified-token cache keeps only verified tokens.
 */
import { describe, expect, it } from 'vitest';
import { createUserCache } from './auth.ts';
import { createTokens } from './tokens.ts';

describe("the auth hook's user cache", () => {
  const row = (id: number) => ({
    id,
    email: `u${id}@b.c`,
    name: null,
    role: 'user' as const,
    plan: 'free',
    email_verified: true,
    password_version: 0,
    chat_id: String(id),
    created_at: new Date(),
  });

  it('when full, drops the least recently used row and keeps the others', () => {
    const cache = createUserCache({ max: 2, ttlMs: 60_000 });
    cache.set(row(1), cache.mark());
    cache.set(row(2), cache.mark());
    expect(cache.get(1)?.id).toBe(1);
    cache.set(row(3), cache.mark());
    expect(cache.get(2)).toBeUndefined();
    expect(cache.get(1)?.id).toBe(1);
    expect(cache.get(3)?.id).toBe(3);
  });
});

describe('the verified-token cache', () => {
  it('peeks a verified token without verifying it again, and never a forged one', async () => {
    const tokens = createTokens('x'.repeat(32));
    const token = await tokens.sign({ sub: 5, role: 'user', pv: 0, chat_id: '5' });
    expect(tokens.peek(token)).toBeUndefined();
    expect(await tokens.verify(token)).toMatchObject({ sub: 5 });
    expect(tokens.peek(token)).toMatchObject({ sub: 5 });
    const forged = `${token.slice(0, -4)}AAAA`;
    expect(await tokens.verify(forged)).toBeUndefined();
    expect(tokens.peek(forged)).toBeUndefined();
  });
});
