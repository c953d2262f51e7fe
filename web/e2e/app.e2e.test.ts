/**
 * The web UI end to end, in Debian's Chromium (playwright-core, no browser download) against the real service
 * (`node server/start.js`, what `npm start` runs) on the embedded database, with the stand-in LLM and SMTP
 * servers: register with an invite → verify from the e-mailed link → onboarding → a project with workers from a
 * team preset → a chat reply streamed from the LLM → an issue dragged across the board → (the areas' own steps)
 * → the language switch; and a second newcomer signs up through the identity provider (oidc-provider) with an
 * invite, gets the verification e-mail through the e-mail API stand-in, connects the code host stand-in and clones
 * a private repository. Every step runs under the service's Content-Security-Policy: a violation the browser
 * reports fails it, as an uncaught error does.
 * A screenshot of each main page is saved under `.tmp/screenshots/`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startLlmStandIn } from '../../server/test/standins/llm.ts';
import { startSmtpStandIn } from '../../server/test/standins/smtp.ts';
import { startSpeechStandIn } from '../../server/test/standins/speech.ts';
import { makeWav } from '../../server/test/media-fixtures.ts';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { startPayprovStandIn } from '../../server/test/standins/payprov.ts';
import { startOidcProvider } from '../../server/test/standins/oidc.ts';
import { startCodehostStandIn } from '../../server/test/standins/codehost.ts';
import { startEmailApiStandIn } from '../../server/test/standins/email-api.ts';
import { ensureWebBuild } from '../build.js';
import { CHROMIUM, launchChromium } from './browser.ts';
import { freePort } from '../../server/test/net.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SHOTS = path.join(ROOT, '.tmp', 'screenshots');
const ADMIN = { email: 'admin@example.com', password: 'admin-pass-0123' };
const USER = { name: 'Ann', email: 'ann@example.com', password: 'a long passphrase 42' };
const REPLY = 'Hello from the stand-in model.';
const MERCHANT_TOKEN = 'merchant-e2e-0123456789';
/** What the stand-in speech server hears in any recording (meetings and dictation). */
const HEARD = 'We ship the survey on Friday.';
const SUMMARY = {
  tldr: 'The survey ships on Friday.',
  key_points: ['The survey is ready'],
  action_items: [{ task: 'Send the survey', owner: 'Ann' }],
  decisions: ['Ship on Friday'],
  topics: ['survey'],
};
/** What the notes chat's answer cites: for a question naming the key, the passage holding the words. */
const CITED: Array<[string, string]> = [
  ['narwhal', 'Narwhal tusks'],
  ['otter', 'otter budget'],
  ['борщ', 'Борщ коштує'],
];
/** Segments the speech stand-in hears in a note's recording (the notes path sends `speech.wav`), 4 s each. */
const NOTE_SEGMENTS = [
  { start: 0, end: 4, text: `Opening remarks. ${'We talk about the weather and the agenda today. '.repeat(14)}` },
  { start: 4, end: 8, text: `Second part. ${'The team reviews the plans for the coming quarter. '.repeat(14)}` },
  { start: 8, end: 12, text: `Money. The otter budget is nine euros a month. ${'Then we close. '.repeat(8)}` },
];

/**
 * The notes chat's citation as the model writes it: ` [S3 p. 2]` for the passage (in the request's context) holding
 * the words of the CITED key the question names; '' for other requests.
 */
function citeFrom(body: { system?: unknown; messages?: Array<{ content?: unknown }> }): string {
  const question = JSON.stringify(body.messages?.at(-1)?.content ?? '').toLowerCase();
  const system =
    typeof body.system === 'string'
      ? body.system
      : Array.isArray(body.system)
        ? body.system.map((b: { text?: string }) => b.text ?? '').join('')
        : '';
  const passages = [...system.matchAll(/<passage id="(S\d+)"[^>]*?(?: where="([^"]*)")?>\n([\s\S]*?)\n<\/passage>/g)];
  for (const [key, words] of CITED) {
    if (!question.includes(key)) continue;
    const p = passages.find((m) => m[3].includes(words));
    if (p) return ` ${words} [${p[1]}${p[2] ? ` ${p[2]}` : ''}].`;
  }
  return '';
}

/** The e-mail API keys the stand-in knows: the one the admin step rotates to, and the identity provider step's. */
const EMAIL_KEYS = ['re_e2e_0123456789abcdefghijklmnopqrstuvw', 're_e2e_idp_0123456789abcdef'];
const IDP_CLIENT = { client_id: 'crm-e2e-client', client_secret: 'e2e-idp-client-secret-0123456789' };
const CODEHOST_APP = { id: 'Iv1.e2e-codehost', secret: 'e2e-codehost-secret-0123456789' };
const SANDBOX = (process.env.PATH ?? '').split(':').some((d) => d && fs.existsSync(path.join(d, 'bwrap')));

/** A reply in Markdown with a code block, and a raw-HTML image and a javascript: link that must stay inert. */
const MARKDOWN_REPLY = [
  '**Research** plan for the survey:',
  '',
  '- ask ten customers',
  '',
  '```ts',
  'const sample: number = 10;',
  '```',
  '',
  'Inert: <img src="x" onerror="window.__xss = 1"> and [a link](javascript:window.__xss=2).',
].join('\n');
const SLOW_REPLY = 'The slow answer arrived.';
const FILED_REPLY = 'Filed the survey issue.';
const LOST_REPLY = 'Back after a lost connection.';

/** The last user turn of a model call (its text, and whether it carries tool results). */
function lastUserTurn(body: any): { text: string; toolResult: boolean } {
  const m = [...(body?.messages ?? [])].reverse().find((x: any) => x.role === 'user');
  const text = typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? '');
  return { text, toolResult: Array.isArray(m?.content) && m.content.some((b: any) => b?.type === 'tool_result') };
}

/**
 * The stand-in model: the meeting summary asks for JSON (its prompt names `tldr`); the chat steps' markers ask for
 * Markdown, a slow reply, or an issue (a tool call, then the text after its result); everything else gets the fixed
 * reply.
 */
function chatResponder(r: { body: any }) {
  const usage = { input_tokens: 12, output_tokens: 7 };
  if (JSON.stringify(r.body).includes('tldr'))
    return {
      content: [{ type: 'text' as const, text: JSON.stringify(SUMMARY) }],
      usage: { input_tokens: 40, output_tokens: 20 },
    };
  const turn = lastUserTurn(r.body);
  if (turn.toolResult) return { content: [{ type: 'text' as const, text: FILED_REPLY }], usage };
  if (turn.text.includes('MD-STEP')) return { content: [{ type: 'text' as const, text: MARKDOWN_REPLY }], usage };
  if (turn.text.includes('SLOW-STEP'))
    return { content: [{ type: 'text' as const, text: SLOW_REPLY }], usage, delayMs: 4000 };
  if (turn.text.includes('LOST-STEP'))
    return { content: [{ type: 'text' as const, text: LOST_REPLY }], usage, delayMs: 1500 };
  if (turn.text.includes('ISSUE-STEP'))
    return {
      content: [{ type: 'tool_use' as const, name: 'create_issue', input: { title: 'Survey sample', priority: 'P1' } }],
      usage,
    };
  // A research note's question gets the fixed reply citing the passage that holds its answer.
  return { content: [{ type: 'text' as const, text: REPLY + citeFrom(r.body) }], usage };
}

