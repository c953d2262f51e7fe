/**
 * Feedback and "suggest a translation", offered on every page: feedback goes to `POST /api/crm/feedback`
 * `{type, title, description, browser}`; a translation suggestion to `POST /api/crm/feedback/translation`
 * `{locale, msgid, suggestion, severity, current_translation, page_url}`. For the suggestion, text selected on
 * the page is matched to its message, so the user fixes what they see.
 */
import { useState } from 'react';
import { useI18n } from './i18n';
import { Modal } from './ui';
import { FeedbackForm } from './features/feedback/FeedbackForm';
import { TranslationForm } from './features/feedback/TranslationForm';

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
