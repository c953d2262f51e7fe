/**
 * Routes of the command-line client `arc`: device check-ins and the device list, the CLI status, session
 * summaries, transcripts, the download route, the device link (code, confirmation, link stream) and the
 * worker context of `arc init`. Each route translates HTTP to one service call.
 */
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { requireActor } from '../../http/auth.ts';
import { errors, ProjectParam } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import { openSse, pipeSse } from '../../http/sse.ts';
import type { CliService } from './cli.service.ts';
import * as S from './cli.schemas.ts';

/** The CLI's release from `X-Arc-Version`, when sent. */
const arcVersion = (req: FastifyRequest): string | undefined => {
  const v = req.headers['x-arc-version'];
  return typeof v === 'string' ? v : undefined;
};
const TRANSCRIPT_BODY_LIMIT = 8 * 1024 * 1024;

export function cliRoutes(app: TypedApp, { cli }: { cli: CliService }): void {
  const tags = ['cli'];

  app.post(
    '/api/cli/heartbeat',
    {
      schema: {
        tags,
        summary: 'Device check-in of the CLI (fire and forget)',
        description:
          "Records or refreshes the device; the user's first device writes a cli_invocation event. From arc 1.0.14 (X-Arc-Version); older releases are answered with recorded:false.",
        headers: S.VersionHeader,
        body: S.HeartbeatBody,
        response: { 200: S.HeartbeatAnswer, ...errors(400, 401) },
      },
    },
    async (req) => cli.heartbeat(requireActor(req), req.body, arcVersion(req)),
  );
  app.get(
    '/api/crm/cli/devices',
    {
      schema: {
        tags,
        summary: "The caller's CLI devices: at most 20, newest check-in first",
        response: { 200: S.DeviceList, ...errors(401) },
      },
    },
    async (req) => cli.devices(requireActor(req)),
  );
  app.delete(
    '/api/crm/cli/devices/:device_id',
    {
      config: { accessToken: 'refused' },
      schema: {
        tags,
        summary: "Revoke a device's credential (the CLI there is logged out at its next call) and forget it",
        params: S.DeviceParams,
        response: {
          200: Type.Object({ ok: Type.Boolean(), revoked: Type.Integer({ description: 'credentials revoked' }) }),
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async (req) =>
      cli.removeDevice(requireActor(req), req.params.device_id, { ip: req.ip, userAgent: req.headers['user-agent'] }),
  );
  app.get(
    '/api/crm/onboarding/cli-status',
    {
      schema: {
        tags: ['cli', 'onboarding'],
        summary: 'Whether the caller uses the CLI: a CLI login or device check-in in the last 30 days',
        response: { 200: S.CliStatus, ...errors(401) },
      },
    },
    async (req) => cli.status(requireActor(req)),
  );
  app.get(
    '/api/crm/projects/:name/cli-sessions',
    {
      schema: {
        tags,
        summary: "The project's CLI session-end events, newest first, and which sessions have a transcript of yours",
        params: ProjectParam,
        querystring: S.SessionsQuery,
        response: { 200: S.Sessions, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => cli.sessions(requireActor(req), req.params.name, req.query.limit),
  );
  app.post(
    '/api/cli/session-end/:project/:mode',
    {
      schema: {
        tags,
        summary: "Summary of a finished CLI session, written to the project's timeline",
        description:
          'first_prompt is whitespace-collapsed and cut to 280 characters. Before arc 1.0.15 (X-Arc-Version) only the duration is kept.',
        params: S.ProjectModeParams,
        headers: S.VersionHeader,
        body: S.SessionEndBody,
        response: { 200: S.SessionEndAnswer, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => cli.sessionEnd(requireActor(req), req.params.project, req.params.mode, req.body, arcVersion(req)),
  );
  app.post(
    '/api/cli/transcript/:project/:modeOrSession',
    {
      bodyLimit: TRANSCRIPT_BODY_LIMIT,
      schema: {
        tags,
        summary: "Upload a CLI session's transcript (replaces your earlier upload of the same session)",
        description:
          'gzip_b64 is the base64 of the gzip of the raw jsonl: 413 transcript_too_large over 4 MB compressed or 32 MB inflated (inflation stops at the bound), 400 invalid_transcript when it is not gzip. Needs arc 1.0.16 (X-Arc-Version): older releases get 426 cli_upgrade_required.',
        params: S.TranscriptUploadParams,
        headers: S.VersionHeader,
        body: S.TranscriptBody,
        response: { 200: S.TranscriptStored, ...errors(400, 401, 403, 404, 413, 426) },
      },
    },
    async (req) =>
      cli.uploadTranscript(requireActor(req), req.params.project, req.params.modeOrSession, req.body, arcVersion(req)),
  );
  app.get(
    '/api/cli/transcripts/:project',
    {
      schema: {
        tags,
        summary: 'Your CLI transcripts of a project, newest first',
        params: S.ProjectOnlyParams,
        response: { 200: S.TranscriptList, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => cli.listTranscripts(requireActor(req), req.params.project),
  );
  app.get(
    '/api/cli/transcript/:project/:modeOrSession',
    {
      schema: {
        tags,
        summary: 'Download one of your CLI transcripts with its raw jsonl (404 when not yours)',
        params: S.TranscriptDownloadParams,
        response: { 200: S.TranscriptDownload, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => cli.downloadTranscript(requireActor(req), req.params.project, req.params.modeOrSession),
  );
  app.get(
    '/api/crm/projects/:name/cli-transcript',
    {
      schema: {
        tags,
        summary: 'View one of your CLI transcripts as messages [{role, text, ts}]',
        params: ProjectParam,
        querystring: S.ViewQuery,
        response: { 200: S.TranscriptView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => cli.viewTranscript(requireActor(req), req.params.name, req.query.session),
  );
  app.get(
    '/api/cli/install/:platform',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'How to install the CLI on a platform (public; records nothing)',
        description:
          "The same answer as `GET /api/cli/download/:platform` without its `cli_download` event: for showing the steps (the web UI's CLI tab), where no download happens.",
        params: S.PlatformParams,
        response: { 200: S.Download, ...errors(400, 503) },
      },
    },
    async (req) => cli.installSteps(req.params.platform),
  );
  app.get(
    '/api/cli/download/:platform',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'A download of the CLI for a platform (public; writes a cli_download event), with the install steps',
        description:
          'Call it when the package is downloaded (the web UI does when its download link is used); to show the steps without counting a download, use `GET /api/cli/install/:platform`.',
        params: S.PlatformParams,
        response: { 200: S.Download, ...errors(400, 503) },
      },
    },
    async (req) => cli.download(req.actor, req.params.platform),
  );
  app.get(
    '/api/cli/arc.tgz',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'The CLI package as an npm tarball (public): npm install -g {app_url}/api/cli/arc.tgz',
        description:
          'The `arc` package of this service in the layout npm installs (`package/package.json`, `package/bin`, ' +
          '`package/src`, gzip), named `arc-<version>.tgz`. Its four dependencies come from the npm registry at ' +
          'install time. 503 `cli_package_unavailable` when this installation does not ship the package.',
        produces: ['application/gzip'],
        response: {
          200: Type.Unsafe<unknown>({
            type: 'string',
            format: 'binary',
            description: 'the tarball (application/gzip)',
          }),
          ...errors(503),
        },
      },
    },
    async (_req, reply) => {
      const { filename, bytes } = await cli.cliPackage();
      return reply
        .header('content-type', 'application/gzip')
        .header('content-disposition', `attachment; filename="${filename}"`)
        .header('cache-control', 'no-cache')
        .send(bytes);
    },
  );
  app.post(
    '/api/cli/link',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'Start a device link: a code for the link page and a link token for the link stream',
        description:
          'The CLI opens url ({app_url}/cli/link?code=…); a signed-in user confirms the code (POST /api/crm/cli/link/confirm); the link stream (GET /api/sse/cli-status?token=<link_token>) then hands the CLI its device credential once: an access token (`arc_dev_…`, read and write, no expiry) named after `hostname` and revocable from the devices list (DELETE /api/crm/cli/devices/:device_id). Codes expire after 10 minutes. The body is optional.',
        body: S.LinkBody,
        response: { 201: S.Link, ...errors(400) },
      },
      // Older CLIs send no body: read that as `{}`.
      preValidation: (req, _reply, done) => {
        req.body ??= {};
        done();
      },
    },
    async (req, reply) => reply.status(201).send(await cli.createLink(req.body)),
  );
  app.post(
    '/api/crm/cli/link/confirm',
    {
      config: { accessToken: 'refused' },
      schema: {
        tags,
        summary: 'Confirm a device link code as the signed-in user (the link page)',
        body: S.ConfirmBody,
        response: {
          200: Type.Object({ ok: Type.Boolean() }),
          ...errors(400, 401, 404, 409, 410),
        },
      },
    },
    async (req) => cli.confirmLink(requireActor(req), req.body.code),
  );
  app.get(
    '/api/sse/cli-status',
    {
      config: { auth: 'public', queryToken: true },
      schema: {
        tags,
        summary: 'The CLI link stream (server-sent events)',
        description:
          "token=<JWT> of a signed-in user: event linked {linked:true} once the user's CLI is installed. token=<link_token> of a device link: event linked {linked:true, token, user} once the code is confirmed (handed out once). Polls about every 1.5 s, comment heartbeats, then closes; event end {reason:'timeout'} after 10 minutes ({reason:'expired'} when the link code expired, {reason:'used'} when another stream took it).",
        querystring: S.LinkStreamQuery,
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), ...errors(400, 401, 409) },
      },
    },
    async (req, reply) => {
      const { events } = await cli.linkStream(req.actor, req.query.token, {
        ip: req.ip,
        userAgent: req.headers['user-agent'],
      });
      reply.hijack();
      openSse(reply.raw, reply.getHeaders());
      await pipeSse(reply.raw, events, { heartbeatMs: 5_000 });
    },
  );
  app.get(
    '/api/cli/init/:project/:mode',
    {
      schema: {
        tags,
        summary: "A worker's context for arc init, assembled as a run's",
        description:
          'The system prompt, the project rules, the project manifest (at most 8000 characters) after the rules and before the skills list, then each skill of the worker’s context_assets (at most 3000 characters each).',
        params: S.InitParams,
        response: { 200: S.InitAnswer, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => cli.init(requireActor(req), req.params.project, req.params.mode),
  );
}
