import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { settingsQuery, useSaveSettings } from '../../features/account/api';
import { changePassword } from '../../features/auth/api';
import { useI18n } from '../../i18n';
import { session } from '../../session';
import { ErrorLine, Field, Loading } from '../../ui';
import { Appearance } from './Appearance';
import { Connections } from './Connections';

/** The settings tab: the colour theme, own LLM key, transcript uploads, sign-in connections, password. */
export default function Settings() {
  const { t } = useI18n();
  const settings = useQuery(settingsQuery());
  const [key, setKey] = useState('');
  const save = useSaveSettings({ onSuccess: () => setKey('') });
  const [pw, setPw] = useState({ current_password: '', new_password: '' });
  const change = useMutation({
    mutationFn: () => changePassword(pw),
    onSuccess: (r) => {
      session.signIn(r.token);
      setPw({ current_password: '', new_password: '' });
    },
  });
  if (!settings.data) return <Loading />;
  return (
    <div>
      <h2>{t('Appearance')}</h2>
      <Appearance />
      <h2>{t('Own LLM key')}</h2>
      <p>
        {settings.data.llm_key_set
          ? t('A key is stored: {masked}', { masked: settings.data.llm_key ?? '' })
          : t('No key stored: your projects use the trial while it lasts.')}
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate({ llm_key: key });
        }}
      >
        <Field
          label={t('LLM key')}
          type="password"
          autoComplete="off"
          required
          value={key}
          onChange={(e) => setKey(e.target.value)}
        />
        <button type="submit" className="primary">
          {t('Save the key')}
        </button>
        {settings.data.llm_key_set && (
          <button type="button" className="danger" onClick={() => save.mutate({ llm_key: null })}>
            {t('Remove the key')}
          </button>
        )}
      </form>
      <label className="radio">
        <input
          type="checkbox"
          checked={settings.data.upload_transcripts}
          onChange={(e) => save.mutate({ upload_transcripts: e.target.checked })}
        />
        {t('Upload CLI session transcripts')}
      </label>
      <ErrorLine error={save.error} />
      <Connections />
      <h2>{t('Password')}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          change.mutate();
        }}
      >
        <Field
          label={t('Current password')}
          type="password"
          autoComplete="current-password"
          required
          value={pw.current_password}
          onChange={(e) => setPw({ ...pw, current_password: e.target.value })}
        />
        <Field
          label={t('New password')}
          type="password"
          autoComplete="new-password"
          minLength={8}
          required
          value={pw.new_password}
          onChange={(e) => setPw({ ...pw, new_password: e.target.value })}
        />
        <ErrorLine error={change.error} />
        {change.isSuccess && (
          <p role="status" className="ok">
            {t('Your password is changed.')}
          </p>
        )}
        <button type="submit">{t('Change the password')}</button>
      </form>
    </div>
  );
}
