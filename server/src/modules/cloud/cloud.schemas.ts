/** Request and answer schemas of the cloud container routes (TypeBox: validates, serializes, documents). */
import { Type } from 'typebox';
import { DateTime, Nullable } from '../../http/schemas.ts';

const ContainerStatus = Type.String({
  description: 'provisioning, ready, paused, suspended or deleted (`none` on status when there is no container)',
});

export const ProvisionAnswer = Type.Object({
  container_id: Type.String(),
  status: ContainerStatus,
  server_ip: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  agent_authed: Type.Boolean(),
  codehost_authed: Type.Boolean(),
});

export const StatusAnswer = Type.Object({
  status: ContainerStatus,
  container_id: Type.Optional(Type.String()),
  server_ip: Type.Optional(Nullable(Type.String())),
  internal_port: Type.Optional(Nullable(Type.Integer())),
  agent_authed: Type.Optional(Type.Boolean()),
  codehost_authed: Type.Optional(Type.Boolean()),
  docker_running: Type.Optional(
    Type.Boolean({ description: "whether the runtime reports the container's processes alive (running or paused)" }),
  ),
  last_active: Type.Optional(DateTime()),
  created_at: Type.Optional(DateTime()),
});

export const DeprovisionAnswer = Type.Object({ ok: Type.Boolean(), container_id: Type.String() });
export const PublicKeyAnswer = Type.Object({
  public_key: Type.String({ description: 'OpenSSH public key line (ssh-ed25519 …)' }),
});
export const VerifyAnswer = Type.Object({
  ok: Type.Boolean(),
  output: Type.String({ description: "the command's output inside the container (last 4000 characters)" }),
});

const WaitlistStatus = Type.Union([Type.Literal('waiting'), Type.Literal('invited'), Type.Literal('activated')]);

export const JoinBody = Type.Object(
  { note: Type.Optional(Type.String({ maxLength: 1000, description: 'what the user wants the container for' })) },
  { additionalProperties: false, description: 'optional: the request may have no body' },
);
export const JoinAnswer = Type.Object({
  position: Type.Integer({ description: '1-based place in order of joining' }),
  status: WaitlistStatus,
  joined_at: DateTime(),
  message: Type.String(),
});
export const WaitlistStatusAnswer = Type.Union([
  Type.Object({
    position: Type.Integer(),
    status: WaitlistStatus,
    joined_at: DateTime(),
    invited_at: Nullable(DateTime()),
  }),
  Type.Object({ status: Type.Literal('not_joined') }),
]);
export const WaitlistListAnswer = Type.Object({
  stats: Type.Object({
    total: Type.Integer(),
    waiting: Type.Integer(),
    invited: Type.Integer(),
    activated: Type.Integer(),
  }),
  list: Type.Array(
    Type.Object({
      user_id: Type.Integer(),
      email: Type.String(),
      position: Type.Integer(),
      status: WaitlistStatus,
      note: Nullable(Type.String()),
      joined_at: DateTime(),
      invited_at: Nullable(DateTime()),
      activated_at: Nullable(DateTime()),
    }),
  ),
});
export const InviteBody = Type.Object(
  { user_id: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'the user to invite' }) },
  { additionalProperties: false },
);
export const InviteAnswer = Type.Object({
  ok: Type.Boolean(),
  user_id: Type.Integer(),
  position: Nullable(Type.Integer()),
});

export const UserIdParam = Type.Object({
  userId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: "the container owner's chat id; must equal the token's chat id",
  }),
});
export const TerminalQuery = Type.Object({
  token: Type.Optional(Type.String({ description: 'the JWT (browsers cannot set headers on a WebSocket)' })),
  cols: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 80, description: 'terminal columns' })),
  rows: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 24, description: 'terminal rows' })),
});
export const StreamQuery = Type.Object({
  token: Type.Optional(Type.String({ description: 'the JWT (EventSource cannot set headers)' })),
});
