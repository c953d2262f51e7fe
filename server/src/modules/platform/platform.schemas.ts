/** Request and answer schemas of the platform settings (TypeBox: validates, serializes, documents). */
import { Type } from 'typebox';
import { DateTime, Nullable } from '../../http/schemas.ts';

export const NameParam = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, description: 'the setting name, e.g. PLATFORM_LLM_KEY' }),
});

export const SettingItem = Type.Object({
  name: Type.String(),
  label: Type.String(),
  description: Type.String(),
  testable: Type.Boolean(),
  restartTargets: Type.Array(Type.String()),
  set: Type.Boolean(),
  preview: Nullable(Type.String({ description: 'a 12-character prefix, an ellipsis and a 4-character suffix' })),
  length: Type.Integer(),
  lastRotated: Nullable(DateTime()),
  lastRotatedBy: Nullable(Type.String()),
  category: Type.Union([Type.Literal('llm'), Type.Literal('oauth'), Type.Literal('messenger'), Type.Literal('email')]),
  usedIn: Type.Array(Type.String()),
  getFromUrl: Type.String(),
  effectAfterRotate: Type.String(),
  riskIfLeaked: Type.String(),
});

export const SettingsList = Type.Object({ items: Type.Array(SettingItem) });

export const SetBody = Type.Object({
  value: Type.String({ minLength: 8, maxLength: 8192, description: 'the new value, at least 8 characters' }),
});

export const TestAnswer = Type.Object({
  ok: Type.Boolean(),
  reason: Type.Optional(Type.String({ description: 'not_set, rejected, timeout or unreachable' })),
  detail: Type.Optional(Type.String()),
});

export const RestartAnswer = Type.Object({
  ok: Type.Boolean(),
  restarted: Type.Array(Type.String()),
  note: Type.String(),
});

export const AuditQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'entries, default 50, at most 500' })),
  key: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'only entries of this setting' })),
});

export const AuditList = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.Integer(),
      key_name: Type.String(),
      action: Type.String({ description: 'set, delete, test or restart' }),
      ok: Nullable(Type.Boolean()),
      client_ip: Nullable(Type.String()),
      user_agent: Nullable(Type.String()),
      actor_email: Nullable(Type.String()),
      created_at: DateTime(),
    }),
  ),
  count: Type.Integer(),
});
