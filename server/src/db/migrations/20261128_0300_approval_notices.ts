/**
 * Approvals through the messenger (docs/ARCHITECTURE.md, Approvals): `messenger_approval_notices` holds, per
 * approval, the message its request was sent as (the bot, the owner's chat, the message id), so a press on its
 * buttons or a reply to it ("deny: reason") is matched to the approval it was sent for, and the message is edited
 * once the approval is decided. Deleted with the approval.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table messenger_approval_notices (
      approval_id integer primary key references approvals(id) on delete cascade,
      project_id integer not null references projects(id) on delete cascade,
      bot_id text not null,
      chat_id text not null,
      message_id bigint not null,
      text text not null,
      created_at timestamptz not null default now(),
      edited_at timestamptz
    );
    create index messenger_approval_notices_message on messenger_approval_notices (bot_id, chat_id, message_id);
  `.execute(db);
}
