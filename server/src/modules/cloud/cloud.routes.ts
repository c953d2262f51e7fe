/**
 * Cloud container routes: provision, status, deprovision, SSH key and checks, the waitlist, the terminal
 * socket (`WS /api/crm/ws/cloud/:userId/terminal`) and the log stream (`SSE /api/sse/cloud/:userId/logs`).
 */
import websocket from '@fastify/websocket';
import { AppError } from '../../http/errors.ts';
import { Type } from 'typebox';
import type { WebSocket } from 'ws';
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import { openSse, pipeSse } from '../../http/sse.ts';
import * as S from './cloud.schemas.ts';
import type { CloudService } from './cloud.service.ts';
import type { ShellSession } from '../../providers/containers/index.ts';
import { parseControl } from './cloud.rules.ts';

const TERMINAL_PROTOCOL =
  'Frames from the client go to the shell\'s stdin (text or binary); a text frame that is the JSON `{"type":"resize","cols":N,"rows":M}` resizes the terminal, `{"type":"input","data":"…"}` sends `data`. The shell\'s stdout and stderr (one pty) come back as text frames. A paused container is resumed before the shell starts. The socket closes after 120 s without a frame either way (close reason `idle_timeout`) and when the shell exits (`exited`). Refused before the upgrade: 401 without a valid token, 403 `container_owner_mismatch` when `:userId` is not the token\'s chat id, 404 `container_not_found`, 402 `cloud_plan_required` when the plan no longer includes cloud (the container stays paused), 503 `container_runtime_unavailable`.';

