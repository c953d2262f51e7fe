/**
 * Transactional e-mail (specification, Authentication rule 11; configuration `SMTP_URL`, `MAIL_FROM`).
 * Every message carries `List-Unsubscribe` (link to `{app_url}/account?tab=notifications`),
 * `List-Unsubscribe-Post: List-Unsubscribe=One-Click` and a footer link to the same page.
 * With `SMTP_URL` it is sent through nodemailer and recorded as `sent` (or `failed`); without it the
 * message is kept in the `outbox` table (`kept`) and its recipient and subject are logged.
 *
 * Live tokens: a message names the secrets its body carries (`secrets`: a verification or reset token, an invite
 * code). With SMTP the mailbox is the delivery channel, so the record keeps the body with each secret, and any
 * `token=` value of a link, replaced by `[redacted]`: whoever reads the outbox or the database cannot take over an
 * account. Without SMTP the outbox is the delivery channel (admins read it) and keeps the message as it is.
 */
import type { SendMailOptions, Transporter } from 'nodemailer';
import { type Kysely, sql } from 'kysely';
import type { Logger } from '../../lib/logger.ts';
import type { DB } from '../../db/types.ts';

export interface MailMessage {
  to: string;
  subject: string;
  /** Plain-text body; the footer is appended. */
  text: string;
  /** What the message is for (verify_email, reset_password, password_changed, invite, …). */
  kind: string;
  /** The live secrets the body carries (tokens, codes): redacted from the record of a message sent over SMTP. */
  secrets?: string[];
}

/** Where a live secret stood in a recorded message. */
export const REDACTED = '[redacted]';

/**
 * `text` with every one of `secrets` (non-empty) and every `token=` value of a link replaced by `[redacted]`
 * (module comment). Pure.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join(REDACTED);
  return out.replace(/([?&]token=)[^\s&#"'<>]+/gi, `$1${REDACTED}`);
}

/** One recorded message as admins read it (`GET /api/crm/admin/outbox`); `text` includes the footer. */
export interface OutboxItem {
  id: number;
  to: string;
  subject: string;
  text: string;
  kind: string;
  status: 'kept' | 'sent' | 'failed';
  created_at: Date;
}

export interface Mailer {
  /** Deliver or keep the message. Never throws: @returns whether it was handed to an SMTP server. */
  send(msg: MailMessage): Promise<{ sent: boolean; id: number }>;
  /** The newest `limit` recorded messages (kept, sent or failed), newest first, and how many there are. */
  outbox(limit: number): Promise<{ items: OutboxItem[]; total: number }>;
}

export interface MailerOptions {
  db: Kysely<DB>;
  appUrl: string;
  from: string;
  smtpUrl?: string;
  log: Logger;
}

const loadTransport = async (url: string): Promise<Transporter> =>
  (await import('nodemailer')).default.createTransport(url);

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function createMailer(opts: MailerOptions): Mailer {
  // nodemailer is loaded with the first mail sent over SMTP, not at start.
  const smtpUrl = opts.smtpUrl;
  let smtp: Promise<Transporter> | undefined;
  const transport = smtpUrl
    ? { sendMail: async (m: SendMailOptions) => (await (smtp ??= loadTransport(smtpUrl))).sendMail(m) }
    : undefined;
  const unsubscribe = `${opts.appUrl}/account?tab=notifications`;
  return {
    async send(msg) {
      const headers = {
        'List-Unsubscribe': `<${unsubscribe}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      };
      const text = `${msg.text}\n\n--\nManage e-mail notifications: ${unsubscribe}\n`;
      const html =
        `<div>${escapeHtml(msg.text).replace(/\n/g, '<br>')}</div>` +
        `<hr><p style="font-size:12px;color:#666"><a href="${escapeHtml(unsubscribe)}">Manage e-mail notifications</a></p>`;
      let status: 'kept' | 'sent' | 'failed' = 'kept';
      let error: string | null = null;
      if (transport) {
        try {
          await transport.sendMail({ from: opts.from, to: msg.to, subject: msg.subject, text, html, headers });
          status = 'sent';
        } catch (err) {
          status = 'failed';
          error = (err as Error).message.slice(0, 500);
          opts.log.warn({ kind: msg.kind, err: error }, 'e-mail delivery failed');
        }
      } else {
        opts.log.info({ kind: msg.kind, subject: msg.subject }, 'e-mail kept in the outbox (SMTP_URL is not set)');
      }
      // Sent (or tried) over SMTP: the record is a record, not a channel; its live tokens are redacted.
      const keep = (body: string) => (transport ? redactSecrets(body, msg.secrets) : body);
      const row = await opts.db
        .insertInto('outbox')
        .values({
          to_addr: msg.to,
          subject: msg.subject,
          text_body: keep(text),
          html_body: keep(html),
          headers: JSON.stringify(headers),
          kind: msg.kind,
          status,
          error,
          sent_at: status === 'sent' ? new Date() : null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { sent: status === 'sent', id: row.id };
    },

    async outbox(limit) {
      const items = await opts.db
        .selectFrom('outbox')
        .select(['id', 'to_addr as to', 'subject', 'text_body as text', 'kind', 'status', 'created_at'])
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      const total = await opts.db
        .selectFrom('outbox')
        .select(sql<number>`count(*)::int`.as('n'))
        .executeTakeFirstOrThrow();
      return { items, total: total.n };
    },
  };
}

/**
 * Erasure: forget the messages kept or sent to an address (inside the erasure transaction), whatever their
 * state. @param email compared without case
 */
export async function eraseOutboxFor(ex: Kysely<DB>, email: string): Promise<void> {
  await ex
    .deleteFrom('outbox')
    .where(sql`lower(to_addr)`, '=', email.toLowerCase())
    .execute();
}
