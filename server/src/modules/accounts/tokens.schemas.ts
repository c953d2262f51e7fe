/** Request and answer schemas of access tokens (docs/api.md, Access tokens). */
import { Type } from 'typebox';
import { DateTime, named, Nullable, ProjectName } from '../../http/schemas.ts';

const Scope = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')]);

export const CreateTokenBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'what the token is for' }),
    scopes: Type.Array(Scope, {
      minItems: 1,
      maxItems: 3,
      description: '`read` (GET and streams), `write` (everything else a user may do), `admin` (administrators)',
    }),
    project: Type.Optional(Nullable(ProjectName)),
    expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
  },
  { additionalProperties: false },
);

const TokenFields = {
  id: Type.Integer(),
  name: Type.String(),
  prefix: Type.String({ description: 'the first 12 characters of the token' }),
  scopes: Type.Array(Scope),
  project: Nullable(Type.String()),
  created_at: DateTime(),
  expires_at: Nullable(DateTime()),
};

export const CreatedToken = Type.Object({
  ...TokenFields,
  token: Type.String({ description: 'the token itself: shown only in this answer' }),
});

/** An access token as its list shows it (never the token itself). */
export const AccessToken = named(
  'AccessToken',
  Type.Object({
    ...TokenFields,
    kind: Type.Union([Type.Literal('personal'), Type.Literal('device')]),
    device_id: Nullable(Type.String()),
    last_used_at: Nullable(DateTime()),
  }),
);

export const TokenList = Type.Object({ tokens: Type.Array(AccessToken) });