export function cloudRoutes(app: TypedApp, { cloud }: { cloud: CloudService }): void {
  const tags = ['cloud'];

  app.post(
    '/api/crm/cloud/provision',
    {
      schema: {
        tags,
        summary: 'Create your cloud container (idempotent: an existing one is answered as it is)',
        description:
          "Needs the cloud plan (402 `cloud_plan_required`). 503 `container_runtime_unavailable` when this server cannot run containers, `container_caps_unavailable` when it cannot enforce their caps (processes, memory, CPU), `container_layout_unsafe` when a sandbox would see the server's own files.",
        response: { 200: S.ProvisionAnswer, ...errors(401, 402, 502, 503) },
      },
    },
    async (req) => cloud.provision(requireActor(req)),
  );
  app.get(
    '/api/crm/cloud/status',
    {
      schema: {
        tags,
        summary: 'Your container with its live state (`{status:"none"}` without one); refreshes last_active',
        response: { 200: S.StatusAnswer, ...errors(401) },
      },
    },
    async (req) => cloud.status(requireActor(req)),
  );
  app.post(
    '/api/crm/cloud/deprovision',
    {
      schema: {
        tags,
        summary: 'Stop and remove your container and its network (status becomes deleted)',
        response: { 200: S.DeprovisionAnswer, ...errors(401, 404, 502, 503) },
      },
    },
    async (req) => cloud.deprovision(requireActor(req)),
  );
  app.post(
    '/api/crm/cloud/ssh-keygen',
    {
      schema: {
        tags,
        summary: "Generate the container's ed25519 SSH key for the code host (idempotent)",
        description:
          'The private key stays in the container (`~/.ssh/id_ed25519`) and sealed on the server; only the public key is answered.',
        response: { 200: S.PublicKeyAnswer, ...errors(401, 402, 404, 502, 503) },
      },
    },
    async (req) => cloud.sshKeygen(requireActor(req)),
  );
  app.post(
    '/api/crm/cloud/ssh-verify',
    {
      schema: {
        tags,
        summary: 'Test SSH access to the code host from inside the container; sets codehost_authed on success',
        response: { 200: S.VerifyAnswer, ...errors(401, 402, 404, 502, 503) },
      },
    },
    async (req) => cloud.sshVerify(requireActor(req)),
  );
  app.post(
    '/api/crm/cloud/claude-verify',
    {
      schema: {
        tags,
        summary: "Check the agent CLI's version inside the container; sets agent_authed on success",
        response: { 200: S.VerifyAnswer, ...errors(401, 402, 404, 502, 503) },
      },
    },
    async (req) => cloud.claudeVerify(requireActor(req)),
  );

  app.post(
    '/api/crm/cloud/waitlist',
    {
      schema: {
        tags,
        summary: 'Join the cloud waitlist (idempotent)',
        description: '409 `already_on_cloud` with the cloud plan, 409 `container_exists` with a container.',
        body: S.JoinBody,
        response: { 200: S.JoinAnswer, ...errors(400, 401, 409) },
      },
      // No body at all is an empty one.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    async (req) => cloud.joinWaitlist(requireActor(req), req.body),
  );
  app.get(
    '/api/crm/cloud/waitlist/status',
    {
      schema: {
        tags,
        summary: 'Your place on the cloud waitlist, or `{status:"not_joined"}`',
        response: { 200: S.WaitlistStatusAnswer, ...errors(401) },
      },
    },
    async (req) => cloud.waitlistStatus(requireActor(req)),
  );
  app.get(
    '/api/crm/cloud/waitlist',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'The cloud waitlist in order of joining, with counts per status (admin)',
        response: { 200: S.WaitlistListAnswer, ...errors(401, 403) },
      },
    },
    async (req) => cloud.listWaitlist(requireActor(req)),
  );
  app.post(
    '/api/crm/cloud/waitlist/invite',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Invite a user from the waitlist: entry invited, plan cloud (admin)',
        body: S.InviteBody,
        response: { 200: S.InviteAnswer, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => cloud.invite(requireActor(req), req.body.user_id),
  );

  app.get(
    '/api/sse/cloud/:userId/logs',
    {
      config: { queryToken: true },
      schema: {
        tags,
        summary: "Follow your container's log (server-sent events)",
        description:
          'Starts with the last 50 lines of the last hour, then follows. Each line is `data: {"line": "…"}`; when the container is removed `data: {"closed": true}` and the stream ends. Comment heartbeats every 15 s. 403 `container_owner_mismatch` when `:userId` is not the token\'s chat id.',
        params: S.UserIdParam,
        querystring: S.StreamQuery,
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), ...errors(400, 401, 402, 403, 404) },
      },
    },
    async (req, reply) => {
      const { events } = await cloud.logs(requireActor(req), req.params.userId);
      reply.hijack();
      openSse(reply.raw, reply.getHeaders());
      await pipeSse(reply.raw, events, { heartbeatMs: 15_000 });
    },
  );

  // The terminal socket, in its own plugin scope (the WebSocket plugin serves only these routes).
  void app.register(async (scope) => {
    await scope.register(websocket, { options: { maxPayload: 1024 * 1024 } });
    // @fastify/websocket hides its routes from the OpenAPI document; the terminal is documented like any route.
    scope.addHook('onRoute', (route) => {
      if (route.websocket && route.schema) route.schema.hide = false;
    });
    // An upgrade refused before the plugin saw it (401 from the auth hook) still ends its socket once answered.
    scope.addHook('onResponse', (req, reply, done) => {
      if (req.headers.upgrade) reply.raw.socket?.destroy();
      done();
    });
    const typed = scope as unknown as TypedApp;
    typed.get(
      '/api/crm/ws/cloud/:userId/terminal',
      {
        websocket: true,
        config: { queryToken: true },
        schema: {
          tags,
          summary: 'An interactive shell inside your container (WebSocket)',
          description: TERMINAL_PROTOCOL,
          params: S.UserIdParam,
          querystring: S.TerminalQuery,
          response: {
            101: Type.Null({ description: 'switching protocols' }),
            ...errors(400, 401, 402, 403, 404, 426, 502, 503),
          },
        },
        preHandler: async (req) => {
          // A plain GET (no WebSocket upgrade) gets the error envelope, not the plugin's empty 404.
          if (!req.ws) throw new AppError(426, 'upgrade_required', 'This route takes a WebSocket upgrade.');
          await cloud.checkTerminal(requireActor(req), req.params.userId);
        },
      },
      (socket: WebSocket, req) => {
        // Listeners first, synchronously: frames that arrive while the shell starts are held, not lost.
        let session: ShellSession | undefined;
        let started = false;
        let gone = false;
        let held: (string | Buffer)[] = [];
        let idle: NodeJS.Timeout | undefined;
        let startTimer: NodeJS.Timeout | undefined;
        let activity = () => {};
        const bump = (ms: number) => {
          if (idle) clearTimeout(idle);
          idle = setTimeout(() => socket.close(1000, 'idle_timeout'), ms);
          activity();
        };
        const release = () => {
          if (started || !session) return;
          started = true;
          for (const d of held) session.write(d);
          held = [];
        };
        const input = (d: string | Buffer) => (started && session ? session.write(d) : held.push(d));
        socket.on('message', (data: Buffer, isBinary: boolean) => {
          if (idle) bump(idleMs);
          if (isBinary) return void input(data);
          const text = data.toString('utf8');
          const control = parseControl(text);
          if (control?.type === 'resize') session?.resize(control.cols, control.rows);
          else if (control?.type === 'input') input(control.data);
          else input(text);
        });
        socket.on('close', () => {
          gone = true;
          if (startTimer) clearTimeout(startTimer);
          if (idle) clearTimeout(idle);
          session?.kill();
        });
        socket.on('error', () => session?.kill());
        const idleMs = cloud.terminalIdleMs;
        bump(idleMs);

        const q = req.query;
        void cloud.openTerminal(requireActor(req), req.params.userId, { cols: q.cols ?? 80, rows: q.rows ?? 24 }).then(
          (term) => {
            session = term.session;
            activity = term.activity;
            if (gone) return term.session.kill();
            // Held input goes in once the shell first writes (its prompt), at the latest after 5 s.
            startTimer = setTimeout(release, 5000);
            const decoder = new TextDecoder('utf-8');
            term.session.onData((chunk) => {
              if (!started) setTimeout(release, 50);
              bump(idleMs);
              const text = decoder.decode(chunk, { stream: true });
              if (text && socket.readyState === socket.OPEN) socket.send(text);
            });
            term.session.onExit(() => {
              if (idle) clearTimeout(idle);
              void term.settled().finally(() => {
                if (socket.readyState === socket.OPEN) socket.close(1000, 'exited');
              });
            });
          },
          (err: unknown) => {
            const code = (err as { code?: string }).code ?? 'terminal_failed';
            if (socket.readyState === socket.OPEN) socket.close(1011, code.slice(0, 100));
          },
        );
      },
    );
  });
}
