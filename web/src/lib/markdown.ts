/**
 * Markdown to safe HTML for every place the app shows text written by a model or a person (chat replies, issue
 * descriptions, note answers, run text, search snippets): `marked` parses (GitHub flavour), raw HTML in the text
 * is shown as text (never parsed), code blocks are highlighted by `highlight.js` (a few common languages) and
 * get a copy button, and DOMPurify sanitizes the result (no scripts, event handlers, `javascript:` links,
 * images, frames or forms). Links open in a new tab without the opener. Safe on a partial text while it streams.
 */
import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

for (const [name, lang] of Object.entries({
  bash,
  css,
  diff,
  javascript,
  json,
  markdown,
  python,
  sql,
  typescript,
  xml,
  yaml,
}))
  hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['md'], { languageName: 'markdown' });
hljs.registerAliases(['py'], { languageName: 'python' });

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** The highlighted HTML of `code` (escaped plain text for an unknown language or a very long block). */
export function highlight(code: string, lang: string | undefined): string {
  const language = lang && hljs.getLanguage(lang) ? lang : undefined;
  if (!language || code.length > 100_000) return escapeHtml(code);
  return hljs.highlight(code, { language, ignoreIllegals: true }).value;
}

/** Options of `renderMarkdown`. */
export interface MarkdownOptions {
  /** The copy button's accessible label on code blocks (translated by the caller). */
  copyLabel?: string;
}

const SAFE_HREF = /^(?:https?:\/\/|mailto:|\/(?!\/)|#)/i;

function parser(opts: MarkdownOptions) {
  return new Marked({
    gfm: true,
    breaks: true,
    async: false,
    renderer: {
      // Raw HTML in the text is text: a reply that writes <img onerror=…> shows those characters.
      html: (t: Tokens.HTML | Tokens.Tag) => escapeHtml(t.text),
      // Links only to http(s), mail and in-app addresses; others show their text. Outside links open in a new tab.
      link(t: Tokens.Link) {
        const text = this.parser.parseInline(t.tokens);
        if (!SAFE_HREF.test(t.href)) return text;
        const outside = !t.href.startsWith('/') && !t.href.startsWith('#');
        const title = t.title ? ` title="${escapeHtml(t.title)}"` : '';
        return `<a href="${escapeHtml(t.href)}"${title}${outside ? ' target="_blank" rel="noopener noreferrer nofollow"' : ''}>${text}</a>`;
      },
      // No images (an outside image would tell its server who reads): a link to it instead.
      image(t: Tokens.Image) {
        const text = escapeHtml(t.text || t.href);
        return SAFE_HREF.test(t.href)
          ? `<a href="${escapeHtml(t.href)}" target="_blank" rel="noopener noreferrer nofollow">${text}</a>`
          : text;
      },
      code(t: Tokens.Code) {
        const lang = (t.lang ?? '').trim().split(/\s+/)[0]?.toLowerCase() || undefined;
        const label = lang ? `<span class="code-lang">${escapeHtml(lang)}</span>` : '';
        const copy = opts.copyLabel
          ? `<button type="button" class="copy-code" data-copy-code="">${escapeHtml(opts.copyLabel)}</button>`
          : '';
        const cls = lang ? ` class="hljs language-${escapeHtml(lang)}"` : ' class="hljs"';
        return `<div class="code-block"><div class="code-head">${label}${copy}</div><pre><code${cls}>${highlight(t.text, lang)}</code></pre></div>`;
      },
    },
  });
}

let hooked = false;
/** Links open in a new tab, never with the opener; only http(s), mailto and in-app links survive. */
function hook() {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName !== 'A') return;
    const href = node.getAttribute('href') ?? '';
    if (!SAFE_HREF.test(href)) node.removeAttribute('href');
    else if (!href.startsWith('/') && !href.startsWith('#')) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer nofollow');
    }
  });
}

const FORBID_TAGS = [
  'img',
  'picture',
  'video',
  'audio',
  'source',
  'iframe',
  'object',
  'embed',
  'form',
  'input',
  'style',
  'svg',
  'math',
];

/** Sanitized HTML of Markdown `md` (module header). */
export function renderMarkdown(md: string, opts: MarkdownOptions = {}): string {
  hook();
  const html = parser(opts).parse(md) as string;
  return DOMPurify.sanitize(html, {
    FORBID_TAGS,
    FORBID_ATTR: ['style', 'srcset', 'formaction'],
    ADD_ATTR: ['target'],
    ALLOWED_URI_REGEXP: SAFE_HREF,
  });
}
