/**
 * `npx tsx scripts/screenshots.ts [dir]`: screenshots of the web UI's main pages, at desktop (1440×900) and phone
 * (390×844) width, in the light and the dark theme, as PNG files in `dir` (default `.tmp/screenshots`), named
 * `<page>-<desktop|phone>-<light|dark>.png`.
 * It builds the web UI if needed, starts the service (`node server/start.js`) on a temporary DATA_DIR with the
 * stand-in LLM the web e2e test uses, and fills one project through the UI as a user would: a team of two workers,
 * a streamed Markdown reply from both, issues on the board, a research note with a source, a wiki page, a run.
 * The browser is Debian's Chromium (web/e2e/browser.ts; `CHROMIUM_PATH` names another). Nothing is left behind but
 * the pictures.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startLlmStandIn } from '../server/test/standins/llm.ts';
import { freePort } from '../server/test/net.ts';
import { ensureWebBuild } from '../web/build.js';
import { launchChromium } from '../web/e2e/browser.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.resolve(process.argv[2] ?? path.join(ROOT, '.tmp', 'screenshots'));
const ADMIN = { email: 'admin@example.com', password: 'admin-pass-0123' };
const PROJECT = 'market-study';
const SIZES = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } } as const;
const THEMES = ['light', 'dark'] as const;

/** A reply in Markdown with a list, a table and a highlighted code block (the chat's richest rendering). */
const MARKDOWN_REPLY = [
  '**Research** plan for the survey:',
  '',
  '- ask ten customers what they pay',
  '- compare with the `rivals.csv` list',
  '',
  '| Rival | Price |',
  '| --- | --- |',
  '| A | 12 € |',
  '| B | 9 € |',
  '',
  '```ts',
  '// the sample size',
  'const sample: number = 10;',
  'export function ask(who: string) { return `Hello ${who}`; }',
  '```',
].join('\n');
const WIKI_PAGE = [
  '# Survey guide',
  '',
  'How we run the **customer survey**.',
  '',
  '## Questions',
  '',
  '1. What do you pay today?',
  '2. What would you switch for?',
  '',
  '> Keep it under five minutes.',
  '',
  '```sh',
  'npm run survey -- --sample 10',
  '```',
].join('\n');

const llm = await startLlmStandIn({
  responder: (r) => {
    const usage = { input_tokens: 12, output_tokens: 7 };
    const text = JSON.stringify(r.body ?? '');
    if (text.includes('MD-STEP')) return { content: [{ type: 'text' as const, text: MARKDOWN_REPLY }], usage };
    return { content: [{ type: 'text' as const, text: 'Rival B is cheaper: 9 euros a month [S1].' }], usage };
  },
});
fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
const dataDir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'shots-'));
let proc: ChildProcess | undefined;
let browser: Browser | undefined;
let logs = '';

