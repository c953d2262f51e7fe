/**
 * The embedded database's transaction guard. PGlite is one session behind one lock, so a query on `db`
 * issued while the same async context holds a transaction would wait for that transaction forever. Here
 * it fails at once instead, naming the mistake: inside `db.transaction().execute(tx => …)` every query must
 * go through `tx` (and `jobs.send(…, { tx })`).
 *
 * `GuardedKysely.transaction()` marks the callback's async context; the PGlite driver and the raw-SQL path
 * call `assertNoOpenTransaction` before they take the lock.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Kysely, TransactionBuilder } from 'kysely';

const txContext = new AsyncLocalStorage<{ open: boolean }>();

/** Thrown when `db` is used inside one of its own transactions on the embedded database. */
export class NestedQueryError extends Error {
  constructor(what: string) {
    super(
      `${what} was issued on \`db\` while this async context holds a transaction on the embedded database; ` +
        'use the transaction (`tx`) for every query inside it, or run the query after the transaction ends.',
    );
    this.name = 'NestedQueryError';
  }
}

/** @throws NestedQueryError when called inside an open transaction of this async context. */
export function assertNoOpenTransaction(what = 'A query'): void {
  if (txContext.getStore()?.open) throw new NestedQueryError(what);
}

function guard<DB>(b: TransactionBuilder<DB>): TransactionBuilder<DB> {
  const g = Object.create(TransactionBuilder.prototype) as TransactionBuilder<DB>;
  return Object.assign(g, {
    setAccessMode: (m: Parameters<TransactionBuilder<DB>['setAccessMode']>[0]) => guard(b.setAccessMode(m)),
    setIsolationLevel: (l: Parameters<TransactionBuilder<DB>['setIsolationLevel']>[0]) => guard(b.setIsolationLevel(l)),
    execute: <T>(fn: Parameters<TransactionBuilder<DB>['execute']>[0] & ((tx: never) => Promise<T>)) => {
      const mark = { open: true };
      return b
        .execute((tx) => txContext.run(mark, () => fn(tx as never)))
        .finally(() => {
          mark.open = false;
        });
    },
  });
}

/** Kysely whose transactions mark their async context (see the module comment). */
export class GuardedKysely<DB> extends Kysely<DB> {
  override transaction(): TransactionBuilder<DB> {
    return guard(super.transaction());
  }
}
