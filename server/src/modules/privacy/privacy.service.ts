/**
 * Privacy (docs/ARCHITECTURE.md, Privacy: export, erasure, retention), over the registry of
 * personal data (lib/personal-data.ts) that every area contributes to in services.ts:
 *
 *  - export (`GET /api/auth/export`): a JSON document written to the download while it is read, section by
 *    section and for large sections page by page, so a large account is never held in memory. The sections
 *    `profile`, `account_settings`, `projects` (each project's record with its `messages`, `issues`,
 *    `activity`, … by area), `auth_events`, `token_usage`, `arc_help_history`, `export_history` and the other
 *    areas' sections. At most 3 per user per 24 hours (the 4th: 429 `export_limit`); each is recorded.
 *  - erasure (`DELETE /api/auth/account`): in ONE transaction, each owned project's rows area by area (the
 *    registry's order: dependents first, the project row last), then the user's own rows (the account last);
 *    queued jobs of the erased runs and documents are dropped in it. After the commit each area's `afterErase`
 *    removes what lives outside the rows (files and blobs under DATA_DIR, containers): at once, and again by
 *    the durable `privacy.after_erase` job (retried) so a failure never leaves them behind for good.
 *  - retention: a daily purge, claimed once per UTC day across instances (`retention_runs`), run by the
 *    `privacy.retention` job: chat messages 180 days, activity log 365, auth events 90, token usage 730,
 *    export audit 365, each area deleting its own rows in batches of 5,000.
 */
import { Readable } from 'node:stream';
import { BadRequest, NotFound, TooManyRequests } from '../../http/errors.ts';
import type { Actor } from '../../http/auth.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Logger } from '../../lib/logger.ts';
import type { PersonalData } from '../../lib/personal-data.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import type { ProjectsRepo } from '../projects/projects.repo.ts';
import type { PrivacyRepo } from './privacy.repo.ts';
import { ERASE_CONFIRMATION } from './privacy.rules.ts';

/** Exports per user in any 24 hours. */
export const EXPORTS_PER_DAY = 3;
/** Days each kind of row is kept by the daily purge. */
export const RETENTION_DAYS = {
  chat_messages: 180,
  activity_log: 365,
  auth_events: 90,
  token_usage: 730,
  export_history: 365,
} as const;
export type RetentionTable = keyof typeof RETENTION_DAYS;

/** The export's top-level sections in the order they are written (the others follow in registry order). */
const SECTION_ORDER = ['profile', 'account_settings', 'projects', 'auth_events', 'token_usage', 'arc_help_history'];

export interface PrivacyDeps {
  repo: PrivacyRepo;
  /** Every area's personal data, in erasure order (services.ts `personalData`). */
  registry: PersonalData[];
  accounts: Pick<AccountsRepo, 'exportProfile' | 'lockUser'>;
  projects: Pick<ProjectsRepo, 'ownerProjectIds'>;
  jobs: Pick<JobQueue, 'send'>;
  /** Drops the erased user from the auth hook's cache on every instance. */
  userCache: { changed(id: number): Promise<void> };
  /** Each area's purge of its own rows older than a date (rows deleted). */
  purgers: Record<RetentionTable, (before: Date) => Promise<number>>;
  log: Logger;
}

const isAsyncIterable = (v: unknown): v is AsyncIterable<unknown> =>
  !!v && typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';

/** JSON text of a value; undefined (a missing record) is written as null. */
const json = (v: unknown) => JSON.stringify(v ?? null);

/** A section's value as JSON text pieces: an async iterable becomes an array written row by row. */
async function* jsonValue(v: unknown): AsyncGenerator<string> {
  if (!isAsyncIterable(v)) {
    yield json(v);
    return;
  }
  yield '[';
  let first = true;
  let buf = '';
  for await (const row of v) {
    buf += (first ? '' : ',') + json(row);
    first = false;
    if (buf.length >= 65_536) {
      yield buf;
      buf = '';
    }
  }
  yield `${buf}]`;
}

