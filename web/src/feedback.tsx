/**
 * Feedback and "suggest a translation", offered on every page: feedback goes to `POST /api/crm/feedback`
 * `{type, title, description, browser}`; a translation suggestion to `POST /api/crm/feedback/translation`
 * `{locale, msgid, suggestion, severity, current_translation, page_url}`. For the suggestion, text selected on
 * the page is matched to its message, so the user fixes what they see.
 */
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { type paths } from './api/client';
import { sendFeedback, suggestTranslation } from './features/feedback/api';
import { useI18n } from './i18n';
import { ErrorLine, Field, Modal, Select, TextArea } from './ui';

/** The msgid whose translation (or, untranslated, whose msgid) is the selected text; '' when none matches. */
export function msgidForText(messages: Record<string, string>, text: string): string {
  const s = text.trim();
  if (!s) return '';
  for (const [id, str] of Object.entries(messages)) if (str === s) return id;
  return Object.prototype.hasOwnProperty.call(messages, s) ? s : '';
}

type FeedbackType = 'bug' | 'feature' | 'other';
type Severity = 'minor' | 'major' | 'wrong';
type TranslationLocale =
  paths['/api/crm/feedback/translation']['post']['requestBody']['content']['application/json']['locale'];

/** The project name of a project page's path (`/projects/<name>/…`), or null elsewhere. */
export function projectOfPath(pathname: string): string | null {
  const m = /^\/projects\/([^/]+)/.exec(pathname);
  return m ? decodeURIComponent(m[1]) : null;
}

function FeedbackForm({ onDone }: { onDone: () => void }) {
  const { t } = useI18n();
  const [form, setForm] = useState<{ type: FeedbackType; title: string; description: string }>({
    type: 'bug',
    title: '',
    description: '',
  });
  const send = useMutation({
    mutationFn: () => {
      const project = projectOfPath(location.pathname);
      return sendFeedback({ ...form, ...(project ? { project } : {}), browser: navigator.userAgent.slice(0, 300) });
    },
    onSuccess: onDone,
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        send.mutate();
      }}
    >
      <Select
        label={t('Kind')}
        value={form.type}
        onChange={(type) => setForm({ ...form, type: type as FeedbackType })}
        options={[
          { value: 'bug', label: t('Something is broken') },
          { value: 'feature', label: t('An idea') },
          { value: 'other', label: t('Something else') },
        ]}
      />
      <Field
        label={t('Title')}
        required
        maxLength={200}
        value={form.title}
        onChange={(e) => setForm({ ...form, title: e.target.value })}
      />
      <TextArea
        label={t('Description')}
        required
        maxLength={5000}
        rows={5}
        value={form.description}
        onChange={(e) => setForm({ ...form, description: e.target.value })}
      />
      <ErrorLine error={send.error} />
      <button type="submit" className="primary" disabled={send.isPending}>
        {t('Send')}
      </button>
    </form>
  );
}

function TranslationForm({ selected, onDone }: { selected: string; onDone: () => void }) {
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

export function FeedbackButtons() {
  const { t, locale } = useI18n();
  const [open, setOpen] = useState<'feedback' | 'translation' | null>(null);
  const [selected, setSelected] = useState('');
  const [thanks, setThanks] = useState(false);
  const done = () => {
    setOpen(null);
    setThanks(true);
  };
  return (
    <>
      <button type="button" className="link" onClick={() => setOpen('feedback')}>
        {t('Send feedback')}
      </button>
      {locale !== 'en' && (
        <button
          type="button"
          className="link"
          onMouseDown={() => setSelected(window.getSelection()?.toString() ?? '')}
          onClick={() => setOpen('translation')}
        >
          {t('Suggest a translation')}
        </button>
      )}
      {thanks && (
        <span role="status" className="ok">
          {t('Thank you!')}
        </span>
      )}
      <Modal open={open === 'feedback'} onOpenChange={(o) => setOpen(o ? 'feedback' : null)} title={t('Send feedback')}>
        <FeedbackForm onDone={done} />
      </Modal>
      <Modal
        open={open === 'translation'}
        onOpenChange={(o) => setOpen(o ? 'translation' : null)}
        title={t('Suggest a translation')}
      >
        <TranslationForm selected={selected} onDone={done} />
      </Modal>
    </>
  );
}
