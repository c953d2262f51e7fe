import { describe, expect, it } from 'vitest';
import { buildMemoryMb } from './knowledge.repo.ts';

describe('buildMemoryMb', () => {
  it('gives the HNSW build at least 512 MB, enough for the graph of the stored vectors, and at most 1 GB', () => {
    expect(buildMemoryMb(0, 256)).toBe(512);
    expect(buildMemoryMb(100_000, 256)).toBe(512);
    // 500,000 vectors of 256 dimensions: ~1,624 bytes each, a tenth to spare.
    expect(buildMemoryMb(500_000, 256)).toBe(Math.ceil((500_000 * 1624 * 1.1) / 2 ** 20));
    expect(buildMemoryMb(1_000_000, 256)).toBe(1024);
  });
});
