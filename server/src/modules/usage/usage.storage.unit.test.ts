/** The storage rules of usage.rules.ts: quotas by plan, overrides, and the decision of one write. */
import { describe, expect, it } from 'vitest';
import { STORAGE_QUOTAS, storageDecision, storageQuota, storageQuotas } from './usage.rules.ts';

describe('storage quotas', () => {
  it('gives each plan its quota, none to admins and beta, free to unknown plans; overrides win', () => {
    expect(storageQuota({ plan: 'free', role: 'user' })).toBe(STORAGE_QUOTAS.free);
    expect(storageQuota({ plan: 'max', role: 'user' })).toBe(50 * 1024 ** 3);
    expect(storageQuota({ plan: 'beta', role: 'user' })).toBeNull();
    expect(storageQuota({ plan: 'free', role: 'admin' })).toBeNull();
    expect(storageQuota({ plan: 'gold', role: 'user' })).toBe(STORAGE_QUOTAS.free);
    expect(storageQuota({ plan: 'free', role: 'user' }, { free: 5 })).toBe(5);
    expect(storageQuota({ plan: 'cloud', role: 'user' }, { cloud: null })).toBeNull();
    expect(storageQuotas({ free: 7 })).toMatchObject({ free: 7, beta: null });
  });

  it('refuses a write under the disk floor first, then past the quota; a 0-byte write needs room left', () => {
    const base = { used: 90, quota: 100, freeDisk: 10_000, floor: 1000 };
    expect(storageDecision({ ...base, bytes: 10 })).toBe('ok');
    expect(storageDecision({ ...base, bytes: 11 })).toBe('quota');
    expect(storageDecision({ ...base, bytes: 0 })).toBe('ok');
    expect(storageDecision({ ...base, used: 100, bytes: 0 })).toBe('quota');
    expect(storageDecision({ ...base, bytes: 9001 })).toBe('disk');
    expect(storageDecision({ ...base, quota: null, bytes: 5000 })).toBe('ok');
  });
});
