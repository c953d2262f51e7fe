/**
 * What one area holds of a user (docs/ARCHITECTURE.md, Privacy: export, erasure, retention). Every
 * area that stores a user's data contributes one `PersonalData` entry (`<area>.privacy.ts`), listed in the
 * composition root (services.ts `personalData`); the privacy area exports and erases through them, so an area
 * cannot be forgotten: erasure reaches its rows, its files under DATA_DIR, its vectors and its queued jobs.
 */
import type { Transaction } from 'kysely';
import type { DB } from '../db/types.ts';

export interface PersonalData {
  /** The area's name; also its key in the export (a section, or a key inside each project). */
  area: string;
  /**
   * The user's own rows outside projects, for the export. JSON-serialisable; never a secret, hash or token.
   * A section that may be large resolves to an async iterable of rows instead, written to the download as a
   * JSON array while it is read (see `pagedById` in db/privacy-sql.ts).
   */
  exportUser?(userId: number): Promise<unknown>;
  /** One of the user's projects' rows, for the export's `projects[i][area]` (an async iterable streams, as above). */
  exportProject?(projectId: number): Promise<unknown>;
  /** Delete one of the user's projects' rows of this area, inside the erasure transaction. */
  eraseProject?(tx: Transaction<DB>, projectId: number): Promise<void>;
  /** Delete the user's own rows of this area, inside the erasure transaction (after their projects'). */
  eraseUser?(tx: Transaction<DB>, userId: number): Promise<void>;
  /**
   * After the erasure committed: remove what lives outside the rows — files and blobs under DATA_DIR, vectors
   * of the semantic index, queued jobs, containers. Best effort: a failure is logged and retried, never undoes
   * the erasure.
   */
  afterErase?(scope: { userId: number; projectIds: number[] }): Promise<void>;
}
