/**
 * Feedback and translation feedback (docs/ARCHITECTURE.md, Feedback and translation feedback). A report is stored,
 * recorded as a `feedback_report` event and sent to the operator's messenger chat (best effort, after the answer). An
 * accepted translation suggestion patches the locale's gettext catalogs (po-catalogs.ts) inside the review's
 * transaction, under a per-locale lock, so a failed write leaves the suggestion open.
 */
import type { Static } from 'typebox';
import { requireAdmin } from '../../access/access.ts';
import type { Actor } from '../../http/auth.ts';
import { Conflict, NotFound } from '../../http/errors.ts';
import type { ActivityLog } from '../../lib/activity.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Messenger } from '../../providers/messenger/messenger.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import type { AccountsRepo } from '../accounts/accounts.repo.ts';
import type { FeedbackRepo } from './feedback.repo.ts';
import type * as S from './feedback.schemas.ts';
import type { PoCatalogs } from './po-catalogs.ts';

/** Characters of a report's description the operator notification carries. */
export const NOTIFY_CHARS = 400;
/** Accepted suggestions for one msgid from which a glossary entry is suggested. */
export const GLOSSARY_THRESHOLD = 3;

export interface FeedbackDeps {
  repo: FeedbackRepo;
  accounts: Pick<AccountsRepo, 'emails'>;
  activity: Pick<ActivityLog, 'record'>;
  messenger: Pick<Messenger, 'sendMessage'>;
  secrets: Pick<SecretStore, 'get'>;
  catalogs: PoCatalogs;
  /** The operator's messenger chat (`OPERATOR_CHAT_ID`); unset: no notification. */
  operatorChatId: string | undefined;
  log: Logger;
}

export function createFeedbackService(deps: FeedbackDeps) {
  const { repo, log } = deps;

  /** Tell the operator through the operator bot (`MASTER_BOT_TOKEN`); never throws. */
  async function notifyOperator(text: string): Promise<void> {
    try {
      const token = await deps.secrets.get('MASTER_BOT_TOKEN');
      if (!token || !deps.operatorChatId) return;
      await deps.messenger.sendMessage(token, { chatId: deps.operatorChatId, text });
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'operator notification failed');
    }
  }

  return {
    /**
     * `POST /feedback`: store the report, record `feedback_report`, and notify the operator with the first 400
     * characters of the description without waiting for the messenger.
     * @returns `{ok: true, type, title}`.
     */
    async submit(actor: Actor, b: Static<typeof S.FeedbackBody>) {
      const id = await repo.insertReport({
        userId: actor.id,
        type: b.type,
        title: b.title,
        description: b.description,
        project: b.project ?? null,
        browser: b.browser ?? null,
      });
      await deps.activity.record({
        type: 'feedback_report',
        userId: actor.id,
        actor: actor.email,
        title: b.title.slice(0, 200),
        payload: { feedback_id: id, type: b.type, project: b.project ?? null },
      });
      const text =
        `Feedback (${b.type}) from ${actor.email}${b.project ? ` in ${b.project}` : ''}\n` +
        `${b.title}\n\n${b.description.slice(0, NOTIFY_CHARS)}`;
      void notifyOperator(text);
      return { ok: true, type: b.type, title: b.title };
    },

    /** `GET /admin/feedback?limit` (admin): newest first, default 50, at most 500 → `{items, count}`. */
    async listReports(actor: Actor, limit = 50) {
      requireAdmin(actor);
      const rows = await repo.listReports(Math.min(limit, 500));
      const emails = await deps.accounts.emails([...new Set(rows.map((r) => r.user_id).filter((x) => x !== null))]);
      const items = rows.map(({ user_id, ...r }) => ({
        ...r,
        user_email: user_id ? (emails.get(user_id) ?? null) : null,
      }));
      return { items, count: items.length };
    },

    /** `POST /feedback/translation`: store an open suggestion. @returns `{ok: true, id, status: 'open'}`. */
    async suggest(actor: Actor, b: Static<typeof S.TranslationBody>) {
      const id = await repo.insertTranslation({
        userId: actor.id,
        locale: b.locale,
        msgid: b.msgid,
        suggestion: b.suggestion,
        severity: b.severity,
        currentTranslation: b.current_translation ?? null,
        pageUrl: b.page_url ?? null,
      });
      return { ok: true, id, status: 'open' };
    },

    /**
     * `GET /admin/translations?locale&status&limit` (admin): newest first; status default open, `all` for every one.
     */
    async listTranslations(actor: Actor, q: Static<typeof S.TranslationQuery>) {
      requireAdmin(actor);
      const status = q.status ?? 'open';
      const items = await repo.listTranslations({
        locale: q.locale,
        status: status === 'all' ? undefined : status,
        limit: Math.min(q.limit ?? 50, 500),
      });
      return { items, count: items.length };
    },

    /**
     * `GET /admin/translations/stats` (admin): per locale `{locale, total, open_count, accepted, rejected,
     * critical_open}`.
     */
    async stats(actor: Actor) {
      requireAdmin(actor);
      return { stats: await repo.translationStats() };
    },

    /**
     * `POST /admin/translations/:id/accept {note?}` (admin): accept an open suggestion and patch every catalog of its
     * locale holding the msgid, in one transaction under the locale's lock (a write failure leaves it open: 500).
     * @returns `{ok, po_patched, glossary_suggestion}`. @throws 404 `translation_not_found`, 409 `already_reviewed`.
     */
    async accept(actor: Actor, id: number, note: string | undefined) {
      requireAdmin(actor);
      const r = await repo.transaction(async (tx) => {
        const status = await repo.translationStatus(id, tx);
        if (!status) throw new NotFound('No translation suggestion has this id.', 'translation_not_found');
        const first = await repo.review(id, 'accepted', note ?? null, actor.email, tx);
        if (!first) throw new Conflict('already_reviewed', 'This suggestion was already reviewed.');
        await repo.lockCatalog(tx, first.locale);
        const patched = await deps.catalogs.patch(first.locale, first.msgid, first.suggestion);
        const accepted = await repo.acceptedFor(tx, first.msgid);
        return { patched, accepted, locale: first.locale };
      });
      if (r.patched.length) log.info({ locale: r.locale, files: r.patched }, 'translation catalog patched');
      return { ok: true, po_patched: r.patched.length > 0, glossary_suggestion: r.accepted >= GLOSSARY_THRESHOLD };
    },

    /** `POST /admin/translations/:id/reject {note?}` (admin). @throws 404, 409 as `accept`. */
    async reject(actor: Actor, id: number, note: string | undefined) {
      requireAdmin(actor);
      const status = await repo.translationStatus(id);
      if (!status) throw new NotFound('No translation suggestion has this id.', 'translation_not_found');
      const r = await repo.review(id, 'rejected', note ?? null, actor.email);
      if (!r) throw new Conflict('already_reviewed', 'This suggestion was already reviewed.');
      return { ok: true };
    },

    /** Privacy export of a user's reports and suggestions. */
    exportUser: (userId: number) => repo.ofUser(userId),
  };
}

export type FeedbackService = ReturnType<typeof createFeedbackService>;
