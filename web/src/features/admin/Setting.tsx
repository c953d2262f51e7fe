import { useState } from 'react';
import { ApiFailure } from '../../api/client';
import { useRestartSetting, useSaveSetting, useTestSetting, type PlatformSetting } from './api';
import { msg, useI18n } from '../../i18n';
import { ErrorLine, Field } from '../../ui';

const CATEGORY: Record<string, string> = {
  llm: msg('LLM'),
  oauth: msg('OAuth sign-in'),
  messenger: msg('Messenger'),
  email: msg('E-mail'),
};
const REASON: Record<string, string> = {
  not_set: msg('Not set'),
  rejected: msg('Refused by the vendor'),
  timeout: msg('No answer within 8 s'),
  unreachable: msg('Vendor unreachable'),
};

type Item = PlatformSetting;

/** One platform setting: preview and length, a new value, the vendor test and a restart. */
export function Setting({ item }: { item: Item }) {
  const { t, date } = useI18n();
  const [value, setValue] = useState('');
  const save = useSaveSetting(item.name, () => setValue(''));
  const test = useTestSetting(item.name);
  const restart = useRestartSetting(item.name);
  const notTestable = test.error instanceof ApiFailure && test.error.status === 501;
  const id = `secret-${item.name}`;
  return (
    <li className="card secret" aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>
        {item.label} <code className="muted">{item.name}</code>
        <span className="badge">{t(CATEGORY[item.category] ?? item.category)}</span>
      </h3>
      <p>{item.description}</p>
      <p className={item.set ? '' : 'muted'} data-testid={`${item.name}-state`}>
        {item.set
          ? t('Set: {preview} ({length} characters)', { preview: item.preview ?? '', length: item.length })
          : t('Not set')}
        {item.lastRotated && (
          <span className="muted">
            {' · '}
            {t('rotated {when} by {who}', { when: date(item.lastRotated), who: item.lastRotatedBy ?? '—' })}
          </span>
        )}
      </p>
      <details>
        <summary>{t('Where it is used and what a leak means')}</summary>
        <dl className="secret-facts">
          <dt>{t('Used in')}</dt>
          <dd>{item.usedIn.join(', ')}</dd>
          <dt>{t('After a rotation')}</dt>
          <dd>{item.effectAfterRotate}</dd>
          <dt>{t('If it leaks')}</dt>
          <dd>{item.riskIfLeaked}</dd>
          <dt>{t('Get a new value')}</dt>
          <dd>
            <a href={item.getFromUrl} target="_blank" rel="noreferrer noopener">
              {item.getFromUrl}
            </a>
          </dd>
          {item.restartTargets.length > 0 && (
            <>
              <dt>{t('Restarts')}</dt>
              <dd>{item.restartTargets.join(', ')}</dd>
            </>
          )}
        </dl>
      </details>
      <form
        className="secret-form"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(value);
        }}
      >
        <Field
          label={t('New value of {name}', { name: item.name })}
          type="password"
          autoComplete="off"
          minLength={8}
          maxLength={8192}
          required
          value={value}
          onChange={(e) => setValue(e.target.value)}
          hint={t('At least 8 characters. The value is stored sealed and never shown again.')}
        />
        <div className="actions">
          <button type="submit" className="primary" disabled={save.isPending || value.length < 8}>
            {t('Save')}
          </button>
          <button
            type="button"
            onClick={() => test.mutate()}
            disabled={!item.testable || test.isPending}
            title={item.testable ? undefined : t('This secret cannot be tested on its own.')}
          >
            {test.isPending ? t('Testing…') : t('Test')}
          </button>
          <button type="button" onClick={() => restart.mutate()} disabled={restart.isPending}>
            {t('Restart')}
          </button>
        </div>
      </form>
      <div aria-live="polite">
        {save.isSuccess && (
          <p role="status" className="ok">
            {t('Saved.')}
          </p>
        )}
        {test.data && (
          <p role="status" className={test.data.ok ? 'ok' : 'error'}>
            {test.data.ok
              ? t('Test passed.')
              : t('Test failed: {reason}.', {
                  reason: t(REASON[test.data.reason ?? ''] ?? test.data.reason ?? ''),
                })}{' '}
            {test.data.detail && <span className="muted">{test.data.detail}</span>}
          </p>
        )}
        {notTestable && <p className="muted">{t('This secret cannot be tested on its own.')}</p>}
        {restart.data && (
          <p role="status" className="ok">
            {restart.data.restarted.length
              ? t('Restarted: {list}.', { list: restart.data.restarted.join(', ') })
              : t('Nothing needed a restart.')}{' '}
            <span className="muted">{restart.data.note}</span>
          </p>
        )}
      </div>
      <ErrorLine error={save.error ?? (notTestable ? null : test.error) ?? restart.error} />
    </li>
  );
}
