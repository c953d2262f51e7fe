/** The SDK client cache drops its least recently used client when full (lru-cache), not every client. */
import { describe, expect, it } from 'vitest';
import { clientCache } from './client-cache.ts';

describe('the SDK client cache', () => {
  it('keeps at most max clients and drops the least recently used one', () => {
    const made: string[] = [];
    const get = clientCache((key) => (made.push(key), { key }), 2);
    const a = get('a');
    get('b');
    expect(get('a')).toBe(a); // a is now the most recently used
    get('c'); // drops b
    expect(get('a')).toBe(a);
    get('b');
    expect(made).toEqual(['a', 'b', 'c', 'b']);
  });
});