describe.skipIf(!fs.existsSync(CHROMIUM))('web UI in a browser', () => {
  let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
  let smtp: Awaited<ReturnType<typeof startSmtpStandIn>>;
  let speech: Awaited<ReturnType<typeof startSpeechStandIn>>;
  let payprov: Awaited<ReturnType<typeof startPayprovStandIn>>;
  let idp: Awaited<ReturnType<typeof startOidcProvider>>;
  let codehost: Awaited<ReturnType<typeof startCodehostStandIn>>;
  let emailApi: Awaited<ReturnType<typeof startEmailApiStandIn>>;
  let proc: ChildProcess;
  let browser: Browser;
  let page: Page;
  let base = '';
  let dataDir = '';
  let logs = '';
  /** Uncaught errors of the page (a failed render shows the router's error page): none are expected. */
  const pageErrors: string[] = [];
  /** Content-Security-Policy violations the browser reported: the app must work under its CSP, so none are expected. */
  const cspViolations: string[] = [];

  const shot = async (name: string) => {
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };
  const apiCall = async (method: string, url: string, body?: unknown, token?: string) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: {
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    await ensureWebBuild();
    fs.mkdirSync(SHOTS, { recursive: true });
    dataDir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'e2e-'));
    llm = await startLlmStandIn({ responder: chatResponder });
    smtp = await startSmtpStandIn();
    speech = await startSpeechStandIn({
      respond: (r) =>
        r.filename === 'speech.wav'
          ? { text: NOTE_SEGMENTS.map((g) => g.text).join(' '), segments: NOTE_SEGMENTS }
          : { text: HEARD },
    });
    payprov = await startPayprovStandIn(MERCHANT_TOKEN);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    idp = await startOidcProvider([{ ...IDP_CLIENT, redirect_uris: [`${base}/api/auth/oidc/callback`] }]);
    codehost = await startCodehostStandIn(CODEHOST_APP);
    emailApi = await startEmailApiStandIn(EMAIL_KEYS);
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
        SMTP_URL: smtp.url,
        SPEECH_URL: speech.url,
        PAYPROV_API_URL: payprov.url,
        PAYPROV_MERCHANT_TOKEN: MERCHANT_TOKEN,
        IDP_ISSUER_URL: idp.issuer,
        IDP_NAME: 'Test ID',
        CODEHOST_OAUTH_URL: codehost.url,
        CODEHOST_API_URL: codehost.apiUrl,
        EMAIL_API_URL: emailApi.url,
        // The code host stand-in serves its repositories on this machine.
        OUTBOUND_ALLOW_PRIVATE: '127.0.0.1',
        // The real sandbox runtime where bubblewrap is installed (CI installs it); otherwise none.
        CONTAINER_RUNTIME: SANDBOX ? 'process' : 'none',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (d) => (logs += d));
    proc.stderr!.on('data', (d) => (logs += d));
    const deadline = Date.now() + 180_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`the service exited: ${logs.slice(-2000)}`);
      try {
        if ((await fetch(`${base}/readyz`)).ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`the service did not start: ${logs.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (err) => pageErrors.push(err.stack ?? String(err)));
    // Every violation is reported: the page's own event (logged by a script the browser injects, which the CSP does
    // not govern) and Chromium's console message.
    await page.addInitScript(() =>
      document.addEventListener('securitypolicyviolation', (e) =>
        console.error(
          `CSP violation: ${e.effectiveDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`,
        ),
      ),
    );
    page.on('console', (m) => {
      if (m.type() === 'error' && /CSP violation|Content Security Policy/.test(m.text())) cspViolations.push(m.text());
    });
  });

  afterEach(async () => {
    // A step that left an uncaught error in the page, or a page that failed to render, fails.
    expect(pageErrors.splice(0)).toEqual([]);
    expect(cspViolations.splice(0)).toEqual([]);
    expect(await page.getByText('Unexpected Application Error!').count()).toBe(0);
  });

  afterAll(async () => {
    // The page as the test left it (the last step's state when it failed).
    await page?.screenshot({ path: path.join(SHOTS, 'last.png'), fullPage: true }).catch(() => {});
    await browser?.close();
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    await smtp?.close();
    await speech?.close();
    await payprov?.close();
    await idp?.close();
    await codehost?.close();
    await emailApi?.close();
    await llm?.close?.();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('walks a new user from registration to a streamed reply and a moved issue', async () => {
    // An invite code from the admin.
    const admin = await apiCall('POST', '/api/auth/login', ADMIN);
    expect(admin.status).toBe(200);
    const invite = await apiCall('POST', '/api/crm/admin/invites', { count: 1 }, admin.body.token);
    const code: string = invite.body.codes[0];

    // A page path reloads into the app, under the service's CSP; a guest is sent to sign in.
    const first = await page.goto(`${base}/projects`);
    expect(first?.headers()['content-security-policy']).toContain("script-src 'self';");
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shot('01-sign-in');

    // Register with the invite code.
    await page.getByRole('link', { name: 'Register with an invite code' }).click();
    await page.getByLabel('Name').fill(USER.name);
    await page.getByLabel('E-mail').fill(USER.email);
    await page.getByLabel('Password').fill(USER.password);
    await page.getByLabel('Invite code').fill(code);
    await shot('02-register');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Getting started' }).waitFor();
    await page.getByText(/Check your inbox/).waitFor();

    // Verify the address from the link in the e-mail.
    const deadline = Date.now() + 20_000;
    while (!smtp.messages.some((m) => m.to.includes(USER.email)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const mail = smtp.messages.find((m) => m.to.includes(USER.email))!;
    const link = /https?:\/\/[^\s"<>]+\/verify-email\?token=[A-Za-z0-9_-]+/.exec(mail.decoded)?.[0];
    expect(link?.startsWith(`${base}/verify-email?token=`)).toBe(true);
    await page.goto(link!);
    await page.getByText('Your e-mail address is verified.').waitFor();
    await shot('03-verify-email');

    // Onboarding: skip one step, then the setup wizard with a team preset on the trial.
    await page.getByRole('link', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Getting started' }).waitFor();
    await page
      .locator('li.step')
      .filter({ hasText: 'Link the command-line client' })
      .getByRole('button', { name: 'Skip' })
      .click();
    await page.getByText('Skipped').waitFor();
    await shot('04-onboarding');
    await page.getByRole('link', { name: 'Set up a project' }).click();
    await page.getByLabel('Project name').fill('Market study');
    await page.getByLabel('What is it about? (niche)').fill('market research');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByLabel('Research').check();
    await page.getByRole('button', { name: 'Next' }).click();
    await shot('05-setup-wizard');
    await page.getByRole('button', { name: 'Create the project' }).click();
    await page.waitForURL('**/projects/market-study/workers');
    await page.locator('ol.workers > li').nth(1).waitFor();
    expect(await page.locator('ol.workers > li').count()).toBe(2);
    await page
      .getByText(/tokens today/)
      .first()
      .waitFor();
    await shot('06-workers');

    // Chat: the reply streams in from the stand-in model.
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByLabel('Message').fill('Plan the survey, please.');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.locator('li.msg.assistant').filter({ hasText: REPLY }).waitFor();
    // The stream is over: the composer offers Send again (not Stop).
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    expect(llm.requests.some((r) => r.path.endsWith('/v1/messages'))).toBe(true);
    await shot('07-chat');

    // Issues: create one, drag it from Open to In progress.
    await page.getByRole('link', { name: 'Issues' }).click();
    await page.getByRole('button', { name: 'New issue' }).click();
    await page.getByLabel('Title').fill('Write the survey questions');
    await page.getByRole('button', { name: 'Create' }).click();
    const card = page.locator('section[data-status="open"] li.issue').filter({ hasText: 'Write the survey questions' });
    await card.waitFor();
    // A pointer drag (dnd-kit starts it after a few pixels of movement, then follows the pointer).
    const from = (await card.boundingBox())!;
    const to = (await page.locator('section[data-status="in_progress"]').boundingBox())!;
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.down();
    await page.mouse.move(from.x + from.width / 2 + 20, from.y + from.height / 2, { steps: 4 });
    await page.mouse.move(to.x + to.width / 2, to.y + 60, { steps: 10 });
    await page.mouse.up();
    await page
      .locator('section[data-status="in_progress"] li.issue')
      .filter({ hasText: 'Write the survey questions' })
      .waitFor();
    const token = await page.evaluate(() => localStorage.getItem('crm.token'));
    const issues = await apiCall('GET', '/api/crm/projects/market-study/issues', undefined, token!);
    expect(issues.body.issues.map((i: any) => [i.title, i.status])).toEqual([
      ['Write the survey questions', 'in_progress'],
    ]);
    await shot('08-issues-board');

    // Account, and the projects list in Ukrainian at phone width.
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Own LLM key' }).waitFor();
    await shot('09-account');

    // The dark theme chosen in the settings applies at once and after a reload; "As the system" follows the
    // browser again (light here).
    const theme = () =>
      page.evaluate(() => ({
        choice: document.documentElement.dataset.theme ?? null,
        scheme: getComputedStyle(document.documentElement).colorScheme,
        bg: getComputedStyle(document.documentElement).backgroundColor,
      }));
    const LIGHT_BG = 'rgb(246, 247, 249)';
    expect(await theme()).toEqual({ choice: null, scheme: 'light dark', bg: LIGHT_BG });
    await page.getByRole('radio', { name: 'Dark' }).check();
    const dark = { choice: 'dark', scheme: 'dark', bg: 'rgb(18, 21, 25)' };
    expect(await theme()).toEqual(dark);
    await page.reload();
    await page.getByRole('radio', { name: 'Dark' }).waitFor();
    expect(await page.getByRole('radio', { name: 'Dark' }).isChecked()).toBe(true);
    expect(await theme()).toEqual(dark);
    await shot('09b-account-dark');
    await page.getByRole('radio', { name: 'As the system' }).check();
    expect(await theme()).toEqual({ choice: null, scheme: 'light dark', bg: LIGHT_BG });
    expect(await page.evaluate(() => localStorage.getItem('crm.theme'))).toBeNull();
  });

  // Areas add their own steps here, each as its own `it` (they run in order, in the same signed-in page),
  // before the last one, which switches the language and the width.

  // ---- chat ----
  it('renders Markdown replies of two workers in one thread, re-attaches after a reload, asks for an approval and shows the run', async () => {
    const token = (await page.evaluate(() => localStorage.getItem('crm.token')))!;
    const workers = (await apiCall('GET', '/api/crm/projects/market-study/workers', undefined, token)).body.workers;
    const [first, second] = workers as { id: number; label: string }[];
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.goto(`${base}/projects/market-study/chat`);
    await page.getByLabel('Message').waitFor();

    // One message to both workers: one thread, each worker's reply under its name, in Markdown, inert HTML.
    await page.getByRole('checkbox', { name: second.label }).check();
    await page.getByLabel('Message').fill('MD-STEP: plan the survey');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const replies = page.locator('li.msg.assistant').filter({ has: page.locator('strong', { hasText: 'Research' }) });
    await replies.nth(1).waitFor();
    for (const w of [first, second])
      await replies
        .filter({ has: page.locator('.who', { hasText: w.label }) })
        .first()
        .waitFor();
    const reply = replies.first();
    await reply.locator('.code-block code.language-ts .hljs-keyword').first().waitFor();
    expect(await reply.locator('img').count()).toBe(0);
    expect(await reply.locator('a[href^="javascript"]').count()).toBe(0);
    await reply.getByText('<img src="x" onerror="window.__xss = 1">').waitFor();
    expect(await page.evaluate(() => (window as any).__xss)).toBeUndefined();
    // Copy a code block and a whole reply.
    await reply.getByRole('button', { name: 'Copy code' }).click();
    await reply.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('const sample: number = 10;');
    await reply.getByRole('button', { name: 'Copy', exact: true }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain('**Research** plan');
    await shot('07b-chat-markdown');
    // The chosen workers are in the address: after a reload the thread shows both replies again.
    await page.reload();
    await replies.nth(1).waitFor();

    // Back to one worker: a slow reply goes on on the server while the page reloads, and shows when it is done.
    await page.getByRole('checkbox', { name: second.label }).uncheck();
    await page.getByLabel('Message').fill('SLOW-STEP: take your time');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.locator('li.msg.assistant.streaming').first().waitFor();
    await page.reload();
    await page.locator('li.msg.assistant.streaming').first().waitFor();
    await page.locator('li.msg.assistant').filter({ hasText: SLOW_REPLY }).waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached' });

    // A lost connection: the first events stream ends early (no done); the page shows it reconnects and gets the reply.
    // Later attempts wait until the test saw the page say it reconnects.
    let streams = 0;
    let release = () => {};
    const seen = new Promise<void>((r) => (release = r));
    await page.route('**/api/crm/projects/market-study/runs/*/events', async (route) => {
      if (streams++ === 0)
        return route.fulfill({
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: 'event: snapshot\ndata: {"status":"running","text":"","tool_calls":[]}\n\n',
        });
      await seen;
      return route.continue();
    });
    await page.getByLabel('Message').fill('LOST-STEP: are you there?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText('Reconnecting…').waitFor();
    release();
    await page.locator('li.msg.assistant').filter({ hasText: LOST_REPLY }).waitFor({ timeout: 20_000 });
    expect(streams).toBeGreaterThanOrEqual(2);
    await page.unroute('**/api/crm/projects/market-study/runs/*/events');

    // Regenerate asks the same worker again.
    const slow = page.locator('li.msg.assistant').filter({ hasText: SLOW_REPLY });
    await slow.last().getByRole('button', { name: 'Regenerate' }).click();
    await page.locator('li.msg.user').filter({ hasText: 'SLOW-STEP' }).nth(1).waitFor();
    await expect.poll(() => slow.count(), { timeout: 20_000 }).toBe(2);

    // A worker whose rules need an approval for create_issue: the run waits, the card shows, Approve, it completes.
    const rule = await apiCall(
      'PUT',
      `/api/crm/projects/market-study/workers/${first.id}`,
      { approvals: [{ tool: 'create_issue', mode: 'always' }] },
      token,
    );
    expect(rule.status).toBe(200);
    await page.getByLabel('Message').fill('ISSUE-STEP: file the sample issue');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const card = page.locator('.approval-card').filter({ hasText: 'create_issue' });
    await card.waitFor({ timeout: 20_000 });
    await page.locator('li.msg.assistant .status', { hasText: 'Waiting for approval' }).waitFor();
    await card.getByText('Survey sample').waitFor();
    await shot('07c-chat-approval');
    await card.getByRole('button', { name: 'Approve' }).click();
    const filed = page.locator('li.msg.assistant').filter({ hasText: FILED_REPLY });
    await filed.waitFor({ timeout: 20_000 });
    await filed.locator('.tool-card.issue', { hasText: 'Survey sample' }).waitFor();
    const approvals = await apiCall('GET', '/api/crm/projects/market-study/approvals', undefined, token);
    expect(approvals.body.approvals.map((a: any) => [a.tool, a.status, a.channel])).toEqual([
      ['create_issue', 'approved', 'web'],
    ]);
    // Deny with a reason: the model is told the call was refused; the run still completes.
    await page.getByLabel('Message').fill('ISSUE-STEP: file it once more');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const again = page.locator('.approval-card').filter({ hasText: 'create_issue' });
    await again.waitFor({ timeout: 20_000 });
    await again.getByRole('button', { name: 'Deny…' }).click();
    await again.getByLabel('Reason (optional)').fill('One sample issue is enough.');
    await again.getByRole('button', { name: 'Deny', exact: true }).click();
    await expect.poll(() => filed.count(), { timeout: 20_000 }).toBe(2);
    await filed.last().locator('.tool-card.failed', { hasText: 'create_issue' }).waitFor();
    const denied = await apiCall('GET', '/api/crm/projects/market-study/approvals?status=denied', undefined, token);
    expect(denied.body.approvals.map((a: any) => [a.tool, a.reason])).toEqual([
      ['create_issue', 'One sample issue is enough.'],
    ]);
    await apiCall('PUT', `/api/crm/projects/market-study/workers/${first.id}`, { approvals: [] }, token);

    // The approvals page lists the decision; the run's page shows its tool calls, tokens and reply.
    await page.getByRole('link', { name: 'Approvals' }).click();
    await page.getByRole('heading', { name: 'Decided' }).waitFor();
    await page.locator('.run-row', { hasText: 'create_issue' }).getByText('Approved').waitFor();
    await shot('07d-approvals');
    // The link an approval's e-mail carries marks that approval on this page.
    await page.goto(`${base}/projects/market-study/approvals?approval=${denied.body.approvals[0].id}`);
    await page.locator(`#approval-${denied.body.approvals[0].id}.approval-focus`).getByText('Denied').waitFor();
    await page.getByRole('link', { name: 'Approvals' }).waitFor();
    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    await page.locator('.run-row').first().waitFor();
    await shot('07d2-runs');
    await page.locator('.run-row').first().getByRole('link').click();
    await page.getByRole('heading', { name: new RegExp(`${first.label} · Run #\\d+`) }).waitFor();
    await page.getByRole('heading', { name: 'Tool calls' }).waitFor();
    await page.locator('.run-turns').getByText('create_issue', { exact: true }).waitFor();
    await page.locator('.run-detail .md').getByText(FILED_REPLY).waitFor();
    await page.getByText(/in all/).waitFor();
    // Each tool call opens to its input and its result: this run's call was refused, shown in the error style.
    const refused = page.locator('.run-tool.failed', { hasText: 'create_issue' });
    await refused.locator('summary').click();
    await refused.getByRole('heading', { name: 'Input' }).waitFor();
    await refused
      .locator('.run-tool-result.error')
      .getByText('A person refused the call of create_issue: One sample issue is enough.', { exact: false })
      .waitFor();
    // The run's page has its own address: a reload shows it again.
    const refusedRun = page.url();
    await page.reload();
    await page.getByRole('heading', { name: 'Tool calls' }).waitFor();
    // The approved call before it: its result is the filed issue, as JSON in monospace.
    await page.getByRole('link', { name: 'All runs' }).click();
    await page.locator('.run-row').nth(1).getByRole('link').click();
    await page.waitForURL((u) => u.href !== refusedRun && /\/runs\/\d+$/.test(u.pathname));
    const filedCall = page.locator('.run-tool', { hasText: 'create_issue' });
    await filedCall.locator('summary').click();
    await filedCall.locator('.run-tool-result pre.run-tool-json').getByText('"title": "Survey sample"').waitFor();
    expect(await filedCall.locator('.run-tool-result.error').count()).toBe(0);
    await shot('07e-run-detail');

    // In Ukrainian: the run's page and the chat's reply actions.
    await page.getByLabel('Language').selectOption('uk');
    await page.getByRole('heading', { name: 'Виклики інструментів' }).waitFor();
    await page.getByText('Успішно').first().waitFor();
    await page.getByRole('link', { name: 'Чат', exact: true }).click();
    await page.getByRole('button', { name: 'Згенерувати ще раз' }).first().waitFor();
    await shot('07f-chat-uk');
    await page.setViewportSize({ width: 390, height: 844 });
    await shot('07g-chat-uk-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByLabel('Мова').selectOption('en');
    await page.getByRole('link', { name: 'Chat', exact: true }).waitFor();
  });

  // ---- notes ----
  it('collects a text source in a research note, shows its text and answers from it', async () => {
    await page.goto(`${base}/projects/market-study/notes`);
    await page.getByRole('heading', { name: 'Research notes' }).waitFor();
    await page.getByLabel('Title').fill('Competitor prices');
    await page.getByLabel('Description').fill('What the rivals charge');
    await page.getByRole('button', { name: 'Create note' }).click();
    await page.getByRole('heading', { name: 'Competitor prices' }).waitFor();
    expect(new URL(page.url()).search).toMatch(/^\?note=\d+$/);
    await page.getByLabel('File', { exact: true }).setInputFiles({
      name: 'prices.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('Rival A charges 12 euros a month.\nRival B charges 9 euros a month.\n'),
    });
    const row = page.locator('li.note-source').filter({ hasText: 'prices.txt' });
    await row.locator('[data-status="done"]').waitFor({ timeout: 30_000 });
    await row.getByRole('button', { name: 'Show text' }).click();
    await page
      .getByRole('dialog')
      .getByText(/Rival A charges 12 euros/)
      .waitFor();
    await shot('20-notes');
    await page.keyboard.press('Escape');

    // A reload keeps the note (its id is in the address); the chat answers from the source.
    await page.reload();
    await page.getByRole('heading', { name: 'Competitor prices' }).waitFor();
    await page.getByLabel('Question').fill('Which rival is cheaper?');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    await page.locator('.note-chat li.msg.assistant').filter({ hasText: REPLY }).waitFor();
    await page.getByRole('button', { name: 'Ask', exact: true }).waitFor();
    await shot('21-notes-chat');

    // At phone width the note reads in one column.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('heading', { name: 'Ask the sources' }).waitFor();
    await shot('22-notes-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('cites a PDF page and a recording second; clicking a citation opens the place', async () => {
    await page.goto(`${base}/projects/market-study/notes`);
    await page.getByRole('heading', { name: 'Research notes' }).waitFor();
    await page.getByLabel('Title').fill('Field atlas');
    await page.getByRole('button', { name: 'Create note' }).click();
    await page.getByRole('heading', { name: 'Field atlas' }).waitFor();
    // A PDF whose second page holds the answer at its end, and a 12 s recording whose last segment does.
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const pages = [
      'Walruses haul out on the ice in spring.',
      `${'Whales migrate along the coast every year. '.repeat(34)}Narwhal tusks grow to three metres.`,
    ];
    for (const text of pages) {
      const p = pdf.addPage();
      (text.match(/.{1,90}(\s|$)/g) ?? [text]).forEach((l, i) =>
        p.drawText(l.trim(), { x: 40, y: 780 - i * 12, font, size: 9 }),
      );
    }
    await page.getByLabel('File', { exact: true }).setInputFiles({
      name: 'atlas.pdf',
      mimeType: 'application/pdf',
      buffer: Buffer.from(await pdf.save()),
    });
    await page.locator('li.note-source').filter({ hasText: 'atlas.pdf' }).locator('[data-status="done"]').waitFor({
      timeout: 30_000,
    });
    await page.getByLabel('File', { exact: true }).setInputFiles({
      name: 'meeting.wav',
      mimeType: 'audio/wav',
      buffer: fs.readFileSync(makeWav(path.join(dataDir, 'meeting.wav'), 12)),
    });
    await page.locator('li.note-source').filter({ hasText: 'meeting.wav' }).locator('[data-status="done"]').waitFor({
      timeout: 60_000,
    });

    // The answer cites the PDF passage on page 2: its chip opens the PDF at page 2.
    await page.getByLabel('Question').fill('How long are narwhal tusks?');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    const pdfChip = page.locator('.note-chat button.citation').filter({ hasText: 'p. 2' }).first();
    await pdfChip.waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Ask', exact: true }).waitFor();
    await pdfChip.click();
    const frame = page.getByRole('dialog').locator('iframe.citation-pdf');
    await frame.waitFor();
    expect(await frame.getAttribute('src')).toMatch(/^blob:.+#page=2$/);
    await expect
      .poll(() => page.getByRole('dialog').getByTestId('citation-quote').textContent())
      .toContain('Narwhal tusks grow to three metres');
    // (The browser's PDF viewer keeps the network busy: no wait for network idle here.)
    await page.screenshot({ path: path.join(SHOTS, '23-notes-citation-pdf.png') });
    await page.keyboard.press('Escape');

    // The answer cites the recording's last passage: its chip opens the player at its second.
    await page.getByLabel('Question').fill('What is the otter budget?');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    const audioChip = page.locator('.note-chat button.citation').filter({ hasText: '00:00:0' }).first();
    await audioChip.waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Ask', exact: true }).waitFor();
    const label = (await audioChip.textContent()) ?? '';
    const second = Number(/00:00:(\d\d)/.exec(label)![1]);
    expect(second).toBeGreaterThan(0);
    await audioChip.click();
    const audio = page.getByRole('dialog').locator('audio');
    await audio.waitFor();
    await expect.poll(() => audio.evaluate((el: HTMLAudioElement) => el.currentTime), { timeout: 15_000 }).toBe(second);
    // (The player may go on reading its blob, and the closed PDF viewer its own: no wait for network idle here.)
    await page.screenshot({ path: path.join(SHOTS, '24-notes-citation-audio.png') });
    await page.keyboard.press('Escape');
  });

  // ---- account ----
  it('shows the plan, exports the data, links the CLI and offers the cloud container', async () => {
    const token = (await page.evaluate(() => localStorage.getItem('crm.token')))!;
    const me = await apiCall('GET', '/api/auth/me', undefined, token);

    // Plan and payment: buy `min` on the provider's hosted invoice page; its callback reaches the service and
    // the browser comes back to the billing tab, which waits for the plan to change.
    await page.goto(`${base}/account?tab=billing`);
    await page.getByRole('heading', { name: 'Your plan' }).waitFor();
    await page.getByRole('button', { name: 'Buy min' }).click();
    await page.waitForURL(`${payprov.url}/pay/**`);
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL(/\/account\?tab=billing/);
    await page.getByRole('status').filter({ hasText: 'Thank you: your plan is now min.' }).waitFor();
    expect((await apiCall('GET', '/api/crm/billing/status', undefined, token)).body.plan).toBe('min');
    await shot('40-billing');

    // Export: the downloaded JSON holds the user's e-mail and the project.
    await page.getByRole('tab', { name: 'Export and erasure' }).click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download the export' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^crm-export-\d{4}-\d{2}-\d{2}\.json$/);
    const exported = fs.readFileSync((await download.path())!, 'utf8');
    const data = JSON.parse(exported);
    expect(data.profile.email).toBe(USER.email);
    expect(exported).toContain('"market-study"');
    await shot('41-export');

    // The CLI link page confirms a device's code; a check-in lists the device on the CLI tab.
    const link = await apiCall('POST', '/api/cli/link');
    expect(link.status).toBe(201);
    await page.goto(`${base}/cli/link?code=${encodeURIComponent(link.body.code)}`);
    await page.getByRole('button', { name: 'Yes, link this device' }).click();
    await page.getByText(/The CLI is linked/).waitFor();
    const beat = await apiCall(
      'POST',
      '/api/cli/heartbeat',
      { device_id: 'laptop-1', hostname: 'ann-laptop', platform: 'linux', version: '1.0.16', project: 'market-study' },
      token,
    );
    expect(beat.body.recorded).toBe(true);
    await page.getByRole('link', { name: 'See your devices' }).click();
    await page.getByRole('cell', { name: 'ann-laptop' }).waitFor();
    await page.getByText(/You use the CLI/).waitFor();
    // Showing the install steps records no download; the download link records one (the admin's analytics).
    const adminLogin = await apiCall('POST', '/api/auth/login', ADMIN);
    const downloads = async () =>
      (await apiCall('GET', '/api/crm/analytics/activity?days=7', undefined, adminLogin.body.token)).body.byType.find(
        (x: { type: string }) => x.type === 'cli_download',
      )?.n ?? 0;
    const downloadsBefore = await downloads();
    await page.getByRole('button', { name: 'Show the install steps' }).click();
    await page.getByText(/arc login --server/).waitFor();
    const pkg = page.getByRole('link', { name: /^Download arc / });
    expect(await pkg.getAttribute('href')).toMatch(/\/api\/cli\/arc\.tgz$/);
    expect(await downloads()).toBe(downloadsBefore);
    const [cliDownload] = await Promise.all([page.waitForEvent('download'), pkg.click()]);
    expect(cliDownload.suggestedFilename()).toMatch(/^arc-.*\.tgz$/);
    await expect.poll(downloads, { timeout: 10_000 }).toBe(downloadsBefore + 1);
    const tgz = await fetch(new URL((await pkg.getAttribute('href'))!, page.url()));
    expect([tgz.status, tgz.headers.get('content-type')]).toEqual([200, 'application/gzip']);
    await shot('42-cli');

    // Cloud: without the plan, the waitlist; once the admin invites Ann (plan cloud), the container: with the
    // sandbox runtime a real shell in the page's terminal and the log; without one, a plain "cannot run".
    await page.getByRole('tab', { name: 'Cloud container' }).click();
    await page.getByText('A cloud container needs the cloud plan.').waitFor();
    expect(await page.getByRole('button', { name: 'Create my container' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Join the cloud waitlist' }).click();
    await page.getByText(/You are number 1 on the cloud waitlist/).waitFor();
    const admin = await apiCall('POST', '/api/auth/login', ADMIN);
    const invited = await apiCall('POST', '/api/crm/cloud/waitlist/invite', { user_id: me.body.id }, admin.body.token);
    expect(invited.status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Create my container' }).click();
    if (!SANDBOX) {
      await page.getByText('This server cannot run cloud containers right now. Try again later.').waitFor();
      expect(await page.getByText('A cloud container needs the cloud plan.').count()).toBe(0);
      await shot('43-cloud');
      return;
    }
    await page.getByTestId('cloud-status').filter({ hasText: 'Ready' }).waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Open the terminal' }).click();
    await page.getByText('Connected. The terminal closes after two minutes without activity.').waitFor();
    await page.getByRole('application', { name: 'Terminal' }).click();
    await page.keyboard.type('echo sum=$((6*7)) && whoami\n');
    await page.locator('.terminal').getByText('sum=42').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Show the log' }).click();
    await shot('43-cloud');
    // The sandbox outlives the service by design: remove it.
    await page.getByRole('button', { name: 'Remove the container' }).click();
    await page.getByRole('button', { name: 'Yes, remove it' }).click();
    await page
      .getByTestId('cloud-status')
      .filter({ hasText: /Removed|No container/ })
      .waitFor({ timeout: 30_000 });
  });

  // ---- admin ----
  it('lets the admin read the dashboard and analytics, rotate a platform secret and review feedback', async () => {
    // Something to review: a feedback report and two translation suggestions from Ann.
    const token = await page.evaluate(() => localStorage.getItem('crm.token'));
    const report = await apiCall(
      'POST',
      '/api/crm/feedback',
      {
        type: 'bug',
        title: 'The board scrolls sideways',
        description: 'On a phone the board is wider than the screen.',
      },
      token!,
    );
    expect(report.status).toBe(200);
    for (const suggestion of ['Огляд', 'Пульт'])
      expect(
        (
          await apiCall(
            'POST',
            '/api/crm/feedback/translation',
            { locale: 'uk', msgid: 'Dashboard', suggestion, severity: 'minor', current_translation: 'Панель' },
            token!,
          )
        ).status,
      ).toBe(201);

    // The admin in a browser context of its own, so Ann stays signed in on `page`.
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await ctx.newPage();
    const adminShot = async (name: string) => {
      await p.waitForLoadState('networkidle');
      await p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    };
    try {
      await p.goto(`${base}/login`);
      await p.getByLabel('E-mail').fill(ADMIN.email);
      await p.getByLabel('Password').fill(ADMIN.password);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.waitForURL((u) => !u.pathname.startsWith('/login'));

      // Dashboard: host figures, users per plan, recent events.
      await p.goto(`${base}/admin`);
      await p.getByRole('tab', { name: 'Dashboard', selected: true }).waitFor();
      await p.getByRole('table', { name: 'Users per plan' }).waitFor();
      await p.getByText('Memory used').waitFor();
      expect(
        await p.getByRole('table', { name: 'The last 50 activity events' }).locator('tbody tr').count(),
      ).toBeGreaterThan(0);
      await adminShot('50-admin-dashboard');

      // Analytics: the lifecycle funnel's seven steps as bars with their figures.
      await p.getByRole('tab', { name: 'Analytics' }).click();
      await p.waitForURL('**/admin?tab=analytics');
      const funnel = p.getByRole('table', { name: 'Users who reached each step (strict funnel)' });
      await funnel.getByRole('rowheader', { name: 'Came back on day 2' }).waitFor();
      expect(await funnel.locator('tbody tr').count()).toBe(7);
      await funnel.getByRole('rowheader', { name: 'Signed up' }).waitFor();
      await p.getByLabel('Signed up in').selectOption('7');
      await funnel.getByRole('rowheader', { name: 'Signed up' }).waitFor();
      for (const name of ['Events by type', 'Time per stage of an agent run (bars: p90)', 'By worker'])
        await p.getByRole('table', { name }).waitFor();
      await adminShot('51-admin-analytics');
      // The setup wizard the new user walked through is counted: started and completed.
      const adminToken = await p.evaluate(() => localStorage.getItem('crm.token'));
      const wizard = await apiCall('GET', '/api/crm/analytics/wizard-metrics?hours=24', undefined, adminToken!);
      expect(wizard.body.starts).toBeGreaterThanOrEqual(1);
      expect(wizard.body.completions).toBeGreaterThanOrEqual(1);

      // Platform secrets: set the e-mail key, see its preview and the audit row; test the LLM key.
      await p.getByRole('tab', { name: 'Platform secrets' }).click();
      const email = p.locator('li.secret').filter({ hasText: 'EMAIL_API_KEY' });
      await email.getByLabel('New value of EMAIL_API_KEY').fill('re_e2e_0123456789abcdefghijklmnopqrstuvw');
      await email.getByRole('button', { name: 'Save' }).click();
      await email.getByText('Set: re_e2e_01234…tuvw (40 characters)').waitFor();
      expect(await email.getByLabel('New value of EMAIL_API_KEY').inputValue()).toBe('');
      const audit = p.locator('table.audit tbody tr').filter({ hasText: 'EMAIL_API_KEY' });
      await audit.filter({ hasText: ADMIN.email }).first().waitFor();
      expect(await audit.first().textContent()).toContain('set');
      const llmKey = p.locator('li.secret').filter({ hasText: 'PLATFORM_LLM_KEY' });
      await llmKey.getByRole('button', { name: 'Test' }).click();
      await llmKey.getByText('Test passed.').waitFor();
      expect(
        await p
          .locator('li.secret')
          .filter({ hasText: 'CODEHOST_CLIENT_SECRET' })
          .getByRole('button', { name: 'Test' })
          .isDisabled(),
      ).toBe(true);
      expect(await p.content()).not.toContain('re_e2e_0123456789abcdefghijklmnopqrstuvw');
      await adminShot('52-admin-secrets');

      // Feedback and translations: the report, and one of the two suggestions rejected.
      await p.getByRole('tab', { name: 'Feedback and translations' }).click();
      await p.getByText('The board scrolls sideways').waitFor();
      await p.getByRole('button', { name: 'Reject the suggestion “Пульт”' }).click();
      await p.getByText('Rejected.', { exact: true }).waitFor();
      await p.getByRole('button', { name: 'Reject the suggestion “Пульт”' }).waitFor({ state: 'detached' });
      await p.getByRole('button', { name: 'Accept the suggestion “Огляд”' }).waitFor();
      await adminShot('53-admin-feedback');

      // The e-mail outbox lists Ann's verification e-mail with its text; Back returns to the previous tab.
      await p.getByRole('tab', { name: 'E-mail outbox' }).click();
      await p.waitForURL('**/admin?tab=outbox');
      // Newest first: Ann's oldest e-mail is her verification.
      const mail = p.locator('ul.outbox li').filter({ hasText: USER.email }).last();
      await mail.locator('summary').click();
      await mail.getByText(/\/verify-email\?token=/).waitFor();
      await adminShot('55-admin-outbox');
      await p.goBack();
      await p.getByRole('tab', { name: 'Feedback and translations', selected: true }).waitFor();

      // At phone width the analytics charts fit the screen (tables scroll inside their box).
      await p.setViewportSize({ width: 390, height: 844 });
      await p.getByRole('tab', { name: 'Analytics' }).click();
      await funnel.getByRole('rowheader', { name: 'Came back on day 2' }).waitFor();
      expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await adminShot('54-admin-analytics-phone');
    } finally {
      await ctx.close();
    }
  });

  // ---- transcripts ----
  it('transcribes and summarizes a meeting recording, and sends feedback with a dictated description', async () => {
    await page.goto(`${base}/projects/market-study/workers`);
    await page.getByRole('link', { name: 'Transcripts' }).click();
    await page.waitForURL('**/projects/market-study/transcripts');
    await page.getByRole('heading', { name: 'Upload a recording' }).waitFor();
    await page.getByText('No transcripts yet. Upload a meeting recording above.').waitFor();
    // 300 ms of 16 kHz mono 16-bit silence: a 44-byte RIFF header and zero samples.
    const samples = 4800;
    const wav = Buffer.alloc(44 + samples * 2);
    wav.write('RIFF', 0, 'ascii');
    wav.writeUInt32LE(36 + samples * 2, 4);
    wav.write('WAVEfmt ', 8, 'ascii');
    wav.writeUInt32LE(16, 16);
    wav.writeUInt16LE(1, 20);
    wav.writeUInt16LE(1, 22);
    wav.writeUInt32LE(16_000, 24);
    wav.writeUInt32LE(32_000, 28);
    wav.writeUInt16LE(2, 32);
    wav.writeUInt16LE(16, 34);
    wav.write('data', 36, 'ascii');
    wav.writeUInt32LE(samples * 2, 40);
    await page
      .getByLabel('Recording (audio or video)')
      .setInputFiles({ name: 'standup.wav', mimeType: 'audio/wav', buffer: wav });
    // The name is taken from the file; embedding is on by default.
    expect(await page.getByLabel('File name').inputValue()).toBe('standup.wav');
    expect(await page.getByLabel('Add the transcript to the search index of the project').isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    // The page moves to the transcript (?id=) and follows its steps live: ffmpeg, the stand-in speech server,
    // the summary from the stand-in model, the search index.
    await page.waitForURL(/\/transcripts\?id=\d+$/);
    await page.getByText(SUMMARY.tldr).waitFor({ timeout: 60_000 });
    await page.getByText(HEARD).first().waitFor();
    await page.getByText('Send the survey').waitFor();
    const token = await page.evaluate(() => localStorage.getItem('crm.token'));
    const list = await apiCall('GET', '/api/crm/projects/market-study/transcripts', undefined, token!);
    expect(list.body.items).toHaveLength(1);
    await shot('30-transcripts');

    // ---- feedback, from the footer of any page ----
    await page.getByRole('button', { name: 'Send feedback' }).click();
    const dialog = page.getByRole('dialog', { name: 'Send feedback' });
    await dialog.getByLabel('Kind').selectOption('feature');
    await dialog.getByLabel('Title').fill('Transcripts of phone calls');
    await dialog.getByLabel('Description').fill('Please accept recordings of phone calls too.');
    // Dictation into the description: recorded from the (fake) microphone, heard by the stand-in speech server,
    // and inserted at the cursor (the end of the text).
    await dialog.getByRole('button', { name: 'Dictate' }).click();
    await new Promise((r) => setTimeout(r, 500));
    await dialog.getByRole('button', { name: 'Stop dictation' }).click();
    await expect.poll(() => dialog.getByLabel('Description').inputValue(), { timeout: 15_000 }).toContain(HEARD);
    expect(await dialog.getByLabel('Description').inputValue()).toMatch(
      /^Please accept recordings of phone calls too\./,
    );
    await shot('31-feedback');
    await dialog.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Thank you!' }).waitFor();
    const admin = await apiCall('POST', '/api/auth/login', ADMIN);
    const reports = await apiCall('GET', '/api/crm/admin/feedback', undefined, admin.body.token);
    expect(reports.body.items[0]).toMatchObject({
      type: 'feature',
      title: 'Transcripts of phone calls',
      project: 'market-study',
    });
  });

  // ---- board, dead ends, phone width ----
  it('moves an issue from the keyboard, edits it in the drawer, names a Cyrillic project and fits a phone', async () => {
    const token = (await page.evaluate(() => localStorage.getItem('crm.token')))!;
    // A title without spaces wraps inside its card: every column keeps its width.
    const long = `Competitor${'x'.repeat(140)}`;
    const made = await apiCall('POST', '/api/crm/projects/market-study/issues', { title: long, priority: 'P1' }, token);
    expect(made.status).toBe(201);
    await page.goto(`${base}/projects/market-study/issues`);
    const card = page.locator('li.issue').filter({ hasText: long });
    await page.locator('section[data-status="open"] li.issue').filter({ hasText: long }).waitFor();
    const widths = await page.locator('section[data-status]').evaluateAll((els) => els.map((e) => e.clientWidth));
    expect(new Set(widths).size).toBe(1);

    // From the keyboard: lift the card with Space by its handle, two columns right, Space drops it in Blocked.
    await card.getByRole('button', { name: `Move “${long}”` }).focus();
    await page.keyboard.press('Space');
    for (const key of ['ArrowRight', 'ArrowRight']) {
      await new Promise((r) => setTimeout(r, 250));
      await page.keyboard.press(key);
    }
    await new Promise((r) => setTimeout(r, 250));
    await page.keyboard.press('Space');
    await page.locator('section[data-status="blocked"] li.issue').filter({ hasText: long }).waitFor();
    await expect
      .poll(
        async () =>
          (await apiCall('GET', `/api/crm/projects/market-study/issues/${made.body.id}`, undefined, token)).body.status,
      )
      .toBe('blocked');

    // The drawer: headed by the title, the issue's number in the address; assign a worker and raise the priority.
    await card.getByRole('button', { name: long, exact: true }).click();
    const drawer = page.getByRole('dialog', { name: long });
    await drawer.waitFor();
    expect(new URL(page.url()).searchParams.get('issue')).toBe(String(made.body.id));
    await drawer.getByText('Ann moved it from Open to Blocked').waitFor();
    await drawer.getByLabel('Assignee').selectOption({ index: 1 });
    const worker = await drawer.getByLabel('Assignee').inputValue();
    await drawer.getByLabel('Priority').selectOption('P0');
    await drawer.getByRole('button', { name: 'Save' }).click();
    await drawer.getByText(`Ann assigned it to ${worker}`).waitFor();
    await drawer.getByText('Ann changed the priority').waitFor();
    const saved = await apiCall('GET', `/api/crm/projects/market-study/issues/${made.body.id}`, undefined, token);
    expect([saved.body.assignee, saved.body.priority]).toEqual([worker, 'P0']);
    await shot('60-issue-drawer');
    // Closing the drawer is a step of the history: Back opens it again.
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });
    await page.goBack();
    await page.getByRole('dialog', { name: long }).waitFor();
    await page.keyboard.press('Escape');

    // The onboarding checklist ticked itself from what Ann did: a team of workers, an issue, the linked CLI.
    await page.goto(`${base}/onboarding`);
    for (const step of ['Set up a team of workers', 'Create an issue', 'Link the command-line client'])
      await page.locator('li.step').filter({ hasText: step }).getByText('Done').waitFor();

    // A project named in Cyrillic: the technical name is transliterated, shown and editable.
    await page.goto(`${base}/projects`);
    await page.getByRole('button', { name: 'New project' }).click();
    const dialog = page.getByRole('dialog', { name: 'New project' });
    await dialog.getByLabel('Project name').fill('Дослідження ринку');
    await expect.poll(() => dialog.getByLabel('Technical name').inputValue()).toBe('doslidzhennya-rinku');
    await shot('61-new-project-cyrillic');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL('**/projects/doslidzhennya-rinku**');

    // An unknown address is the app's own page (status 404), not the API's JSON; the favicon is there.
    const missing = await page.goto(`${base}/no-such-page`);
    expect(missing?.status()).toBe(404);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    const icon = await fetch(`${base}/favicon.svg`);
    expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
    await shot('62-not-found');

    // At phone width (375 px) no page scrolls sideways: the board scrolls inside itself.
    await page.setViewportSize({ width: 375, height: 812 });
    for (const url of ['/projects', '/account', '/projects/market-study/workers', '/projects/market-study/issues']) {
      await page.goto(`${base}${url}`);
      await page.waitForLoadState('networkidle');
      expect(await page.evaluate(() => document.documentElement.scrollWidth), url).toBeLessThanOrEqual(375);
    }
    await shot('63-board-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  // ---- accessibility ----
  // 28 pages under axe-core, a few seconds each on a busy machine: the step has a longer time limit.
  it('has no serious or critical accessibility violations (axe-core) on the main pages, in both languages and both themes', async () => {
    const pages = [
      '/projects',
      '/onboarding',
      '/setup',
      '/projects/market-study/workers',
      '/projects/market-study/chat',
      '/projects/market-study/runs',
      '/projects/market-study/issues',
      `/projects/market-study/issues?issue=1`,
      '/projects/market-study/notes',
      '/account',
      '/account?tab=billing',
      '/help',
      '/no-such-page',
    ];
    const found: string[] = [];
    const check = async (p: Page, where: string) => {
      await p.waitForLoadState('networkidle');
      const { violations } = await new AxeBuilder({ page: p }).analyze();
      for (const v of violations.filter((x) => x.impact === 'serious' || x.impact === 'critical'))
        found.push(
          `${where}: ${v.id} (${v.impact}) ${v.nodes
            .map((n) => n.target.join(' '))
            .slice(0, 3)
            .join(' | ')}`,
        );
    };
    // The browser's dark preference (no choice stored) gives the dark palette, colour scheme included.
    const darkApplies = async (p: Page, where: string) =>
      expect(
        await p.evaluate(() => [
          getComputedStyle(document.documentElement).colorScheme,
          getComputedStyle(document.documentElement).backgroundColor,
        ]),
        where,
      ).toEqual(['dark', 'rgb(18, 21, 25)']);
    // axe-core runs in pages of a context of their own (it opens one to collect frames): Ann's token is put there.
    // English pages are checked in the light theme, Ukrainian ones in the dark theme (the browser prefers dark).
    const token = (await page.evaluate(() => localStorage.getItem('crm.token')))!;
    for (const [locale, colorScheme] of [
      ['en', 'light'],
      ['uk', 'dark'],
    ] as const) {
      const own = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme });
      const p = await own.newPage();
      await p.addInitScript(
        ([tk, l]) => {
          localStorage.setItem('crm.token', tk);
          localStorage.setItem('crm.locale', l);
        },
        [token, locale],
      );
      for (const url of pages) {
        await p.goto(`${base}${url}`);
        await p.locator('main h1, main h2').first().waitFor();
        if (colorScheme === 'dark') await darkApplies(p, url);
        await check(p, `${locale} ${colorScheme} ${url}`);
      }
      await own.close();
      // A guest's sign-in page, in a context of its own.
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale, colorScheme });
      const guest = await ctx.newPage();
      await guest.addInitScript((l) => localStorage.setItem('crm.locale', l), locale);
      await guest.goto(`${base}/login`);
      await guest.locator('main h1').waitFor();
      if (colorScheme === 'dark') await darkApplies(guest, '/login');
      await check(guest, `${locale} ${colorScheme} /login`);
      await ctx.close();
    }
    expect(found).toEqual([]);
  }, 300_000);

  it('shows the projects in Ukrainian at phone width', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByLabel('Language').selectOption('uk');
    // At phone width the navigation is behind the menu button.
    await page.getByRole('button', { name: 'Меню' }).click();
    await page.getByRole('link', { name: 'Проєкти' }).click();
    await page.getByRole('button', { name: 'Меню', expanded: false }).waitFor();
    await page.getByRole('heading', { name: 'Проєкти' }).waitFor();
    await page.getByRole('link', { name: 'Market study' }).waitFor();
    await shot('10-projects-uk-phone');
  });

  it('signs a newcomer up through the identity provider, mails them through the e-mail API, clones a private repository', async () => {
    const admin = (await apiCall('POST', '/api/auth/login', ADMIN)).body.token as string;
    const settings: [string, string][] = [
      ['IDP_CLIENT_ID', IDP_CLIENT.client_id],
      ['IDP_CLIENT_SECRET', IDP_CLIENT.client_secret],
      ['CODEHOST_CLIENT_ID', CODEHOST_APP.id],
      ['CODEHOST_CLIENT_SECRET', CODEHOST_APP.secret],
      ['EMAIL_API_KEY', EMAIL_KEYS[1]],
    ];
    for (const [name, value] of settings)
      expect((await apiCall('PUT', `/api/crm/platform/settings/${name}`, { value }, admin)).status).toBe(200);
    const code: string = (await apiCall('POST', '/api/crm/admin/invites', { count: 1 }, admin)).body.codes[0];
    const email = 'ida@example.com';
    idp.accounts.set('ida', { email, email_verified: false, name: 'Ida' });
    idp.loginAs('ida');
    const repo = codehost.createRepo('ida', 'secret-plans', { 'README.md': 'for Ida only\n' });

    // A browser of her own: register with the invite through the provider.
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const p = await ctx.newPage();
    const errors: string[] = [];
    p.on('pageerror', (err) => errors.push(String(err)));
    const answers: string[] = [];
    p.on('response', (r) => void answers.push(`${r.status()} ${r.url().replace(base, '')}`));
    try {
      await p.goto(`${base}/register?code=${code}`);
      const idpLink = p.getByRole('link', { name: 'Register with Test ID' });
      await idpLink.waitFor({ timeout: 30_000 }).catch(async (err: Error) => {
        const config = await p.evaluate(() => fetch('/api/auth/oidc/config').then((r) => r.text()));
        const text = (await p.locator('body').innerText()).slice(0, 500);
        throw new Error(
          `${err.message}\nconfig: ${config}\npage errors: ${errors.join(' | ')}\nanswers: ${answers.join(' | ')}\npage: ${text}`,
        );
      });
      await idpLink.click();
      await p.getByRole('heading', { name: 'Getting started' }).waitFor();
      await p.screenshot({ path: path.join(SHOTS, '11-idp-signed-up.png'), fullPage: true });

      // The provider did not verify her address: the verification e-mail comes through the e-mail API.
      const deadline = Date.now() + 20_000;
      while (!emailApi.messages.some((m) => m.to.includes(email)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      const mail = emailApi.messages.find((m) => m.to.includes(email))!;
      expect(mail.key).toBe(EMAIL_KEYS[1]);
      const link = /https?:\/\/[^\s"<>]+\/verify-email\?token=[A-Za-z0-9_-]+/.exec(mail.text)?.[0];
      await p.goto(link!);
      await p.getByText('Your e-mail address is verified.').waitFor();

      // Connect the code host in the settings.
      await p.goto(`${base}/account`);
      await p.getByRole('button', { name: 'Connect the code host' }).click();
      await p.getByText('The code host is connected.').waitFor();
      await p.getByText('Code host connected as octo.').waitFor();
      await p.screenshot({ path: path.join(SHOTS, '12-codehost-connected.png'), fullPage: true });

      // Her private repository clones into a project.
      const token = (await p.evaluate(() => localStorage.getItem('crm.token')))!;
      expect((await apiCall('GET', '/api/auth/me', undefined, token)).body).toMatchObject({
        email,
        email_verified: true,
      });
      const project = await apiCall(
        'POST',
        '/api/crm/projects/create',
        { displayName: 'Plans', projectName: 'ida-plans' },
        token,
      );
      expect(project.status).toBeLessThan(300);
      const clone = await apiCall('POST', '/api/crm/projects/ida-plans/files/clone', { url: repo }, token);
      expect(clone.status).toBe(201);
      const readme = await apiCall(
        'GET',
        '/api/crm/projects/ida-plans/files/read?path=secret-plans/README.md',
        undefined,
        token,
      );
      expect(JSON.stringify(readme.body)).toContain('for Ida only');
      expect(errors).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  it('walks a Ukrainian newcomer from registration to two workers in Markdown, an assigned and moved issue and a cited note answer', async () => {
    const admin = (await apiCall('POST', '/api/auth/login', ADMIN)).body.token as string;
    const code: string = (await apiCall('POST', '/api/crm/admin/invites', { count: 1 }, admin)).body.codes[0];
    const olena = { name: 'Олена', email: 'olena@example.com', password: 'довга фраза-пароль 42' };
    // A browser set to Ukrainian: the app speaks it from the first page, with nothing to choose.
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'uk-UA' });
    const p = await ctx.newPage();
    const errors: string[] = [];
    p.on('pageerror', (err) => errors.push(String(err)));
    const ukShot = async (name: string) => {
      await p.waitForLoadState('networkidle');
      await p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    };
    try {
      await p.goto(`${base}/projects`);
      await p.getByRole('heading', { name: 'Увійти' }).waitFor();
      await p.getByRole('link', { name: 'Зареєструйтеся з кодом запрошення' }).click();
      await p.getByLabel('Ім’я').fill(olena.name);
      await p.getByLabel('Електронна пошта').fill(olena.email);
      await p.getByLabel('Пароль').fill(olena.password);
      await p.getByLabel('Код запрошення').fill(code);
      await p.getByRole('button', { name: 'Створити обліковий запис' }).click();
      await p.getByRole('heading', { name: 'Початок роботи' }).waitFor();
      await p.getByText(/Перевірте пошту/).waitFor();

      // The verification link, from whichever mail transport the admin left configured.
      const inbox = () =>
        [
          ...smtp.messages.map((m) => ({ to: m.to, text: m.decoded })),
          ...emailApi.messages.map((m) => ({ to: m.to, text: m.text })),
        ].find((m) => m.to.includes(olena.email));
      await expect.poll(() => inbox(), { timeout: 20_000 }).toBeTruthy();
      const link = /https?:\/\/[^\s"<>]+\/verify-email\?token=[A-Za-z0-9_-]+/.exec(inbox()!.text)?.[0];
      await p.goto(link!);
      await p.getByText('Адресу пошти підтверджено.').waitFor();

      // The setup wizard: a Cyrillic project name and the research team of two workers.
      await p.getByRole('link', { name: 'Продовжити' }).click();
      await p.getByRole('link', { name: 'Налаштувати проєкт' }).click();
      await p.getByLabel('Назва проєкту').fill('Огляд кав’ярень');
      await p.getByLabel('Про що проєкт? (ніша)').fill('кав’ярні Києва');
      await p.getByRole('button', { name: 'Далі' }).click();
      await p.getByLabel('Дослідження').check();
      await p.getByRole('button', { name: 'Далі' }).click();
      await p.getByRole('button', { name: 'Створити проєкт' }).click();
      // The technical name is transliterated from the Cyrillic name.
      await p.waitForURL(/\/projects\/[a-z0-9-]+\/workers$/);
      const project = /\/projects\/([a-z0-9-]+)\//.exec(p.url())![1];
      expect(project).toMatch(/^o[hg]l[iy]a?d-kav/);
      await p.locator('ol.workers > li').nth(1).waitFor();
      const token = (await p.evaluate(() => localStorage.getItem('crm.token')))!;
      const workers = (await apiCall('GET', `/api/crm/projects/${project}/workers`, undefined, token)).body.workers as {
        id: number;
        label: string;
      }[];
      expect(workers).toHaveLength(2);
      await ukShot('70-uk-workers');

      // One message to both workers: both replies stream in, each under its worker's name, as Markdown.
      await p.getByRole('link', { name: 'Чат', exact: true }).click();
      await p.getByRole('checkbox', { name: workers[1].label }).check();
      await p.getByLabel('Повідомлення').fill('MD-STEP: сплануй опитування');
      await p.getByRole('button', { name: 'Надіслати', exact: true }).click();
      const replies = p.locator('li.msg.assistant').filter({ has: p.locator('strong', { hasText: 'Research' }) });
      for (const w of workers)
        await replies
          .filter({ has: p.locator('.who', { hasText: w.label }) })
          .first()
          .waitFor({ timeout: 30_000 });
      await replies.first().locator('.code-block code.language-ts').waitFor();
      await p.getByRole('button', { name: 'Надіслати', exact: true }).waitFor();
      await ukShot('71-uk-chat');

      // An issue: created on the board, assigned to a worker in its drawer, moved from the keyboard.
      await p.getByRole('link', { name: 'Задачі', exact: true }).click();
      await p.getByRole('button', { name: 'Нова задача' }).click();
      const title = 'Скласти питання опитування';
      await p.getByLabel('Заголовок').fill(title);
      await p.getByRole('button', { name: 'Створити', exact: true }).click();
      const card = p.locator('li.issue').filter({ hasText: title });
      await p.locator('section[data-status="open"] li.issue').filter({ hasText: title }).waitFor();
      await card.getByRole('button', { name: title, exact: true }).click();
      const drawer = p.getByRole('dialog', { name: title });
      await drawer.waitFor();
      await drawer.getByLabel('Виконавець').selectOption(workers[0].label);
      await drawer.getByRole('button', { name: 'Зберегти' }).click();
      await drawer.getByText(new RegExp(`Олена .*${workers[0].label}`)).waitFor();
      await ukShot('72-uk-issue-drawer');
      await p.keyboard.press('Escape');
      await drawer.waitFor({ state: 'detached' });
      await card.getByRole('button', { name: `Перенести «${title}»` }).focus();
      await p.keyboard.press('Space');
      await new Promise((r) => setTimeout(r, 250));
      await p.keyboard.press('ArrowRight');
      await new Promise((r) => setTimeout(r, 250));
      await p.keyboard.press('Space');
      await p.locator('section[data-status="in_progress"] li.issue').filter({ hasText: title }).waitFor();
      const issues = (await apiCall('GET', `/api/crm/projects/${project}/issues`, undefined, token)).body.issues;
      expect(issues.map((i: any) => [i.title, i.status, i.assignee])).toEqual([
        [title, 'in_progress', workers[0].label],
      ]);
      await ukShot('73-uk-board');

      // A research note answers from its source with a citation; the citation opens the quoted passage.
      await p.getByRole('link', { name: 'Нотатки', exact: true }).click();
      await p.getByRole('heading', { name: 'Дослідницькі нотатки' }).waitFor();
      await p.getByLabel('Заголовок').fill('Ціни в кав’ярнях');
      await p.getByRole('button', { name: 'Створити нотатку' }).click();
      await p.getByRole('heading', { name: 'Ціни в кав’ярнях' }).waitFor();
      await p.getByLabel('Файл', { exact: true }).setInputFiles({
        name: 'ціни.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('Кава коштує 60 гривень.\nБорщ коштує 90 гривень у кафе «Смак».\n'),
      });
      await p.locator('li.note-source').filter({ hasText: 'ціни.txt' }).locator('[data-status="done"]').waitFor({
        timeout: 30_000,
      });
      await p.getByLabel('Запитання').fill('Скільки коштує борщ?');
      await p.getByRole('button', { name: 'Запитати', exact: true }).click();
      const chip = p.locator('.note-chat button.citation').filter({ hasText: 'ціни.txt' }).first();
      await chip.waitFor({ timeout: 30_000 });
      await p.getByText('Цитовано:').first().waitFor();
      // The answer has finished (its button is back) before its chip is clicked, as in the English notes test: a chip
      // of the streamed answer is replaced by the stored answer's, and a click in between opens nothing.
      await p.getByRole('button', { name: 'Запитати', exact: true }).waitFor();
      await chip.click();
      await expect
        .poll(() => p.getByRole('dialog').getByTestId('citation-quote').textContent())
        .toContain('Борщ коштує 90 гривень');
      await ukShot('74-uk-note-citation');
      expect(errors).toEqual([]);
    } finally {
      await ctx.close();
    }
  });
});
