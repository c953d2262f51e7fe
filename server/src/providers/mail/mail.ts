/**
 * Transactional e-mail (docs/api.md, Authentication and tokens; docs/configuration.md, E-mail). Every message
 * carries `List-Unsubscribe` (link to `{app_url}/account?tab=notifications`),
 * `List-Unsubscribe-Post: List-Unsubscribe=One-Click` and a footer link to the same page.
 *
 * The transport is chosen for each message: the e-mail API (`EMAIL_API_URL`) whenever `EMAIL_API_KEY` is in the
 * secret store (read on every send, so a rotated or removed key is used by the next mail on every instance),
 * else SMTP (`SMTP_URL`, through nodemailer), else none: the message is kept in the `outbox` table (`kept`) and its
 * recipient and subject are logged. Every message is recorded there: `sent`, `kept`, `retrying` (a delivery
 * failed and the `mail.retry` job tries again later) or `failed` (every attempt failed), with the transport, the
 * attempts and the last error, which administrators read at `GET /api/crm/admin/outbox`.
 *
 * Live tokens: a message names the secrets its body carries (`secrets`: a verification or reset token, an invite
 * code). Once a transport delivered it (or gave up), the mailbox is the delivery channel, so the record keeps the
 * body with each secret, and any `token=` value of a link, replaced by `[redacted]`: whoever reads the outbox or
 * the database cannot take over an account. A message waiting for another attempt (`retrying`) keeps its body
 * until then (the retry sends it); its `token=` links are redacted when it ends. Without a transport the outbox is
 * the delivery channel (admins read it) and keeps the message as it is.
 */
import type { SendMailOptions, Transporter } from 'nodemailer';
import { type Kysely, sql } from 'kysely';
import type { Logger } from '../../lib/logger.ts';
import type { DB } from '../../db/types.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { sendThroughEmailApi } from './email-api.ts';

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

export type OutboxStatus = 'kept' | 'sent' | 'failed' | 'retrying';

/** One recorded message as admins read it (`GET /api/crm/admin/outbox`); `text` includes the footer. */
export interface OutboxItem {
  id: number;
  to: string;
  subject: string;
  text: string;
  kind: string;
  status: OutboxStatus;
  /** The transport that handled it last (`api`: the e-mail API, `smtp`), null when kept. */
  transport: 'api' | 'smtp' | null;
  /** Delivery attempts made (0 when kept). */
  attempts: number;
  /** The last delivery error (never a key), null when none. */
  error: string | null;
  created_at: Date;
  sent_at: Date | null;
}

export interface Mailer {
  /**
   * Deliver or keep the message. Never throws: a failed delivery is recorded (`retrying`) and retried by the
   * `mail.retry` job. @returns whether it was handed to the e-mail API or an SMTP server, and its outbox id.
   */
  send(msg: MailMessage): Promise<{ sent: boolean; id: number }>;
  /**
   * The `mail.retry` job: one more delivery attempt of a `retrying` message with the transport configured now.
   * After MAIL_MAX_ATTEMPTS failed attempts the message is `failed`; with no transport left it is `kept`.
   */
  retry(id: number): Promise<void>;
  /** The newest `limit` recorded messages (of `status` when given), newest first, and how many there are. */
  outbox(limit: number, status?: OutboxStatus): Promise<{ items: OutboxItem[]; total: number }>;
}

export interface MailerOptions {
  db: Kysely<DB>;
  appUrl: string;
  from: string;
  smtpUrl?: string;
  /** The e-mail API's root (`EMAIL_API_URL`) and its key, read from the secret store on every send. */
  emailApi: { url: string; key: () => Promise<string | undefined> };
  /** Where failed deliveries are queued for another attempt. */
  jobs: Pick<JobQueue, 'send' | 'declare'>;
  /** Seconds before the second attempt; each later one waits four times longer (`MAIL_RETRY_DELAY_S`). */
  retryDelayS: number;
  log: Logger;
}

/** Delivery attempts of one message before it is `failed` (the first one included). */
export const MAIL_MAX_ATTEMPTS = 5;

/** Seconds to wait after failed attempt `attempts` (1-based): base × 4^(attempts − 1). */
export const retryDelayAfter = (baseS: number, attempts: number): number => baseS * 4 ** (attempts - 1);

