/**
 * The command-line client's side of the service (docs/ARCHITECTURE.md, The command-line client):
 *
 * - device check-ins (`heartbeat`): one `cli_devices` row per user and device; the user's first device records
 *   `cli_invocation`. The CLI status is "installed" when a device check-in or a confirmed CLI login happened in
 *   the last 30 days;
 * - session summaries (`sessionEnd`): a `cli_session_end` event on the project's timeline;
 * - transcripts: gzip of the session's raw jsonl, one per (owner, session id), refused over 4 MB compressed or
 *   32 MB inflated;
 * - the device link: the CLI asks for a code (`createLink`), a signed-in user confirms it (`confirmLink`), and
 *   the link stream (`linkStream`) hands the CLI its token once;
 * - `arc init`: the worker's context as the runtime assembles it (`buildWorkerContext`).
 *
 * The CLI sends its release in `X-Arc-Version`: heartbeats count from 1.0.14, rich session summaries from 1.0.15,
 * transcript uploads from 1.0.16. A caller naming no version (web UI, curl) has every feature.
 */
import crypto from 'node:crypto';
import type { Static } from 'typebox';
import type { Access } from '../../access/access.ts';
import type { Actor } from '../../http/auth.ts';
import { AppError, BadRequest, Conflict, Gone, NotFound, PayloadTooLarge, Unauthorized } from '../../http/errors.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import { follow } from '../../lib/follow.ts';
import type { Logger } from '../../lib/logger.ts';
import type { AccountsService, RequestMeta } from '../accounts/accounts.service.ts';
import type { TokensService } from '../accounts/tokens.service.ts';
import type { ProjectsRepo } from '../projects/projects.repo.ts';
import { buildWorkerContext } from '../runtime/context.ts';
import type { SkillsPort } from '../runtime/ports.ts';
import type { WorkersRepo } from '../workers/workers.repo.ts';
import type { CliPackage } from './cli.package.ts';
import type { CliRepo } from './cli.repo.ts';
import { cliHas, collapsePrompt, decodeTranscript, inflateBounded, transcriptMessages } from './cli.rules.ts';
import type * as S from './cli.schemas.ts';

/** Devices listed at most (newest first). */
export const DEVICES_LIMIT = 20;
/** Days a device check-in or CLI login keeps the CLI status "installed". */
export const INSTALLED_DAYS = 30;
/** Session events listed by default and at most. */
export const SESSIONS_DEFAULT = 120;
export const SESSIONS_MAX = 500;
/** Transcripts listed at most. */
export const TRANSCRIPTS_LIMIT = 500;
/** A link code's life (ms) and the link stream's (10 minutes). */
export const LINK_TTL_MS = 10 * 60 * 1000;
/** How often the link stream looks at the link (ms). */
export const LINK_POLL_MS = 1500;
/** The timeline event a session summary writes. */
export const SESSION_END_EVENT = 'cli_session_end';
/** Platforms of the download route. */
export const PLATFORMS = ['linux', 'macos', 'windows'] as const;

export interface CliDeps {
  repo: CliRepo;
  access: Pick<Access, 'project'>;
  activity: Pick<ActivityLog, 'record' | 'recordBestEffort' | 'list'>;
  accounts: Pick<AccountsService, 'loginElsewhere'>;
  /** Device credentials (access tokens of kind `device`): issued by the link, revoked from the devices list. */
  credentials: Pick<TokensService, 'issueDevice' | 'revokeDevice' | 'deviceCredentials'>;
  projects: Pick<ProjectsRepo, 'record'>;
  workers: Pick<WorkersRepo, 'refs' | 'full'>;
  /** The skills a project sees, as the runtime's context reads them. */
  skills: SkillsPort;
  /** Working directory of a project (the manifest is read there). */
  projectDir: (projectId: number) => string;
  /** The `arc` package this service ships (`cli/` of the repository), as npm installs it. */
  pkg: Pick<CliPackage, 'manifest' | 'tarball'>;
  /** The service's public origin (link pages, the package's address). */
  appUrl: string;
  log: Logger;
  /** The link stream's poll interval and lifetime (ms); defaults 1500 and 10 minutes. */
  linkPollMs?: number;
  linkTimeoutMs?: number;
}

