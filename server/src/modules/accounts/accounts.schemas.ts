/** Request and answer schemas of the accounts area (TypeBox: validates, serializes, documents). */
import { Type } from 'typebox';
import { DateTime, named, Nullable } from '../../http/schemas.ts';
export { Ok } from '../../http/schemas.ts';

export const Email = Type.String({
  minLength: 3,
  maxLength: 254,
  pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
  description: 'an e-mail address',
});
export const Password = Type.String({ minLength: 1, maxLength: 1024 });
export const PlanName = Type.Union(
  ['free', 'min', 'cloud', 'max', 'starter', 'starter_cloud', 'beta'].map((p) => Type.Literal(p)),
);

export const User = named(
  'User',
  Type.Object({
    id: Type.Integer(),
    email: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    role: Type.Union([Type.Literal('user'), Type.Literal('admin')]),
    plan: Type.String(),
    email_verified: Type.Boolean(),
    chat_id: Type.String(),
    created_at: DateTime(),
  }),
);

export const AuthAnswer = Type.Object({ token: Type.String(), user: User, needs_verification: Type.Boolean() });

export const RegisterBody = Type.Object({
  email: Email,
  password: Password,
  invite_code: Type.Optional(Type.String({ maxLength: 64 })),
  name: Type.Optional(Type.String({ maxLength: 200 })),
});
export const LoginBody = Type.Object({ email: Type.String({ maxLength: 254 }), password: Password });
export const TokenBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
export const ForgotBody = Type.Object({ email: Type.String({ maxLength: 254 }) });
export const ResetBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }), password: Password });
export const ChangeBody = Type.Object({ current_password: Password, new_password: Password });
export const WaitlistBody = Type.Object({ email: Email, message: Type.Optional(Type.String({ maxLength: 2000 })) });

export const Invite = named(
  'Invite',
  Type.Object({
    code: Type.String(),
    note: Type.Union([Type.String(), Type.Null()]),
    status: Type.Union([Type.Literal('active'), Type.Literal('used')]),
    created_at: DateTime(),
    used_at: Nullable(DateTime()),
    used_by_email: Type.Union([Type.String(), Type.Null()]),
  }),
);
export const InviteList = Type.Object({
  invites: Type.Array(Invite),
  total_active: Type.Integer(),
  total_used: Type.Integer(),
});
export const GenerateInvitesBody = Type.Object({
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 1 })),
  note: Type.Optional(Type.String({ maxLength: 200 })),
});
export const GenerateInvitesAnswer = Type.Object({
  ok: Type.Boolean(),
  codes: Type.Array(Type.String()),
  count: Type.Integer(),
});

export const WaitlistEntry = named(
  'WaitlistEntry',
  Type.Object({
    id: Type.Integer(),
    email: Type.String(),
    message: Type.Union([Type.String(), Type.Null()]),
    status: Type.String(),
    created_at: DateTime(),
  }),
);

export const AdminCreateUserBody = Type.Object({
  email: Email,
  password: Password,
  name: Type.Optional(Type.String({ maxLength: 200 })),
  role: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('admin')])),
  plan: Type.Optional(PlanName),
  email_verified: Type.Optional(Type.Boolean()),
});

export const Settings = Type.Object({
  llm_key: Type.Union([Type.String(), Type.Null()], { description: 'masked prefix of the stored key, never the key' }),
  llm_key_set: Type.Boolean(),
  upload_transcripts: Type.Boolean(),
});
export const SettingsBody = Type.Object({
  llm_key: Type.Optional(
    Type.Union([Type.String({ maxLength: 512 }), Type.Null()], {
      description: 'the own LLM-provider key; empty string or null removes it',
    }),
  ),
  upload_transcripts: Type.Optional(Type.Boolean()),
});