/** Starts the service on a free port; resolves with its base URL once /readyz answers. */
async function startService(): Promise<string> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  proc = spawn(process.execPath, ['server/start.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      APP_URL: base,
      LOG_LEVEL: 'warn',
      BREACH_CHECK_URL: 'off',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      LLM_PROVIDER: 'anthropic',
      LLM_BASE_URL: llm.anthropicUrl,
      PLATFORM_LLM_KEY: 'sk-ant-platform-test-0123456789',
      CONTAINER_RUNTIME: 'none',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (d) => (logs += d));
  proc.stderr!.on('data', (d) => (logs += d));
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the service exited: ${logs.slice(-2000)}`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) return base;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the service did not start: ${logs.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A JSON call to the service; throws on a status of 400 or more. */
async function api(base: string, method: string, url: string, body?: unknown, token?: string): Promise<any> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json().catch(() => null);
  if (res.status >= 400) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** A browser context signed in with `token` (none: a guest), in `theme`, at `size`. */
async function context(size: keyof typeof SIZES, theme: string, token?: string): Promise<BrowserContext> {
  const ctx = await browser!.newContext({ viewport: SIZES[size], colorScheme: theme as 'light' | 'dark' });
  // A busy machine (the build, other services) can make a step take longer than Playwright's 30 s default.
  ctx.setDefaultTimeout(90_000);
  if (token) await ctx.addInitScript((tk) => localStorage.setItem('crm.token', tk), token);
  return ctx;
}

/** The project, filled through the UI: two workers, a Markdown reply from both, issues, a note, a wiki page. */
async function fillProject(base: string, token: string): Promise<void> {
  const ctx = await context('desktop', 'light', token);
  const page = await ctx.newPage();
  await page.goto(`${base}/setup`);
  await page.getByLabel('Project name').fill('Market study');
  await page.getByLabel('What is it about? (niche)').fill('market research');
  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByLabel('Research').check();
  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByRole('button', { name: 'Create the project' }).click();
  await page.waitForURL(`**/projects/${PROJECT}/workers`);
  await page.locator('ol.workers > li').nth(1).waitFor();

  // A streamed reply from both workers in one thread.
  const { workers } = await api(base, 'GET', `/api/crm/projects/${PROJECT}/workers`, undefined, token);
  await page.goto(`${base}/projects/${PROJECT}/chat`);
  await page.getByRole('checkbox', { name: workers[1].label }).check();
  await page.getByLabel('Message').fill('MD-STEP: plan the survey, please.');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.locator('li.msg.assistant .code-block .hljs-keyword').nth(1).waitFor({ timeout: 30_000 });
  await page.getByRole('button', { name: 'Send', exact: true }).waitFor();

  // Issues: three on the board.
  await page.goto(`${base}/projects/${PROJECT}/issues`);
  for (const title of ['Write the survey questions', 'Find ten customers to ask', 'Compare the rivals’ prices']) {
    await page.getByRole('button', { name: 'New issue' }).click();
    await page.getByLabel('Title').fill(title);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.locator('li.issue').filter({ hasText: title }).waitFor();
  }
  const issue = (id: number, body: object) =>
    api(base, 'PUT', `/api/crm/projects/${PROJECT}/issues/${id}`, body, token);
  await issue(1, {
    status: 'in_progress',
    assignee: workers[0].label,
    description: 'Ten questions at most, **five minutes** to answer.',
  });
  await issue(2, { priority: 'P0', assignee: workers[1].label });
  await issue(3, { status: 'blocked', priority: 'P1' });

  // A research note with a text source and one answer.
  await page.goto(`${base}/projects/${PROJECT}/notes`);
  await page.getByLabel('Title').fill('Competitor prices');
  await page.getByLabel('Description').fill('What the rivals charge');
  await page.getByRole('button', { name: 'Create note' }).click();
  await page.getByRole('heading', { name: 'Competitor prices' }).waitFor();
  await page.getByLabel('File', { exact: true }).setInputFiles({
    name: 'prices.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from('Rival A charges 12 euros a month.\nRival B charges 9 euros a month.\n'),
  });
  await page.locator('li.note-source [data-status="done"]').waitFor({ timeout: 60_000 });
  await page.getByLabel('Question').fill('Which rival is cheaper?');
  await page.getByRole('button', { name: 'Ask', exact: true }).click();
  await page.locator('.note-chat li.msg.assistant').filter({ hasText: 'cheaper' }).waitFor({ timeout: 30_000 });
  await ctx.close();

  await api(
    base,
    'PUT',
    `/api/crm/projects/${PROJECT}/wiki/save`,
    { path: 'survey-guide.md', content: WIKI_PAGE },
    token,
  );
}

/** Waits for the network to settle and the page's heading, then a full-page screenshot. */
async function capture(page: Page, file: string): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.locator('main h1, main h2').first().waitFor();
  // Let transitions and lazy chunks settle.
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(OUT, file), fullPage: true });
}

try {
  await ensureWebBuild();
  fs.mkdirSync(OUT, { recursive: true });
  const base = await startService();
  const { token } = await api(base, 'POST', '/api/auth/login', ADMIN);
  browser = await launchChromium();
  await fillProject(base, token);
  const { runs } = await api(base, 'GET', `/api/crm/projects/${PROJECT}/runs`, undefined, token);
  const run = runs[0].id;
  const { workers } = await api(base, 'GET', `/api/crm/projects/${PROJECT}/workers`, undefined, token);
  const both = workers.map((w: { id: number }) => w.id).join(',');

  /** Each page: a name, its path, and what to do there before the picture. */
  const pages: Array<[string, string, ((p: Page) => Promise<void>)?]> = [
    ['02-projects', '/projects'],
    ['03-chat', `/projects/${PROJECT}/chat?to=${both}`, (p) => p.locator('.code-block').nth(1).waitFor()],
    ['04-board-drawer', `/projects/${PROJECT}/issues?issue=1`, (p) => p.locator('.drawer').waitFor()],
    ['05-runs', `/projects/${PROJECT}/runs`, (p) => p.locator('.run-row').first().waitFor()],
    ['06-run-detail', `/projects/${PROJECT}/runs/${run}`, (p) => p.locator('.run-detail').waitFor()],
    ['07-notes', `/projects/${PROJECT}/notes?note=1`, (p) => p.locator('li.note-source').first().waitFor()],
    ['08-wiki', `/projects/${PROJECT}/wiki?page=survey-guide.md`, (p) => p.locator('.markdown h1').first().waitFor()],
    [
      '09-search',
      `/projects/${PROJECT}/search`,
      async (p) => {
        await p.getByLabel('Search the project').fill('survey');
        await p.getByRole('button', { name: 'Search', exact: true }).click();
        await p.waitForLoadState('networkidle');
      },
    ],
    ['10-account', '/account'],
    ['11-admin', '/admin'],
  ];
  for (const theme of THEMES)
    for (const size of Object.keys(SIZES) as Array<keyof typeof SIZES>) {
      const guest = await context(size, theme);
      const g = await guest.newPage();
      await g.goto(`${base}/login`);
      await capture(g, `01-sign-in-${size}-${theme}.png`);
      await guest.close();
      const ctx = await context(size, theme, token);
      const p = await ctx.newPage();
      for (const [name, url, prepare] of pages) {
        await p.goto(`${base}${url}`);
        await prepare?.(p);
        await capture(p, `${name}-${size}-${theme}.png`);
      }
      await ctx.close();
    }
  console.log(`screenshots in ${OUT}`);
} finally {
  await browser?.close();
  if (proc && proc.exitCode === null) {
    const exited = new Promise((r) => proc!.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
  await llm.close?.();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
