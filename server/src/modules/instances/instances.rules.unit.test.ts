import { describe, expect, it } from 'vitest';
import { isPredecessor, renewEvery, type Self } from './instances.rules.ts';

const started = new Date('2026-01-01T10:00:00Z');
const self: Self = {
  id: 'me',
  name: 'vm:3000',
  host: 'vm',
  bootId: 'boot-1',
  pid: 100,
  processStartedAt: started,
  exclusive: false,
};
const row = (over: Partial<Parameters<typeof isPredecessor>[0]> = {}) => ({
  id: 'other',
  name: 'vm:3000',
  host: 'vm',
  boot_id: 'boot-1',
  pid: 200,
  process_started_at: new Date(+started - 60_000),
  ...over,
});
const alive = (pids: number[]) => (pid: number) => pids.includes(pid);

describe('dead predecessors (instances/instances.rules.ts)', () => {
  it('on a server: a row of this machine whose process is gone is taken over at once', () => {
    expect(isPredecessor(row(), self, alive([]))).toBe(true);
    expect(isPredecessor(row(), self, alive([200]))).toBe(false); // its process still runs
  });

  it('on a server: another machine (host name or boot id) waits for its lease to lapse', () => {
    expect(isPredecessor(row({ host: 'other-vm' }), self, alive([]))).toBe(false);
    expect(isPredecessor(row({ boot_id: 'boot-2' }), self, alive([]))).toBe(false);
    expect(isPredecessor(row({ boot_id: null }), self, alive([]))).toBe(false);
  });

  it('the same pid: a container restarted (earlier process) is a predecessor; another instance of this process is not', () => {
    expect(isPredecessor(row({ pid: 100 }), self, alive([100]))).toBe(true);
    expect(isPredecessor(row({ pid: 100, process_started_at: started }), self, alive([100]))).toBe(false);
    expect(isPredecessor(row({ id: 'me', pid: 100 }), self, alive([100]))).toBe(false);
  });

  it('on the embedded database every other process is dead, wherever it ran', () => {
    const ex = { ...self, exclusive: true };
    expect(isPredecessor(row({ host: 'elsewhere', boot_id: null }), ex, alive([200]))).toBe(true);
    expect(isPredecessor(row({ pid: 100, process_started_at: started }), ex, alive([100]))).toBe(false);
    expect(isPredecessor(row({ pid: 100 }), ex, alive([100]))).toBe(true);
  });

  it('a lease is renewed every fifth of its length', () => {
    expect(renewEvery(10_000)).toBe(2000);
    expect(renewEvery(500)).toBe(200);
  });
});
