/**
 * Ports: the small interfaces through which the agent's tools reach other areas (issues, skills, wiki,
 * semantic search). Each owning area implements its port over its own service (`<area>.port.ts`), and the
 * composition root (services.ts) hands them to the runtime:
 *
 *   ports: { issues: createIssuesPort({ issues, access }), skills: …, wiki: …, search: … }
 *
 * A tool whose port is absent is not offered to the LLM. Port methods throw the errors of
 * `http/errors.ts` (NotFound, BadRequest, …); the tool turns them into an `is_error` tool result.
 */
import type { PassageLocation } from '../../lib/doc-sources.ts';

/** An issue as the agent sees it (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings). */
export interface IssueSummary {
  id: number;
  title: string;
  status: 'open' | 'in_progress' | 'blocked' | 'deferred' | 'closed';
  assignee: string | null;
  priority: string | null;
}

/**
 * The issues area's port. It records the activity events of what it does (`issue_pick`, `issue_close`,
 * `issue_log`, with the worker resolved from the assignee/author label), so tools do not write them again.
 * `author` / `assignee` is the acting worker's label: the issue's `created_by` and its entries credit the
 * worker, not the project's owner.
 */
export interface IssuesPort {
  /** Create an issue (status open), credited to `author`. */
  create(p: {
    projectId: number;
    title: string;
    priority?: string;
    description?: string;
    author: string;
    /** The tool call creating it: made again after a crash, it answers the issue it created. */
    key?: string;
  }): Promise<IssueSummary>;
  /**
   * Take an issue: status in_progress and `assignee` (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins,
   * learnings). @throws NotFound
   */
  take(p: { projectId: number; issueId: number; assignee: string }): Promise<IssueSummary>;
  /** Change fields of an issue, credited to `author`. @throws NotFound; BadRequest on an unknown status. */
  update(p: {
    projectId: number;
    issueId: number;
    author: string;
    status?: IssueSummary['status'];
    assignee?: string | null;
    title?: string;
    priority?: string;
    description?: string;
  }): Promise<IssueSummary>;
  /** Append an activity entry. @throws NotFound */
  log(p: { projectId: number; issueId: number; message: string; author: string }): Promise<{ ok: true }>;
}

export interface SkillsPort {
  /**
   * The skills a worker of the project may use: its own (forks and installed ones included) and those the platform
   * ships; never another user's published global skill (skills.port.ts). Names and one-line descriptions.
   */
  list(projectId: number): Promise<Array<{ name: string; description: string }>>;
  /** One of those skills by name (the project's own first), or null. */
  get(projectId: number, name: string): Promise<{ name: string; content: string } | null>;
}

export interface WikiPort {
  /** A page by path, or null. */
  read(projectId: number, path: string): Promise<{ path: string; content: string } | null>;
  /** Create or replace a page, credited to `author` (`updated_by`); the wiki area re-embeds it. */
  save(projectId: number, path: string, content: string, author: string): Promise<{ path: string }>;
}

export interface SearchPort {
  /** Semantic search over the project's index (and the global one); `k` 1–25. */
  search(
    projectId: number,
    query: string,
    k: number,
  ): Promise<
    Array<{
      doc_type: string;
      doc_id: string;
      title?: string;
      location?: PassageLocation;
      text: string;
      distance: number;
    }>
  >;
}

/**
 * Commands for the agent: they run inside the project owner's cloud container (resumed first when paused),
 * never on the service's host (the cloud area's `cloud.port.ts`).
 */
export interface ShellPort {
  /**
   * Run `command` with `sh -c` in the home of user `userId`'s container, with a time limit.
   * @returns exit code (null on the time limit) and output (last 64 KB), or null when the user has no container.
   */
  run(
    userId: number,
    command: string,
    opts: { timeoutMs: number },
  ): Promise<{ code: number | null; output: string; timedOut: boolean } | null>;
}

/** The storage quota of the project owner and the disk floor (the usage area's `usage.storage.ts`). */
export interface StoragePort {
  /**
   * Grant `bytes` of new data to user `ownerId` before writing them.
   * @throws 413 `storage_quota_exceeded` `{used_bytes, quota_bytes}`, 507 `insufficient_storage`.
   */
  reserve(ownerId: number, bytes: number): Promise<void>;
}

/** The registered ports; absent ones disable their tools. */
export interface AgentPorts {
  shell?: ShellPort;
  /** Absent: file writes are not checked against a quota. */
  storage?: StoragePort;
  issues?: IssuesPort;
  skills?: SkillsPort;
  wiki?: WikiPort;
  search?: SearchPort;
}
