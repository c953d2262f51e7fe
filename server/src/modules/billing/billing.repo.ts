/**
 * SQL of the billing area: `billing_accounts` (one row per user who started a checkout: subscription status,
 * failures in a row, the paid period, the sealed card token and masked card number), `payprov_invoices` (the
 * provider's invoices the service created, keyed by our reference) and `payprov_events` (every callback, unique
 * per invoice, status and modification time). Nobody else reads or writes these tables.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { BillingStatus, DB } from '../../db/types.ts';

export type Executor = Kysely<DB> | Transaction<DB>;

/** The billing row of a user. */
export interface BillingAccount {
  user_id: number;
  status: BillingStatus;
  paid_plan: string | null;
  billing_failures: number;
  current_period_end: Date | null;
  wallet_id: string;
  card_token_enc: string | null;
  masked_pan: string | null;
  renewal_period: Date | null;
  renewal_attempt: number;
}

/** One invoice of the provider as the service created it. */
export interface Invoice {
  reference: string;
  invoice_id: string | null;
  user_id: number;
  kind: 'checkout' | 'renewal';
  plan: string;
  amount: number;
  status: string;
  last_modified: Date | null;
}

export function createBillingRepo(db: Kysely<DB>) {
  return {
    /** Run `fn` in one transaction; pass `tx` to every call inside it. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** The billing row of a user, or undefined. */
    account: (userId: number, ex: Executor = db): Promise<BillingAccount | undefined> =>
      ex.selectFrom('billing_accounts').selectAll().where('user_id', '=', userId).executeTakeFirst(),

    /** The billing row of a user, locked for the rest of the transaction; created (status none) when missing. */
    async accountForUpdate(tx: Transaction<DB>, userId: number, walletId: string): Promise<BillingAccount> {
      await tx
        .insertInto('billing_accounts')
        .values({ user_id: userId, wallet_id: walletId })
        .onConflict((oc) => oc.column('user_id').doNothing())
        .execute();
      return tx
        .selectFrom('billing_accounts')
        .selectAll()
        .where('user_id', '=', userId)
        .forUpdate()
        .executeTakeFirstOrThrow();
    },

    /** Make sure a user has a billing row (with `walletId` when new). @returns the row. */
    async ensureAccount(userId: number, walletId: string): Promise<BillingAccount> {
      await db
        .insertInto('billing_accounts')
        .values({ user_id: userId, wallet_id: walletId })
        .onConflict((oc) => oc.column('user_id').doNothing())
        .execute();
      return db.selectFrom('billing_accounts').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();
    },

    /** Change columns of a user's billing row. */
    async updateAccount(
      ex: Executor,
      userId: number,
      set: Partial<Omit<BillingAccount, 'user_id' | 'wallet_id'>>,
    ): Promise<void> {
      await ex
        .updateTable('billing_accounts')
        .set({ ...set, updated_at: new Date() })
        .where('user_id', '=', userId)
        .execute();
    },

    /**
     * Claim renewal attempt `attempt` of the period ending `periodEnd` (one atomic statement, so across instances
     * exactly one claim succeeds): the subscription must still be active or past due with a saved card and that
     * period, and no attempt of this number or later may have been claimed.
     * @returns the sealed card token and the plan, or undefined when there is nothing to charge.
     */
    async claimRenewal(
      userId: number,
      periodEnd: Date,
      attempt: number,
    ): Promise<{ card_token_enc: string; paid_plan: string } | undefined> {
      const r = await db
        .updateTable('billing_accounts')
        .set({ renewal_period: periodEnd, renewal_attempt: attempt, updated_at: new Date() })
        .where('user_id', '=', userId)
        .where('status', 'in', ['active', 'past_due'])
        .where('card_token_enc', 'is not', null)
        .where('paid_plan', 'is not', null)
        .where('current_period_end', '=', periodEnd)
        .where((eb) =>
          eb.or([
            eb('renewal_period', 'is', null),
            eb('renewal_period', '<>', periodEnd),
            eb('renewal_attempt', '<', attempt),
          ]),
        )
        .returning(['card_token_enc', 'paid_plan'])
        .executeTakeFirst();
      return r?.card_token_enc && r.paid_plan
        ? { card_token_enc: r.card_token_enc, paid_plan: r.paid_plan }
        : undefined;
    },

    /** Give back a claimed renewal attempt whose charge could not be sent (the job retries it). */
    async releaseRenewal(userId: number, periodEnd: Date, attempt: number): Promise<void> {
      await db
        .updateTable('billing_accounts')
        .set({ renewal_attempt: attempt - 1 })
        .where('user_id', '=', userId)
        .where('renewal_period', '=', periodEnd)
        .where('renewal_attempt', '=', attempt)
        .execute();
    },

    /** Record an invoice before the provider is asked for it (its callback may arrive before the answer). */
    async insertInvoice(i: {
      reference: string;
      userId: number;
      kind: 'checkout' | 'renewal';
      plan: string;
      amount: number;
    }): Promise<void> {
      await db
        .insertInto('payprov_invoices')
        .values({ reference: i.reference, user_id: i.userId, kind: i.kind, plan: i.plan, amount: i.amount })
        .execute();
    },

    /** Store the provider's invoice id of one of our references (unless a callback already did). */
    async setInvoiceId(reference: string, invoiceId: string): Promise<void> {
      await db
        .updateTable('payprov_invoices')
        .set({ invoice_id: invoiceId })
        .where('reference', '=', reference)
        .where('invoice_id', 'is', null)
        .execute();
    },

    /** Mark an invoice whose creation failed at the provider. */
    async markInvoiceError(reference: string): Promise<void> {
      await db
        .updateTable('payprov_invoices')
        .set({ status: 'error' })
        .where('reference', '=', reference)
        .where('invoice_id', 'is', null)
        .execute();
    },

    /**
     * The invoice a callback is about, by the provider's id or else by our reference (when the callback arrived
     * before the provider's answer was stored), locked for the rest of the transaction.
     */
    async invoiceForUpdate(
      tx: Transaction<DB>,
      invoiceId: string,
      reference: string | null,
    ): Promise<Invoice | undefined> {
      const byId = await tx
        .selectFrom('payprov_invoices')
        .selectAll()
        .where('invoice_id', '=', invoiceId)
        .forUpdate()
        .executeTakeFirst();
      if (byId || !reference) return byId;
      const byRef = await tx
        .selectFrom('payprov_invoices')
        .selectAll()
        .where('reference', '=', reference)
        .where('invoice_id', 'is', null)
        .forUpdate()
        .executeTakeFirst();
      if (byRef)
        await tx
          .updateTable('payprov_invoices')
          .set({ invoice_id: invoiceId })
          .where('reference', '=', reference)
          .execute();
      return byRef ? { ...byRef, invoice_id: invoiceId } : undefined;
    },

    /** Store the newest status of an invoice and the provider's modification time. */
    async setInvoiceStatus(tx: Transaction<DB>, reference: string, status: string, modified: Date): Promise<void> {
      await tx
        .updateTable('payprov_invoices')
        .set({ status, last_modified: modified })
        .where('reference', '=', reference)
        .execute();
    },

    /**
     * Record one callback unless the same (invoice, status, modification time) was recorded before; two deliveries
     * at once are serialized by the unique index, so exactly one inserts.
     * @returns whether this delivery is the first.
     */
    async insertEvent(
      tx: Transaction<DB>,
      e: {
        invoiceId: string;
        status: string;
        modifiedDate: string;
        userId: number | null;
        failureReason: string | null;
      },
    ): Promise<boolean> {
      const r = await tx
        .insertInto('payprov_events')
        .values({
          invoice_id: e.invoiceId,
          status: e.status,
          modified_date: e.modifiedDate,
          user_id: e.userId,
          failure_reason: e.failureReason,
        })
        .onConflict((oc) => oc.columns(['invoice_id', 'status', 'modified_date']).doNothing())
        .returning('id')
        .executeTakeFirst();
      return !!r;
    },

    /** A user's invoices, newest first, for the privacy export (no card data is stored there). */
    invoicesOf: (userId: number) =>
      db
        .selectFrom('payprov_invoices')
        .select(['reference', 'invoice_id', 'kind', 'plan', 'amount', 'status', 'created_at'])
        .where('user_id', '=', userId)
        .orderBy('created_at', 'desc')
        .execute(),

    /** Delete a user's billing rows inside the erasure transaction. */
    async eraseUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await tx.deleteFrom('payprov_events').where('user_id', '=', userId).execute();
      await tx.deleteFrom('payprov_invoices').where('user_id', '=', userId).execute();
      await tx.deleteFrom('billing_accounts').where('user_id', '=', userId).execute();
    },

    /** Number of callbacks recorded for an invoice (tests and diagnostics). */
    async eventCount(invoiceId: string): Promise<number> {
      const r = await db
        .selectFrom('payprov_events')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('invoice_id', '=', invoiceId)
        .executeTakeFirstOrThrow();
      return r.n;
    },
  };
}

export type BillingRepo = ReturnType<typeof createBillingRepo>;