type HeartbeatBody = Static<typeof S.HeartbeatBody>;
type SessionEndBody = Static<typeof S.SessionEndBody>;
type TranscriptBody = Static<typeof S.TranscriptBody>;

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
/** Code alphabet without look-alikes (no 0/O, 1/I/L). */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/** A link code `XXXX-XXXX` (31^8 ≈ 8.5·10^11 codes). */
function newCode(): string {
  const bytes = crypto.randomBytes(8);
  let s = '';
  for (let i = 0; i < 8; i++) s += CODE_ALPHABET[bytes[i] % CODE_ALPHABET.length];
  return `${s.slice(0, 4)}-${s.slice(4)}`;
}

export function createCliService(deps: CliDeps) {
  const { repo, access, activity } = deps;
  const pollMs = deps.linkPollMs ?? LINK_POLL_MS;
  const timeoutMs = deps.linkTimeoutMs ?? LINK_TTL_MS;

  /** The worker a CLI mode names in a project: its id, or its label or role (case-insensitive); else null. */
  async function workerFor(projectId: number, mode: string) {
    const refs = await deps.workers.refs(projectId);
    const m = mode.trim().toLowerCase();
    return (
      refs.find((w) => String(w.id) === m) ??
      refs.find((w) => w.label.toLowerCase() === m) ??
      refs.find((w) => (w.role ?? '').toLowerCase() === m) ??
      null
    );
  }

  /** The caller's status of the CLI: installed when it checked in or logged in within 30 days. */
  async function status(actor: Actor) {
    const last = await repo.lastCliAt(actor.id);
    const installed = !!last && Date.now() - last.getTime() <= INSTALLED_DAYS * 24 * 3600 * 1000;
    return { installed, last_cli_at: last ? last.toISOString() : null };
  }

  function transcriptRefused(problem: string): AppError {
    switch (problem) {
      case 'too_large_compressed':
        return new PayloadTooLarge('The transcript is over 4 MB compressed.', 'transcript_too_large');
      case 'too_large_raw':
        return new PayloadTooLarge('The transcript inflates to more than 32 MB.', 'transcript_too_large');
      case 'not_base64':
        return new BadRequest('invalid_transcript', 'gzip_b64 is not base64.');
      default:
        return new BadRequest('invalid_transcript', 'gzip_b64 is not a gzip stream.');
    }
  }

  /** One of the caller's transcripts in a project, inflated. */
  async function readTranscript(actor: Actor, projectName: string, sessionId: string) {
    const p = await access.project(actor, projectName);
    const row = await repo.transcript(actor.id, p.id, sessionId);
    if (!row) throw new NotFound('No transcript of yours has this session id.', 'transcript_not_found');
    const { gzip, ...summary } = row;
    const inflated = inflateBounded(gzip);
    if ('problem' in inflated) throw transcriptRefused(inflated.problem);
    return { summary, jsonl: inflated.raw.toString('utf8') };
  }

  /**
   * GET /api/cli/install/:platform (public): how to install the CLI on that platform, recording nothing (the
   * account's CLI tab shows these steps; only a download counts). The steps install the package this service
   * serves (`GET /api/cli/arc.tgz`) with npm, then link the device.
   * @returns `{platform, version, package, requires, url, install: string[]}`
   * @throws Upstream 503 `cli_package_unavailable` when this installation has no `arc` package
   */
  function installSteps(platform: (typeof PLATFORMS)[number]) {
    const { version } = deps.pkg.manifest();
    const url = `${deps.appUrl}/api/cli/arc.tgz`;
    return {
      platform,
      version,
      package: 'arc',
      requires: 'Node.js 20 or newer, with npm',
      url,
      install: [
        platform === 'windows'
          ? `npm install -g ${url}`
          : `npm install -g ${url}   # sudo when npm's prefix is not yours`,
        `arc login --server ${deps.appUrl}`,
      ],
    };
  }

  return {
    /**
     * POST /api/cli/heartbeat: a device check-in (fire and forget). Inserts or refreshes the device; the user's
     * first device records `cli_invocation`. A CLI older than 1.0.14 is answered but not recorded.
     * @returns `{ok:true, recorded}`.
     */
    async heartbeat(actor: Actor, body: HeartbeatBody, version: string | undefined) {
      if (!cliHas(version ?? body.version, 'heartbeat')) return { ok: true, recorded: false };
      const device = {
        userId: actor.id,
        deviceId: body.device_id,
        hostname: body.hostname,
        platform: body.platform,
        version: body.version,
        project: body.project ?? null,
      };
      // A known device (the common case): one update, no lock.
      if (await repo.touchDevice(device)) return { ok: true, recorded: true };
      await repo.transaction(async (tx) => {
        await repo.lockUser(tx, actor.id);
        const first = (await repo.deviceCount(tx, actor.id)) === 0;
        await repo.upsertDevice(tx, device);
        if (first)
          await activity.record(
            {
              type: 'cli_invocation',
              userId: actor.id,
              actor: actor.email,
              title: 'CLI linked',
              payload: { device_id: body.device_id, platform: body.platform, version: body.version },
            },
            tx,
          );
      });
      return { ok: true, recorded: true };
    },

    /**
     * GET /cli/devices → `{devices}`: at most 20, newest check-in first, each with its device `credential`
     * (`{id, prefix, last_used_at}` of the access token its link issued, or null).
     */
    async devices(actor: Actor) {
      const [rows, creds] = await Promise.all([
        repo.devices(actor.id, DEVICES_LIMIT),
        deps.credentials.deviceCredentials(actor.id),
      ]);
      return { devices: rows.map((d) => ({ ...d, credential: creds.get(d.device_id) ?? null })) };
    },

    /**
     * DELETE /cli/devices/:device_id → `{ok, revoked}`: revoke the device's credentials (its next call answers
     * 401, so the CLI there is logged out) and forget its check-ins.
     * @throws NotFound `device_not_found` when the caller has neither a check-in nor a credential of that device.
     */
    async removeDevice(actor: Actor, deviceId: string, meta: RequestMeta) {
      const revoked = await deps.credentials.revokeDevice(actor.id, deviceId, meta);
      const removed = await repo.removeDevice(actor.id, deviceId);
      if (!revoked && !removed) throw new NotFound('You have no device with this id.', 'device_not_found');
      return { ok: true, revoked };
    },

    /** GET /onboarding/cli-status → `{installed, last_cli_at}`. */
    status,

    /**
     * GET /projects/:name/cli-sessions → `{events, transcriptSessionIds}`: the project's session-end events, newest
     * first (`limit` default 120, at most 500), and which of their sessions have a transcript of the caller.
     * @throws 404/403 from the project access check.
     */
    async sessions(actor: Actor, projectName: string, limit = SESSIONS_DEFAULT) {
      const p = await access.project(actor, projectName);
      const rows = await activity.list(
        { projectId: p.id, types: [SESSION_END_EVENT] },
        Math.min(Math.max(limit, 1), SESSIONS_MAX),
      );
      const events = rows.map((r) => {
        const payload = (r.payload ?? {}) as Record<string, unknown>;
        return {
          id: r.id,
          worker_id: r.worker_id,
          label: r.title ?? '',
          timestamp: r.created_at,
          duration: typeof payload.duration_ms === 'number' ? payload.duration_ms : 0,
          metadata: payload,
        };
      });
      const ids = [
        ...new Set(events.map((e) => e.metadata.session_id).filter((s): s is string => typeof s === 'string')),
      ];
      return { events, transcriptSessionIds: await repo.transcriptSessionIds(actor.id, p.id, ids) };
    },

    /**
     * POST /api/cli/session-end/:project/:mode: a `cli_session_end` timeline event with the duration and, from CLI
     * 1.0.15 (rich summaries), `first_prompt` (whitespace collapsed, cut to 280 characters), `issue_id`,
     * `issue_title`, `session_id`, `message_count`. @returns `{ok:true, event}`.
     */
    async sessionEnd(actor: Actor, projectName: string, mode: string, body: SessionEndBody, version?: string) {
      const p = await access.project(actor, projectName);
      const worker = await workerFor(p.id, mode);
      const rich = cliHas(version, 'sessionSummary');
      const metadata: Record<string, unknown> = { mode, duration_ms: body.duration_ms };
      if (rich) {
        if (body.first_prompt !== undefined) metadata.first_prompt = collapsePrompt(body.first_prompt);
        if (body.issue_id !== undefined) metadata.issue_id = body.issue_id;
        if (body.issue_title !== undefined)
          metadata.issue_title = body.issue_title === null ? null : collapsePrompt(body.issue_title, 200);
        if (body.session_id !== undefined) metadata.session_id = body.session_id;
        if (body.message_count !== undefined) metadata.message_count = body.message_count;
      }
      const label = `CLI session ended (${worker?.label ?? mode})`;
      await activity.record({
        type: SESSION_END_EVENT,
        userId: actor.id,
        actor: actor.email,
        projectId: p.id,
        workerId: worker?.id ?? null,
        title: label,
        detail: typeof metadata.first_prompt === 'string' ? metadata.first_prompt : null,
        payload: metadata,
      });
      return { ok: true, event: { worker_id: worker?.id ?? null, label, duration: body.duration_ms, metadata } };
    },

    /**
     * POST /api/cli/transcript/:project/:modeOrSession (the mode): store (or replace) the caller's transcript of
     * `session_id`. The gzip is checked and inflated with a bound before anything is written; `size_bytes` is the
     * inflated size.
     * @throws PayloadTooLarge 413 `transcript_too_large` over 4 MB compressed or 32 MB inflated; BadRequest 400
     *   `invalid_transcript`; 426 `cli_upgrade_required` from a CLI older than 1.0.16.
     */
    async uploadTranscript(actor: Actor, projectName: string, mode: string, body: TranscriptBody, version?: string) {
      const p = await access.project(actor, projectName);
      if (!cliHas(version, 'transcriptUpload'))
        throw new AppError(
          426,
          'cli_upgrade_required',
          'Transcript upload needs arc 1.0.16 or newer; update the CLI.',
          { min_version: '1.0.16' },
        );
      const decoded = decodeTranscript(body.gzip_b64);
      if ('problem' in decoded) throw transcriptRefused(decoded.problem);
      const worker = await workerFor(p.id, mode);
      const t = await repo.upsertTranscript({
        ownerId: actor.id,
        projectId: p.id,
        sessionId: body.session_id,
        workerId: worker?.id ?? null,
        mode,
        deviceId: body.device_id ?? null,
        firstPrompt: collapsePrompt(body.first_prompt ?? ''),
        messageCount: body.message_count ?? transcriptMessages(decoded.raw.toString('utf8')).length,
        sizeBytes: decoded.raw.length,
        gzip: decoded.gzip,
      });
      return { ok: true, ...t };
    },

    /** GET /api/cli/transcripts/:project → `{transcripts}`: the caller's, newest first (at most 500). */
    async listTranscripts(actor: Actor, projectName: string) {
      const p = await access.project(actor, projectName);
      return { transcripts: await repo.transcripts(actor.id, p.id, TRANSCRIPTS_LIMIT) };
    },

    /**
     * GET /api/cli/transcript/:project/:modeOrSession (the session id): one of the caller's transcripts with its raw
     * `jsonl`.
     * @throws NotFound 404 `transcript_not_found` when absent or not the caller's.
     */
    async downloadTranscript(actor: Actor, projectName: string, sessionId: string) {
      const { summary, jsonl } = await readTranscript(actor, projectName, sessionId);
      return { ...summary, jsonl };
    },

    /**
     * GET /projects/:name/cli-transcript?session=: one of the caller's transcripts as `messages [{role, text, ts}]`.
     * @throws NotFound 404 `transcript_not_found` when absent or not the caller's.
     */
    async viewTranscript(actor: Actor, projectName: string, sessionId: string) {
      const { summary, jsonl } = await readTranscript(actor, projectName, sessionId);
      return { ...summary, messages: transcriptMessages(jsonl) };
    },

    installSteps,

    /**
     * GET /api/cli/download/:platform (public or token): a download of the CLI, recorded as a `cli_download` event
     * (best effort), answering the install steps (`installSteps`). The web UI calls it when the user downloads the
     * package, never to show the steps.
     * @throws Upstream 503 `cli_package_unavailable` when this installation has no `arc` package
     */
    async download(actor: Actor | undefined, platform: (typeof PLATFORMS)[number]) {
      const steps = installSteps(platform);
      await activity.recordBestEffort({
        type: 'cli_download',
        userId: actor?.id ?? null,
        actor: actor?.email || null,
        title: 'CLI download',
        payload: { platform },
      });
      return steps;
    },

    /**
     * GET /api/cli/arc.tgz (public): the `arc` package as an npm tarball, `{filename: 'arc-<version>.tgz', bytes}`.
     * @throws Upstream 503 `cli_package_unavailable` when this installation has no `arc` package
     */
    cliPackage() {
      return deps.pkg.tarball();
    },

    /**
     * POST /api/cli/link (public): a new device link. The CLI shows `url` (`{app_url}/cli/link?code=…`), waits
     * on the link stream with `link_token`, and receives its token there once a signed-in user confirms the code.
     * Only the token's hash is stored. `device` (the CLI's device id and host name) names the device credential
     * the link issues. @returns `{code, link_token, url, expires_at}`.
     */
    async createLink(device: { device_id?: string; hostname?: string } = {}) {
      const linkToken = `arcl_${crypto.randomBytes(32).toString('base64url')}`;
      const expiresAt = new Date(Date.now() + LINK_TTL_MS);
      for (let attempt = 0; ; attempt++) {
        const code = newCode();
        try {
          await repo.insertLink(code, sha256(linkToken), expiresAt, {
            deviceId: device.device_id ?? null,
            hostname: device.hostname ?? null,
          });
          return {
            code,
            link_token: linkToken,
            url: `${deps.appUrl}/cli/link?code=${encodeURIComponent(code)}`,
            expires_at: expiresAt.toISOString(),
          };
        } catch (err) {
          if (attempt >= 3) throw err; // a code collision: try another
        }
      }
    },

    /**
     * POST /cli/link/confirm `{code}`: the signed-in caller confirms a device link (the link page).
     * @throws NotFound 404 `link_not_found`; Gone 410 `link_expired`; Conflict 409 `link_used`.
     */
    async confirmLink(actor: Actor, code: string) {
      const normalized = code.trim().toUpperCase();
      if (await repo.confirmLink(normalized, actor.id)) return { ok: true };
      const link = await repo.linkByCode(normalized);
      if (!link) throw new NotFound('No device link has this code.', 'link_not_found');
      if (link.confirmed_at) throw new Conflict('link_used', 'This code has already been used.');
      throw new Gone('This code has expired; run arc login again.', 'link_expired');
    },

    /**
     * The link stream (SSE /api/sse/cli-status?token=…). With a signed-in user's token: `linked {linked:true}`
     * once the user's CLI status is installed (the web page waiting for the CLI). With a device link's token:
     * `linked {linked:true, token, user}` once the code is confirmed — the token, a device credential (an access
     * token of kind `device`, read and write, no expiry), is handed out once. Polls every
     * 1.5 s; `end {reason:'timeout'}` after 10 minutes (`reason:'expired'` when the link expired earlier).
     * @throws Unauthorized 401 when the token is neither.
     */
    async linkStream(actor: Actor | undefined, token: string | undefined, meta: RequestMeta) {
      let linkHash: string | undefined;
      if (!actor) {
        if (!token || !token.startsWith('arcl_') || token.length > 200)
          throw new Unauthorized('A valid token is required.', 'invalid_token');
        linkHash = sha256(token);
        const link = await repo.linkBySecret(linkHash);
        if (!link) throw new Unauthorized('The link token is not valid.', 'invalid_token');
        if (link.claimed_at) throw new Conflict('link_used', 'This device link has already been used.');
      }
      type LinkState =
        | { state: 'waiting' }
        | { state: 'linked'; data: Record<string, unknown> }
        | { state: 'end'; reason: 'used' | 'expired' };
      const events = follow<LinkState, { event: string; data: unknown }>({
        async read(): Promise<LinkState> {
          if (actor)
            return (await status(actor)).installed ? { state: 'linked', data: { linked: true } } : { state: 'waiting' };
          const link = await repo.linkBySecret(linkHash!);
          if (!link || link.claimed_at) return { state: 'end', reason: 'used' };
          if (link.confirmed_at) {
            const userId = await repo.claimLink(linkHash!);
            const device = { deviceId: link.device_id, hostname: link.hostname };
            const issued = userId
              ? await deps.accounts.loginElsewhere(userId, meta, (id) => deps.credentials.issueDevice(id, device))
              : undefined;
            if (!issued) return { state: 'end', reason: 'used' };
            return { state: 'linked', data: { linked: true, ...issued } };
          }
          if (link.expires_at.getTime() <= Date.now()) return { state: 'end', reason: 'expired' };
          return { state: 'waiting' };
        },
        isDone: (s) => s.state !== 'waiting',
        pollMs,
        timeoutMs,
        emit: (s) =>
          s.state === 'linked'
            ? [{ event: 'linked', data: s.data }]
            : s.state === 'end'
              ? [{ event: 'end', data: { reason: s.reason } }]
              : [],
        end: (how) => (how === 'timeout' ? [{ event: 'end', data: { reason: 'timeout' } }] : []),
      });
      return { events };
    },

    /**
     * GET /api/cli/init/:project/:mode: the context `arc init` writes, assembled exactly as a run's (the system
     * prompt, project rules, the manifest ≤ 8000 characters, the skills list, each `context_assets` skill ≤ 3000).
     * @throws NotFound 404 `worker_not_found` when the mode names no worker of the project.
     */
    async init(actor: Actor, projectName: string, mode: string) {
      const p = await access.project(actor, projectName);
      const ref = await workerFor(p.id, mode);
      const w = ref ? await deps.workers.full(p.id, ref.id) : undefined;
      const record = await deps.projects.record(p.id);
      if (!w || !record) throw new NotFound('The project has no worker of that name.', 'worker_not_found');
      const ctx = await buildWorkerContext({
        project: {
          id: p.id,
          display_name: record.display_name,
          dir: deps.projectDir(p.id),
          protocol: record.protocol,
        },
        worker: {
          label: w.label,
          system_prompt: w.system_prompt ?? '',
          context_assets: Array.isArray(w.context_assets) ? (w.context_assets as string[]) : [],
        },
        skills: deps.skills,
      });
      return {
        project: p.name,
        worker: { id: w.id, label: w.label, role: w.role },
        context: ctx.parts.join('\n\n'),
        skills: ctx.skills,
        autoloaded: ctx.autoloaded,
      };
    },
  };
}

export type CliService = ReturnType<typeof createCliService>;