const utcDay = (d: Date) => d.toISOString().slice(0, 10);

export function createPrivacyService(deps: PrivacyDeps) {
  const { repo, registry, log } = deps;
  let stopped = true;
  let checking: Promise<void> | undefined;
  /** One check at start (the hourly ones are the `privacy.retention_check` job's), none once stopped. */
  const tick = () => {
    if (stopped || checking) return;
    checking = scheduleRetention()
      .then(
        () => undefined,
        (err) => log.warn({ err }, 'retention purge could not be scheduled'),
      )
      .finally(() => {
        checking = undefined;
      });
  };

  /** The export document of a user, as JSON text pieces. */
  async function* exportDocument(userId: number, projectIds: number[]): AsyncGenerator<string> {
    const userEntries = registry.filter((e) => e.exportUser);
    const rank = (area: string) => {
      const i = SECTION_ORDER.indexOf(area);
      return i < 0 ? SECTION_ORDER.length : i;
    };
    const sections: Array<{ area: string; write: () => AsyncGenerator<string> }> = [
      ...userEntries.map((e) => ({
        area: e.area,
        write: async function* () {
          yield* jsonValue(await e.exportUser!(userId));
        },
      })),
      { area: 'projects', write: () => projectsSection(projectIds) },
      {
        area: 'export_history',
        write: async function* () {
          yield json(await repo.exportHistory(userId));
        },
      },
    ].sort((a, b) => rank(a.area) - rank(b.area));
    yield `{"format":"crm-export/1","exported_at":${json(new Date().toISOString())}`;
    for (const s of sections) {
      yield `,${json(s.area)}:`;
      yield* s.write();
    }
    yield '}\n';
  }

  /** `projects`: per project, the `project` entry's fields, then each other area's rows under its name. */
  async function* projectsSection(projectIds: number[]): AsyncGenerator<string> {
    const record = registry.find((e) => e.area === 'project');
    const others = registry.filter((e) => e.exportProject && e !== record);
    yield '[';
    for (const [i, id] of projectIds.entries()) {
      const head = { id, ...((await record?.exportProject?.(id)) as Record<string, unknown> | undefined) };
      yield (i ? ',' : '') + json(head).slice(0, -1);
      for (const e of others) {
        yield `,${json(e.area)}:`;
        yield* jsonValue(await e.exportProject!(id));
      }
      yield '}';
    }
    yield ']';
  }

  /** Each area's clean-up outside the rows; every entry is tried. @throws after all when any failed. */
  async function afterErase(scope: { userId: number; projectIds: number[] }): Promise<void> {
    let failed = 0;
    for (const e of registry) {
      try {
        await e.afterErase?.(scope);
      } catch (err) {
        failed++;
        log.warn({ err, area: e.area, user_id: scope.userId }, 'erasure clean-up failed; it is retried');
      }
    }
    if (failed) throw new Error(`${failed} erasure clean-up step(s) failed`);
  }

  /** Claim today's purge (once across instances) and queue it. @returns whether this call claimed it. */
  async function scheduleRetention(now = new Date()): Promise<boolean> {
    const day = utcDay(now);
    return repo.transaction(async (tx) => {
      if (!(await repo.claimRetentionDay(tx, day))) return false;
      await deps.jobs.send('privacy.retention', { day }, { tx, singletonKey: `privacy.retention:${day}` });
      return true;
    });
  }

  return {
    /**
     * `GET /api/auth/export`: the caller's data as a JSON download named `crm-export-<YYYY-MM-DD>.json`.
     * @returns the file name and the document as a stream (read while it is sent)
     * @throws NotFound `user_not_found`; TooManyRequests `export_limit` (429) on the 4th export in 24 hours
     */
    async exportData(actor: Actor): Promise<{ filename: string; stream: Readable }> {
      if (!(await deps.accounts.exportProfile(actor.id)))
        throw new NotFound('The user does not exist.', 'user_not_found');
      const now = new Date();
      const claim = await repo.claimExport(actor.id, EXPORTS_PER_DAY, new Date(now.getTime() - 86_400_000));
      if (!claim.ok) {
        const retryAt = new Date((claim.oldest ?? now).getTime() + 86_400_000);
        throw new TooManyRequests('export_limit', `At most ${EXPORTS_PER_DAY} exports per 24 hours.`, {
          limit: EXPORTS_PER_DAY,
          retry_at: retryAt.toISOString(),
        });
      }
      const projectIds = await deps.projects.ownerProjectIds(actor.id);
      return {
        filename: `crm-export-${utcDay(now)}.json`,
        stream: Readable.from(exportDocument(actor.id, projectIds), { objectMode: false }),
      };
    },

    /**
     * `DELETE /api/auth/account {confirm}`: erase the caller's account and everything of it (module header).
     * @returns `{ok:true, email, message}`
     * @throws BadRequest `confirmation_required` unless `confirm` is exactly `DELETE MY ACCOUNT`;
     *   NotFound `user_not_found`
     */
    async erase(actor: Actor, confirm: string): Promise<{ ok: true; email: string; message: string }> {
      if (confirm !== ERASE_CONFIRMATION)
        throw new BadRequest('confirmation_required', `Type ${ERASE_CONFIRMATION} exactly to erase the account.`);
      const profile = await deps.accounts.exportProfile(actor.id);
      if (!profile) throw new NotFound('The user does not exist.', 'user_not_found');
      const userId = actor.id;
      const projectIds = await repo.transaction(async (tx) => {
        if (!(await deps.accounts.lockUser(tx, userId)))
          throw new NotFound('The user does not exist.', 'user_not_found');
        const ids = await deps.projects.ownerProjectIds(userId, tx);
        for (const id of ids) for (const e of registry) await e.eraseProject?.(tx, id);
        for (const e of registry) await e.eraseUser?.(tx, userId);
        await deps.jobs.send('privacy.after_erase', { user_id: userId, project_ids: ids }, { tx });
        return ids;
      });
      await deps.userCache.changed(userId);
      // At once (the answer comes after the files are gone); the queued job repeats what failed.
      await afterErase({ userId, projectIds }).catch(() => {});
      log.info({ user_id: userId, projects: projectIds.length }, 'account erased');
      return { ok: true, email: profile.email, message: 'Your account and all its data have been erased.' };
    },

    /** The `privacy.after_erase` job: every area's clean-up outside the rows. @throws when a step failed (retried). */
    afterErase,

    /**
     * The `privacy.retention` job: purge every kind of row past its retention (RETENTION_DAYS), in batches,
     * and record the counts on the day's `retention_runs` row. @returns rows deleted by table
     */
    async purge(day: string = utcDay(new Date()), now = new Date()): Promise<Record<RetentionTable, number>> {
      const deleted = {} as Record<RetentionTable, number>;
      for (const [table, days] of Object.entries(RETENTION_DAYS) as Array<[RetentionTable, number]>)
        deleted[table] = await deps.purgers[table](new Date(now.getTime() - days * 86_400_000));
      await repo.finishRetention(day, deleted);
      log.info({ day, deleted }, 'retention purge done');
      return deleted;
    },

    scheduleRetention,

    /**
     * Lifecycle: check now whether today's purge is claimed; claim and queue it if not. The hourly checks
     * after it are pg-boss's schedule (`privacy.retention_check`, privacy.jobs.ts).
     */
    start(): void {
      stopped = false;
      tick();
    },
    /** Lifecycle: no further check; waits for one under way (before the job queue stops). */
    async stop(): Promise<void> {
      stopped = true;
      await checking;
    },
  };
}

export type PrivacyService = ReturnType<typeof createPrivacyService>;
