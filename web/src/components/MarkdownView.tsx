/** The Markdown renderer itself (loaded lazily by `Markdown`, with marked, DOMPurify and highlight.js). */
import { useMemo, type MouseEvent } from 'react';
import { useI18n } from '../i18n';
import { renderMarkdown } from '../lib/markdown';

export interface MarkdownProps {
  /** The Markdown source (may be a partial text while it streams). */
  text: string;
  /** Extra classes of the wrapping block (it always has `md`). */
  className?: string;
}

export default function MarkdownView({ text, className }: MarkdownProps) {
  const { t } = useI18n();
  const copyLabel = t('Copy code');
  const html = useMemo(() => renderMarkdown(text, { copyLabel }), [text, copyLabel]);
  /** A code block's copy button (the HTML is not React's, so one listener serves them all). */
  function onClick(e: MouseEvent<HTMLDivElement>) {
    const button = (e.target as HTMLElement).closest('button[data-copy-code]');
    const code = button?.closest('.code-block')?.querySelector('code')?.textContent;
    if (!button || code == null) return;
    void navigator.clipboard?.writeText(code).then(() => {
      button.textContent = t('Copied');
      setTimeout(() => (button.textContent = copyLabel), 1500);
    });
  }
  return (
    <div
      className={`md${className ? ` ${className}` : ''}`}
      onClick={onClick}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
