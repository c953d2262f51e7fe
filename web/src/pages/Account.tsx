import * as Tabs from '@radix-ui/react-tabs';
import { lazy, Suspense, type ComponentType } from 'react';
import { useSearchParams } from 'react-router';
import { useMe } from '../auth';
import { msg, useI18n } from '../i18n';
import { Loading, PageTitle } from '../ui';
import Privacy from './account/Privacy';
import Settings from './account/Settings';
import Usage from './account/Usage';

/** The tabs: `?tab=` value, label, component (the newer tabs load as their own chunks). */
const TABS: [string, string, ComponentType][] = [
  ['settings', msg('Settings'), Settings],
  ['usage', msg('Usage'), Usage],
  ['billing', msg('Plan and payment'), lazy(() => import('./account/Billing'))],
  ['notifications', msg('Notifications'), lazy(() => import('./account/Notifications'))],
  ['cli', msg('CLI'), lazy(() => import('./account/Cli'))],
  ['tokens', msg('Access tokens'), lazy(() => import('./account/Tokens'))],
  ['cloud', msg('Cloud container'), lazy(() => import('./account/Cloud'))],
  ['privacy', msg('Export and erasure'), Privacy],
];

export default function Account() {
  const { t } = useI18n();
  const me = useMe();
  const [params, setParams] = useSearchParams();
  const tab = TABS.find(([v]) => v === params.get('tab'))?.[0] ?? 'settings';
  return (
    <section>
      <PageTitle>{t('Account')}</PageTitle>
      {me.data && (
        <p className="muted">
          {me.data.email} · {t('plan')}: {me.data.plan}
        </p>
      )}
      <Tabs.Root value={tab} activationMode="manual" onValueChange={(v) => v !== tab && setParams({ tab: v })}>
        <Tabs.List className="tabs" aria-label={t('Account sections')}>
          {TABS.map(([value, label]) => (
            <Tabs.Trigger key={value} value={value}>
              {t(label)}
            </Tabs.Trigger>
          ))}
        </Tabs.List>
        {TABS.map(([value, , Tab]) => (
          <Tabs.Content key={value} value={value}>
            <Suspense fallback={<Loading />}>
              <Tab />
            </Suspense>
          </Tabs.Content>
        ))}
      </Tabs.Root>
    </section>
  );
}
