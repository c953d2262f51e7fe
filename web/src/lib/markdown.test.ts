import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './markdown';

describe('markdown', () => {
  it('renders emphasis, lists and highlighted code blocks with a copy button', () => {
    const html = renderMarkdown('**Research** plan:\n\n- one\n\n```ts\nconst x: number = 1;\n```', {
      copyLabel: 'Copy code',
    });
    expect(html).toContain('<strong>Research</strong>');
    expect(html).toContain('<li>one</li>');
    expect(html).toContain('class="hljs language-ts"');
    expect(html).toContain('hljs-keyword');
    expect(html).toContain('<button type="button" class="copy-code" data-copy-code="">Copy code</button>');
  });
  it('shows raw HTML as text and drops javascript: links, event handlers and images', () => {
    const html = renderMarkdown(
      'Hi <img src=x onerror="alert(1)"> [click](javascript:alert(1)) ![t](https://evil.example/t.png) <script>alert(2)</script>',
    );
    expect(html).not.toMatch(/<img|<script|javascript:/i);
    expect(html).toContain('&lt;img');
    const div = document.createElement('div');
    div.innerHTML = html;
    expect(div.querySelector('img, script, [onerror]')).toBeNull();
    // The javascript: link is its text only; the image is a link to it, never loaded.
    expect([...div.querySelectorAll('a')].map((a) => a.getAttribute('href'))).toEqual(['https://evil.example/t.png']);
  });
  it('opens outside links in a new tab without the opener; an unclosed fence while streaming is safe', () => {
    const div = document.createElement('div');
    div.innerHTML = renderMarkdown('[docs](https://example.com/a)');
    const a = div.querySelector('a')!;
    expect(a.getAttribute('target')).toBe('_blank');
    expect(a.getAttribute('rel')).toContain('noopener');
    expect(renderMarkdown('```js\nlet a = "<b>')).toContain('&lt;b&gt;');
  });
});