const loadTransport = async (url: string): Promise<Transporter> =>
  (await import('nodemailer')).default.createTransport(url);

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A stored message, as a transport takes it. */
interface Envelope {
  to: string;
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

export function createMailer(opts: MailerOptions): Mailer {
  const { db, log } = opts;
  // nodemailer is loaded with the first mail sent over SMTP, not at start.
  const smtpUrl = opts.smtpUrl;
  let smtp: Promise<Transporter> | undefined;
  const smtpSend = smtpUrl
    ? async (m: SendMailOptions) => (await (smtp ??= loadTransport(smtpUrl))).sendMail(m)
    : undefined;
  const unsubscribe = `${opts.appUrl}/account?tab=notifications`;
  opts.jobs.declare('mail.retry');

  /**
   * One delivery attempt through the transport configured now: the e-mail API when its key is set, else SMTP.
   * @returns the transport and the error (undefined on success), or no transport when neither is configured.
   */
  async function deliver(m: Envelope): Promise<{ transport: 'api' | 'smtp' | null; error?: string }> {
    const key = await opts.emailApi.key();
    try {
      if (key) {
        await sendThroughEmailApi(opts.emailApi.url, key, {
          from: opts.from,
          to: [m.to],
          subject: m.subject,
          html: m.html,
          text: m.text,
          headers: m.headers,
        });
        return { transport: 'api' };
      }
      if (smtpSend) {
        await smtpSend({
          from: opts.from,
          to: m.to,
          subject: m.subject,
          text: m.text,
          html: m.html,
          headers: m.headers,
        });
        return { transport: 'smtp' };
      }
      return { transport: null };
    } catch (err) {
      const error = (key ? (err as Error).message.split(key).join('***') : (err as Error).message).slice(0, 500);
      return { transport: key ? 'api' : 'smtp', error };
    }
  }

  /** After failed attempt number `attempts`: queue the next one, or give up. @returns the status to store. */
  async function afterFailure(id: number, attempts: number): Promise<OutboxStatus> {
    if (attempts >= MAIL_MAX_ATTEMPTS) return 'failed';
    await opts.jobs.send('mail.retry', { outbox_id: id }, { startAfter: retryDelayAfter(opts.retryDelayS, attempts) });
    return 'retrying';
  }

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
      const { transport, error } = await deliver({ to: msg.to, subject: msg.subject, text, html, headers });
      const status: OutboxStatus = !transport ? 'kept' : error === undefined ? 'sent' : 'retrying';
      if (!transport)
        log.info(
          { kind: msg.kind, subject: msg.subject },
          'e-mail kept in the outbox (neither EMAIL_API_KEY nor SMTP_URL is set)',
        );
      else if (error !== undefined) log.warn({ kind: msg.kind, transport, err: error }, 'e-mail delivery failed');
      // Delivered (or given up): the record is a record, not a channel; its live tokens are redacted.
      const keep = (body: string) => (status === 'sent' ? redactSecrets(body, msg.secrets) : body);
      const row = await db
        .insertInto('outbox')
        .values({
          to_addr: msg.to,
          subject: msg.subject,
          text_body: keep(text),
          html_body: keep(html),
          headers: JSON.stringify(headers),
          kind: msg.kind,
          status,
          transport,
          attempts: transport ? 1 : 0,
          error: error ?? null,
          sent_at: status === 'sent' ? new Date() : null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (status === 'retrying') {
        const next = await afterFailure(row.id, 1).catch((err) => {
          log.warn({ err: (err as Error).message }, 'e-mail retry not queued');
          return 'failed' as const;
        });
        if (next !== 'retrying')
          await db
            .updateTable('outbox')
            .set({
              status: next,
              text_body: redactSecrets(text, msg.secrets),
              html_body: redactSecrets(html, msg.secrets),
            })
            .where('id', '=', row.id)
            .execute();
      }
      return { sent: status === 'sent', id: row.id };
    },

    async retry(id) {
      const row = await db
        .selectFrom('outbox')
        .select(['to_addr', 'subject', 'text_body', 'html_body', 'headers', 'attempts', 'kind'])
        .where('id', '=', id)
        .where('status', '=', 'retrying')
        .executeTakeFirst();
      if (!row) return;
      const { transport, error } = await deliver({
        to: row.to_addr,
        subject: row.subject,
        text: row.text_body,
        html: row.html_body ?? '',
        headers: row.headers,
      });
      const attempts = row.attempts + (transport ? 1 : 0);
      const status: OutboxStatus = !transport
        ? 'kept'
        : error === undefined
          ? 'sent'
          : await afterFailure(id, attempts);
      if (error !== undefined)
        log.warn({ kind: row.kind, transport, attempts, status, err: error }, 'e-mail delivery failed again');
      await db
        .updateTable('outbox')
        .set({
          status,
          transport,
          attempts,
          error: error ?? null,
          sent_at: status === 'sent' ? new Date() : null,
          ...(status === 'sent' || status === 'failed'
            ? { text_body: redactSecrets(row.text_body), html_body: row.html_body && redactSecrets(row.html_body) }
            : {}),
        })
        .where('id', '=', id)
        .where('status', '=', 'retrying')
        .execute();
    },

    async outbox(limit, status) {
      let q = db
        .selectFrom('outbox')
        .select([
          'id',
          'to_addr as to',
          'subject',
          'text_body as text',
          'kind',
          'status',
          'transport',
          'attempts',
          'error',
          'created_at',
          'sent_at',
        ])
        .orderBy('id', 'desc')
        .limit(limit);
      let count = db.selectFrom('outbox').select(sql<number>`count(*)::int`.as('n'));
      if (status) {
        q = q.where('status', '=', status);
        count = count.where('status', '=', status);
      }
      const items = await q.execute();
      const total = await count.executeTakeFirstOrThrow();
      return { items, total: total.n };
    },
  };
}

/** The `mail.retry` job: another delivery attempt of a message whose delivery failed (providers/mail). */
export function registerMailJobs(jobs: Pick<JobQueue, 'define'>, mailer: Pick<Mailer, 'retry'>): void {
  jobs.define('mail.retry', (data) => mailer.retry(data.outbox_id), { retryLimit: 2, retryDelay: 30 });
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
