/**
 * What the billing area holds of a user (lib/personal-data.ts): the subscription row (the card token is sealed and
 * never exported), the invoices and the provider's callbacks.
 */
import type { PersonalData } from '../../lib/personal-data.ts';
import type { BillingRepo } from './billing.repo.ts';
import type { BillingService } from './billing.service.ts';

export function billingPersonalData(
  repo: Pick<BillingRepo, 'eraseUser'>,
  billing: Pick<BillingService, 'exportUser'>,
): PersonalData {
  return {
    area: 'billing',
    exportUser: (userId) => billing.exportUser(userId),
    eraseUser: (tx, userId) => repo.eraseUser(tx, userId),
  };
}
