import { useState } from 'react';
import { useI18n } from '../../i18n';
import { ErrorLine, Field } from '../../ui';
import { useBindBot, useSuggestBotNames, useUnbindBot, type Worker } from './api';

/** A worker's messenger bot: bind one by its token (with suggested names) or unbind it. */
export function BotBinding({ project, worker }: { project: string; worker: Worker }) {
  const { t } = useI18n();
  const [token, setToken] = useState('');
  const suggest = useSuggestBotNames(project, worker.id);
  const bind = useBindBot(project, worker.id);
  const unbind = useUnbindBot(project, worker.id);
  return (
    <div>
      <h3>{t('Messenger bot')}</h3>
      {worker.bot_username ? (
        <p>
          @{worker.bot_username}{' '}
          <button type="button" onClick={() => unbind.mutate()}>
            {t('Unbind')}
          </button>
        </p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            bind.mutate(token);
          }}
        >
          <button type="button" className="link" onClick={() => suggest.mutate()}>
            {t('Suggest bot names')}
          </button>
          {suggest.data && <p className="muted">{suggest.data.candidates.map((c) => `@${c}`).join(', ')}</p>}
          <Field
            label={t('Bot token')}
            type="password"
            autoComplete="off"
            required
            value={token}
            onChange={(e) => setToken(e.target.value)}
          />
          <button type="submit">{t('Bind the bot')}</button>
        </form>
      )}
      <ErrorLine error={bind.error ?? unbind.error ?? suggest.error} />
    </div>
  );
}
