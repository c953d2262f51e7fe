/**
 * Markdown text, rendered safely (lib/markdown.ts: sanitized, raw HTML shown as text, highlighted code blocks with
 * a copy button). The renderer is its own chunk, loaded when a page first shows Markdown, so the sign-in page
 * stays small; until then the text shows as it is written.
 */
import { lazy, Suspense } from 'react';
import type { MarkdownProps } from './MarkdownView';

const MarkdownView = lazy(() => import('./MarkdownView'));

/** Markdown `text` as safe HTML (module header). */
export function Markdown(props: MarkdownProps) {
  return (
    <Suspense fallback={<div className={`md plain ${props.className ?? ''}`}>{props.text}</div>}>
      <MarkdownView {...props} />
    </Suspense>
  );
}
