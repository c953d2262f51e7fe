/**
 * Routes of the accounts area: authentication (/api/auth/*), invites, beta waitlist and users (admin),
 * account settings. Each route translates HTTP to one service call.
 */
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { requireActor } from '../../http/auth.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { AccountsService } from './accounts.service.ts';
import type { InvitesService } from './invites.service.ts';
import type { OutboxStatus } from '../../providers/mail/mail.ts';
import type { SettingsService } from './settings.service.ts';
import * as S from './accounts.schemas.ts';
import { DateTime, errors, idParam } from '../../http/schemas.ts';

const WaitlistIdParam = idParam('the waitlist application id');
const UserIdParam = idParam('the user id');

const meta = (req: FastifyRequest) => ({ ip: req.ip, userAgent: req.headers['user-agent'] });

export function accountsRoutes(
  app: TypedApp,
  { accounts, invites, settings }: { accounts: AccountsService; invites: InvitesService; settings: SettingsService },
): void {
  const pub = { auth: 'public' as const };
  const admin = { auth: 'admin' as const };
  const tags = ['auth'];

  app.post(
    '/api/auth/register',
    {
      config: pub,
      schema: {
        tags,
        security: [],
        summary: 'Register with an invite code',
        body: S.RegisterBody,
        response: { 201: S.AuthAnswer, ...errors(400, 403, 409, 429) },
      },
    },
    async (req, reply) => reply.status(201).send(await accounts.register(req.body, meta(req))),
  );
  app.post(
    '/api/auth/login',
    {
      config: pub,
      schema: {
        tags,
        security: [],
        summary: 'Log in',
        body: S.LoginBody,
        response: { 200: S.AuthAnswer, ...errors(400, 401) },
      },
    },
    async (req) => accounts.login(req.body, meta(req)),
  );
  app.post(
    '/api/auth/verify-email',
    {
      config: pub,
      schema: {
        tags,
        security: [],
        summary: 'Confirm the e-mail address with the token of the link',
        body: S.TokenBody,
        response: { 200: Type.Object({ ok: Type.Boolean(), email_verified: Type.Boolean() }), ...errors(400) },
      },
    },
    async (req) => accounts.verifyEmail(req.body.token),
  );
  app.post(
    '/api/auth/resend-verification',
    {
      schema: {
        tags,
        summary: 'Send a new verification link to the caller',
        response: { 200: Type.Object({ ok: Type.Boolean(), email_verified: Type.Boolean() }), ...errors(401) },
      },
    },
    async (req) => accounts.resendVerification(requireActor(req)),
  );
  app.post(
    '/api/auth/forgot-password',
    {
      config: pub,
      schema: {
        tags,
        security: [],
        summary: 'E-mail a password-reset link (always answers ok)',
        body: S.ForgotBody,
        response: { 200: S.Ok, ...errors(400) },
      },
    },
    async (req) => accounts.forgotPassword(req.body.email),
  );
  app.post(
    '/api/auth/reset-password',
    {
      config: pub,
      schema: {
        tags,
        security: [],
        summary: 'Set a new password with the token of the reset link (breach-screened)',
        body: S.ResetBody,
        response: { 200: S.Ok, ...errors(400) },
      },
    },
    async (req) => accounts.resetPassword(req.body, meta(req)),
  );
  app.post(
    '/api/auth/change-password',
    {
      config: { accessToken: 'refused' },
      schema: {
        tags,
        summary: 'Change the password; earlier tokens stop working',
        body: S.ChangeBody,
        response: { 200: Type.Object({ ok: Type.Boolean(), token: Type.String() }), ...errors(400, 401) },
      },
    },
    async (req) => accounts.changePassword(requireActor(req), req.body, meta(req)),
  );
  app.post(
    '/api/auth/waitlist',
    {
      config: pub,
      schema: {
        tags,
        security: [],
        summary: 'Apply for the beta waitlist',
        body: S.WaitlistBody,
        response: { 201: S.Ok, ...errors(400) },
      },
    },
    async (req, reply) => reply.status(201).send(await invites.apply(req.body)),
  );
  app.get(
    '/api/auth/me',
    { schema: { tags, summary: 'The caller', response: { 200: S.User, ...errors(401) } } },
    async (req) => accounts.me(requireActor(req)),
  );

  const adminTags = ['admin'];
  app.get(
    '/api/crm/admin/invites',
    {
      config: admin,
      schema: { tags: adminTags, summary: 'All invite codes', response: { 200: S.InviteList, ...errors(401, 403) } },
    },
    async (req) => invites.list(requireActor(req)),
  );
  app.post(
    '/api/crm/admin/invites',
    {
      config: admin,
      schema: {
        tags: adminTags,
        summary: 'Generate invite codes',
        body: S.GenerateInvitesBody,
        response: { 200: S.GenerateInvitesAnswer, ...errors(400, 401, 403) },
      },
    },
    async (req) => invites.create(requireActor(req), req.body),
  );
  app.delete(
    '/api/crm/admin/invites/:code',
    {
      config: admin,
      schema: {
        tags: adminTags,
        summary: 'Revoke an unused code',
        params: Type.Object({
          code: Type.String({ maxLength: 64, description: 'the invite code, e.g. svc-AB12-CD34' }),
        }),
        response: { 200: Type.Object({ ok: Type.Boolean(), code: Type.String() }), ...errors(401, 403, 404, 409) },
      },
    },
    async (req) => invites.revoke(requireActor(req), req.params.code),
  );
  app.get(
    '/api/crm/admin/waitlist',
    {
      config: admin,
      schema: {
        tags: adminTags,
        summary: 'Beta waitlist applications',
        response: { 200: Type.Object({ entries: Type.Array(S.WaitlistEntry) }), ...errors(401, 403) },
      },
    },
    async (req) => invites.listWaitlist(requireActor(req)),
  );
  app.post(
    '/api/crm/admin/waitlist/:id/approve',
    {
      config: admin,
      schema: {
        tags: adminTags,
        summary: 'Approve: generate and e-mail an invite code',
        params: WaitlistIdParam,
        response: {
          200: Type.Object({ ok: Type.Boolean(), invite_code: Type.String(), email_sent: Type.Boolean() }),
          ...errors(401, 403, 404, 409),
        },
      },
    },
    async (req) => invites.approve(requireActor(req), req.params.id),
  );
  app.post(
    '/api/crm/admin/waitlist/:id/reject',
    {
      config: admin,
      schema: {
        tags: adminTags,
        summary: 'Reject an application',
        params: WaitlistIdParam,
        response: { 200: S.Ok, ...errors(401, 403, 404, 409) },
      },
    },
    async (req) => invites.reject(requireActor(req), req.params.id),
  );
  app.get(
    '/api/crm/admin/users',
    {
      config: admin,
      schema: {
        tags: adminTags,
        summary: 'Users, newest first',
        response: { 200: Type.Object({ users: Type.Array(S.User), total: Type.Integer() }), ...errors(401, 403) },
      },
    },
    async (req) => accounts.listUsers(requireActor(req)),
  );
  app.post(
    '/api/crm/admin/users',
    {
      config: admin,
      schema: {
        tags: adminTags,
        summary: 'Create a user (no invite needed)',
        body: S.AdminCreateUserBody,
        response: { 201: Type.Object({ user: S.User }), ...errors(400, 401, 403, 409) },
      },
    },
    async (req, reply) => reply.status(201).send(await accounts.adminCreateUser(requireActor(req), req.body)),
  );
  app.post(
    '/api/crm/admin/users/:id/plan',
    {
      config: admin,
      schema: {
        tags: adminTags,
        summary: "Set a user's plan",
        params: UserIdParam,
        body: Type.Object({ plan: S.PlanName }),
        response: { 200: Type.Object({ ok: Type.Boolean(), plan: Type.String() }), ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => accounts.setPlan(requireActor(req), req.params.id, req.body.plan),
  );
  app.get(
    '/api/crm/admin/outbox',
    {
      config: admin,
      schema: {
        tags: adminTags,
        summary: 'Transactional e-mails: sent, kept (no transport configured), retrying or failed; newest first',
        description:
          'Each item says which transport handled it (`api`: the e-mail API, `smtp`), how many delivery attempts were made and the last error. A failed delivery is `retrying` until a later attempt succeeds, or `failed` after five attempts.',
        querystring: Type.Object({
          limit: Type.Integer({
            minimum: 1,
            maximum: 500,
            default: 50,
            description: 'newest e-mails to return (default 50, at most 500)',
          }),
          status: Type.Optional(
            Type.Union(
              ['kept', 'sent', 'retrying', 'failed'].map((v) => Type.Literal(v)),
              {
                description: 'only the e-mails of this status',
              },
            ),
          ),
        }),
        response: {
          200: Type.Object({
            items: Type.Array(
              Type.Object({
                id: Type.Integer(),
                to: Type.String(),
                subject: Type.String(),
                text: Type.String(),
                kind: Type.String(),
                status: Type.String({ description: 'kept, sent, retrying or failed' }),
                transport: Type.Union([Type.Literal('api'), Type.Literal('smtp'), Type.Null()]),
                attempts: Type.Integer(),
                error: Type.Union([Type.String(), Type.Null()]),
                created_at: DateTime(),
                sent_at: Type.Union([DateTime(), Type.Null()]),
              }),
            ),
            total: Type.Integer(),
          }),
          ...errors(401, 403),
        },
      },
    },
    async (req) => invites.outbox(requireActor(req), req.query.limit, req.query.status as OutboxStatus | undefined),
  );

  const accountTags = ['account'];
  app.get(
    '/api/crm/account/settings',
    {
      schema: {
        tags: accountTags,
        summary: 'Account settings (the LLM key masked)',
        response: { 200: S.Settings, ...errors(401) },
      },
    },
    async (req) => settings.get(requireActor(req)),
  );
  app.put(
    '/api/crm/account/settings',
    {
      schema: {
        tags: accountTags,
        summary: 'Update account settings',
        body: S.SettingsBody,
        response: { 200: S.Settings, ...errors(400, 401) },
      },
    },
    async (req) => settings.update(requireActor(req), req.body),
  );
}
