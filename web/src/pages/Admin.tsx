import * as Tabs from '@radix-ui/react-tabs';
import { useSearchParams } from 'react-router';
import { msg, useI18n } from '../i18n';
import { PageTitle } from '../ui';
import Analytics from './admin/Analytics';
import Dashboard from './admin/Dashboard';
import Feedback from './admin/Feedback';
import Invites from './admin/Invites';
import Outbox from './admin/Outbox';
import Secrets from './admin/Secrets';
import Users from './admin/Users';
import Waitlist from './admin/Waitlist';

const TABS = [
  { value: 'dashboard', label: msg('Dashboard'), Component: Dashboard },
  { value: 'analytics', label: msg('Analytics'), Component: Analytics },
  { value: 'users', label: msg('Users and plans'), Component: Users },
  { value: 'invites', label: msg('Invites'), Component: Invites },
  { value: 'waitlist', label: msg('Waitlist'), Component: Waitlist },
  { value: 'outbox', label: msg('E-mail outbox'), Component: Outbox },
  { value: 'secrets', label: msg('Platform secrets'), Component: Secrets },
  { value: 'feedback', label: msg('Feedback and translations'), Component: Feedback },
] as const;

/**
 * The admin page (`/admin?tab=…`, admins only): one tab per area, the tab kept in the address (each a step of the
 * history, so Back returns to the previous tab).
 */
export default function Admin() {
  const { t } = useI18n();
  const [params, setParams] = useSearchParams();
  const tab = TABS.find((x) => x.value === params.get('tab'))?.value ?? 'dashboard';
  return (
    <section className="admin">
      <PageTitle>{t('Admin')}</PageTitle>
      <Tabs.Root value={tab} activationMode="manual" onValueChange={(v) => v !== tab && setParams({ tab: v })}>
        <Tabs.List className="tabs" aria-label={t('Admin sections')}>
          {TABS.map((x) => (
            <Tabs.Trigger key={x.value} value={x.value}>
              {t(x.label)}
            </Tabs.Trigger>
          ))}
        </Tabs.List>
        {TABS.map(({ value, Component }) => (
          <Tabs.Content key={value} value={value}>
            {value === tab && <Component />}
          </Tabs.Content>
        ))}
      </Tabs.Root>
    </section>
  );
}
