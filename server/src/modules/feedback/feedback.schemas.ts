/** Request and answer schemas of feedback and translation feedback (TypeBox: validates, serializes, documents). */
import { Type } from 'typebox';
import { DateTime, Nullable } from '../../http/schemas.ts';

const FeedbackType = Type.Union([Type.Literal('bug'), Type.Literal('feature'), Type.Literal('other')]);

export const FeedbackBody = Type.Object({
  type: FeedbackType,
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.String({ minLength: 1, maxLength: 5000 }),
  project: Type.Optional(Type.String({ maxLength: 200 })),
  browser: Type.Optional(Type.String({ maxLength: 1000 })),
});
export const FeedbackAnswer = Type.Object({ ok: Type.Boolean(), type: Type.String(), title: Type.String() });

export const LimitQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'items, default 50, at most 500' })),
});

export const FeedbackList = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.Integer(),
      type: Type.String(),
      title: Type.String(),
      description: Type.String(),
      project: Nullable(Type.String()),
      browser: Nullable(Type.String()),
      user_email: Nullable(Type.String()),
      created_at: DateTime(),
    }),
  ),
  count: Type.Integer(),
});

const Locale = Type.Union(
  [
    Type.Literal('uk'),
    Type.Literal('de'),
    Type.Literal('es'),
    Type.Literal('fr'),
    Type.Literal('pl'),
    Type.Literal('pt-BR'),
    Type.Literal('ru'),
  ],
  { description: 'uk, de, es, fr, pl, pt-BR or ru' },
);
const Severity = Type.Union([Type.Literal('minor'), Type.Literal('major'), Type.Literal('wrong')]);

export const TranslationBody = Type.Object({
  locale: Locale,
  msgid: Type.String({ minLength: 1, maxLength: 1000 }),
  suggestion: Type.String({ minLength: 1, maxLength: 2000 }),
  severity: Severity,
  current_translation: Type.Optional(Type.String({ maxLength: 2000 })),
  page_url: Type.Optional(Type.String({ maxLength: 2000 })),
});
export const TranslationStored = Type.Object({ ok: Type.Boolean(), id: Type.Integer(), status: Type.String() });

export const TranslationQuery = Type.Object({
  locale: Type.Optional(Locale),
  status: Type.Optional(
    Type.Union([Type.Literal('open'), Type.Literal('accepted'), Type.Literal('rejected'), Type.Literal('all')], {
      description: 'open (default), accepted, rejected or all',
    }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'items, default 50, at most 500' })),
});

export const TranslationList = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.Integer(),
      locale: Type.String(),
      msgid: Type.String(),
      suggestion: Type.String(),
      severity: Type.String(),
      current_translation: Nullable(Type.String()),
      page_url: Nullable(Type.String()),
      status: Type.String(),
      note: Nullable(Type.String()),
      reviewed_by: Nullable(Type.String()),
      reviewed_at: Nullable(DateTime()),
      created_at: DateTime(),
    }),
  ),
  count: Type.Integer(),
});

export const TranslationStats = Type.Object({
  stats: Type.Array(
    Type.Object({
      locale: Type.String(),
      total: Type.Integer(),
      open_count: Type.Integer(),
      accepted: Type.Integer(),
      rejected: Type.Integer(),
      critical_open: Type.Integer({ description: 'open suggestions of severity wrong' }),
    }),
  ),
});

export const ReviewBody = Type.Object({ note: Type.Optional(Type.String({ maxLength: 2000 })) });
export const AcceptAnswer = Type.Object({
  ok: Type.Boolean(),
  po_patched: Type.Boolean({ description: 'a catalog of the locale held the msgid and was patched' }),
  glossary_suggestion: Type.Boolean({ description: 'three or more suggestions for this msgid were accepted' }),
});
