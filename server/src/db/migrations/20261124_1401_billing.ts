/**
 * Plans and payments: the billing state of each user (`billing_accounts`: subscription status, failures in a row,
 * the paid period, the sealed card token of the payment provider and the masked card number), the provider's
 * invoices the service created (`payprov_invoices`: hosted checkout and renewal charges) and every callback
 * received (`payprov_events`, unique per invoice, status and modification time, so a replayed callback changes
 * nothing).
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table billing_accounts (
      user_id integer primary key references users(id) on delete cascade,
      status text not null default 'none' check (status in ('none', 'active', 'past_due', 'cancelled', 'lapsed')),
      paid_plan text,
      billing_failures integer not null default 0 check (billing_failures >= 0),
      current_period_end timestamptz,
      wallet_id text not null,
      card_token_enc text,
      masked_pan text,
      renewal_period timestamptz,
      renewal_attempt integer not null default 0,
      updated_at timestamptz not null default now()
    );

    create table payprov_invoices (
      reference text primary key,
      invoice_id text unique,
      user_id integer not null references users(id) on delete cascade,
      kind text not null check (kind in ('checkout', 'renewal')),
      plan text not null,
      amount integer not null check (amount > 0),
      status text not null default 'created',
      last_modified timestamptz,
      created_at timestamptz not null default now()
    );
    create index payprov_invoices_user on payprov_invoices (user_id, created_at);

    create table payprov_events (
      id bigserial primary key,
      invoice_id text not null,
      status text not null,
      modified_date text not null,
      user_id integer references users(id) on delete cascade,
      failure_reason text,
      received_at timestamptz not null default now(),
      unique (invoice_id, status, modified_date)
    );
  `.execute(db);
}
