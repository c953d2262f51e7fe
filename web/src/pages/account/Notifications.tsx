import { useMe } from '../../auth';
import { msg, useI18n } from '../../i18n';

/** The e-mails the service sends to a user, by kind: all of them are about the account itself. */
const KINDS = [
  msg('Confirming your e-mail address and resetting your password'),
  msg('A notice when your password changes'),
  msg('Payment receipts, failed payments and plan changes'),
  msg('A notice when a worker’s messenger bot stops working'),
];

/**
 * The notifications tab (`/account?tab=notifications`, the target of the e-mails' List-Unsubscribe link): which
 * e-mails the service sends and to which address. The service has no optional e-mails (no newsletters or
 * digests), so there is nothing to switch off; every message is about the account's security, payments or a broken bot.
 */
export default function Notifications() {
  const { t } = useI18n();
  const me = useMe();
  return (
    <div>
      <h2>{t('E-mail notifications')}</h2>
      {me.data && <p>{t('E-mails go to {email}.', { email: me.data.email })}</p>}
      <p>{t('This service sends only e-mails about your account:')}</p>
      <ul>
        {KINDS.map((k) => (
          <li key={k}>{t(k)}</li>
        ))}
      </ul>
      <p role="note" className="notice">
        {t(
          'There are no newsletters or optional e-mails to switch off. To stop all e-mails, delete your account on the Export and erasure tab.',
        )}
      </p>
    </div>
  );
}
