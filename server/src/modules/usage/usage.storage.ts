/**
 * Storage quotas and the disk floor (docs/ARCHITECTURE.md, Storage quotas; docs/configuration.md): the one helper
 * every area asks before it writes a user's bytes (project files, note sources, transcripts, wiki pages), owned by
 * the usage area beside the plans.
 *
 * Accounting: a user's bytes are measured by walking their folders and summing their rows' bytes (`measure`, wired
 * in services.ts from each area), kept in `storage_usage` with the time of the measure; each granted write adds its
 * bytes to the row in one conditional UPDATE (so two writes racing for the last bytes cannot both pass, on any
 * instance). The measure is redone when older than `MEASURE_TTL_MS`, or at once after a removal (`changed`), so
 * bytes written outside the grants (the cloud home, a failed write's bytes) are counted within that time.
 */
import fsp from 'node:fs/promises';
import { InsufficientStorage, PayloadTooLarge } from '../../http/errors.ts';
import type { UsageRepo } from './usage.repo.ts';
import { type Owner, storageDecision, storageQuota, storageQuotas } from './usage.rules.ts';

/** A measure of a user's bytes is trusted this long (ms); then the next write measures again. */
export const MEASURE_TTL_MS = 60_000;

export interface StorageDeps {
  repo: Pick<UsageRepo, 'storageRow' | 'setStorage' | 'chargeStorage' | 'staleStorage'>;
  owners: { planOf(userId: number): Promise<Owner> };
  /** Every byte a user's data holds now (folders walked, rows summed). */
  measure(userId: number): Promise<number>;
  /** DATA_DIR: its file system's free space is kept above `floorBytes`. */
  dataDir: string;
  /** DISK_FREE_FLOOR_MB in bytes. */
  floorBytes: number;
  /** Quotas per plan in bytes overriding the rules' (STORAGE_QUOTAS_MB). */
  overrides: Record<string, number | null>;
}

/** The storage figures of one user, as the account's usage answer shows them (bytes; quota null = none). */
export interface StorageUsage {
  used_bytes: number;
  quota_bytes: number | null;
  plan: string;
  /** Every plan's quota in bytes (null = none). */
  quotas: Record<string, number | null>;
}

export function createStorageQuota(deps: StorageDeps) {
  const { repo } = deps;

  /** Bytes free to unprivileged users on DATA_DIR's file system. */
  const freeDisk = async (): Promise<number> => {
    const s = await fsp.statfs(deps.dataDir);
    return Number(s.bavail) * Number(s.bsize);
  };

  /** The user's bytes, measured again when the stored measure is missing or stale. */
  const fresh = async (userId: number): Promise<number> => {
    const row = await repo.storageRow(userId);
    if (row && Date.now() - +row.measured_at < MEASURE_TTL_MS) return row.bytes;
    const bytes = await deps.measure(userId);
    await repo.setStorage(userId, bytes);
    return bytes;
  };

  const refused = (used: number, quota: number, bytes: number) =>
    new PayloadTooLarge(
      `This would take your files past your storage quota of ${quota} bytes (${used} used); delete files or upgrade.`,
      'storage_quota_exceeded',
      { used_bytes: used, quota_bytes: quota, needed_bytes: bytes },
    );

  /**
   * Refuse a write the disk cannot take: when it would leave less than the floor free under DATA_DIR.
   * @param bytes the write's size (0 when unknown yet).
   * @throws InsufficientStorage 507 `insufficient_storage`.
   */
  const assertDisk = async (bytes = 0): Promise<void> => {
    if (storageDecision({ bytes, used: 0, quota: null, freeDisk: await freeDisk(), floor: deps.floorBytes }) === 'disk')
      throw new InsufficientStorage(
        'insufficient_storage',
        'The server is short of disk space and cannot store this now; try again later.',
      );
  };

  return {
    /** The disk floor in bytes (DISK_FREE_FLOOR_MB). */
    floorBytes: deps.floorBytes,

    assertDisk,

    /**
     * Grant `bytes` of new data to user `ownerId` (the owner of the project written to) before it is written: the disk
     * floor first, then the owner's quota; the bytes are counted at once (docs/ARCHITECTURE.md, Storage quotas).
     * Call it with 0 before a write of unknown size (it needs the quota not spent), then with the size once known.
     * @throws InsufficientStorage 507 `insufficient_storage`; PayloadTooLarge 413 `storage_quota_exceeded`
     *   `{used_bytes, quota_bytes, needed_bytes}`.
     */
    async reserve(ownerId: number, bytes: number): Promise<void> {
      await assertDisk(bytes);
      const quota = storageQuota(await deps.owners.planOf(ownerId), deps.overrides);
      if (quota === null) return;
      const used = await fresh(ownerId);
      if ((await repo.chargeStorage(ownerId, bytes, quota)) === null)
        throw refused((await repo.storageRow(ownerId))?.bytes ?? used, quota, bytes);
    },

    /** Files of user `ownerId` were removed or replaced: measure again before the next write. */
    async changed(ownerId: number): Promise<void> {
      await repo.staleStorage(ownerId);
    },

    /** The account's storage figures (`GET /api/crm/account/usage`, `storage`). */
    async usageOf(userId: number): Promise<StorageUsage> {
      const owner = await deps.owners.planOf(userId);
      return {
        used_bytes: await fresh(userId),
        quota_bytes: storageQuota(owner, deps.overrides),
        plan: owner.plan,
        quotas: storageQuotas(deps.overrides),
      };
    },
  };
}

export type StorageQuota = ReturnType<typeof createStorageQuota>;
