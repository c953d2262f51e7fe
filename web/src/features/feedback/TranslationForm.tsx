import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { type paths } from '../../api/client';
import { suggestTranslation } from './api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Select, TextArea } from '../../ui';
import { msgidForText } from './logic';

type Severity = 'minor' | 'major' | 'wrong';
type TranslationLocale =
  paths['/api/crm/feedback/translation']['post']['requestBody']['content']['application/json']['locale'];

/** The translation suggestion form for the message of the selected text. */
export function TranslationForm({ selected, onDone }: { selected: string; onDone: () => void }) {
  const { t, locale, messages } = useI18n();
  const [msgid, setMsgid] = useState(() => msgidForText(messages, selected));
  const [suggestion, setSuggestion] = useState('');
  const [severity, setSeverity] = useState<Severity>('minor');
  const send = useMutation({
    mutationFn: () =>
      suggestTranslation({
        // The button is offered only in a locale other than English.
        locale: locale as TranslationLocale,
        msgid,
        suggestion,
        severity,
        ...(messages[msgid] ? { current_translation: messages[msgid] } : {}),
        page_url: location.pathname,
      }),
    onSuccess: onDone,
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        send.mutate();
      }}
    >
      <Field
        label={t('Original text (English)')}
        list="msgids"
        required
        value={msgid}
        onChange={(e) => setMsgid(e.target.value)}
      />
      <datalist id="msgids">
        {Object.keys(messages).map((id) => (
          <option key={id} value={id} />
        ))}
      </datalist>
      {messages[msgid] && <p className="muted">{t('Now shown as: {text}', { text: messages[msgid] })}</p>}
      <TextArea
        label={t('Your translation')}
        required
        maxLength={2000}
        value={suggestion}
        onChange={(e) => setSuggestion(e.target.value)}
      />
      <Select
        label={t('How wrong is it?')}
        value={severity}
        onChange={(v) => setSeverity(v as Severity)}
        options={[
          { value: 'minor', label: t('Could be better') },
          { value: 'major', label: t('Hard to understand') },
          { value: 'wrong', label: t('Wrong') },
        ]}
      />
      <ErrorLine error={send.error} />
      <button type="submit" className="primary" disabled={send.isPending}>
        {t('Send')}
      </button>
    </form>
  );
}
