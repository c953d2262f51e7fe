/**
 * arc's commands (commander). Every command accepts `--help`; listings accept `--json`. A device check-in
 * (heartbeat) goes out on every invocation once logged in. Exit codes: 0 ok, 1 error, 2 usage, 3 not logged in
 * or token refused, 4 not found, 5 server unreachable.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { stringify as stringifyYaml } from 'yaml';
import { CliError, EXIT, normalizeServer, readSse, request } from './api.js';
import {
  clearSession,
  deviceId,
  findProject,
  readAuth,
  readSession,
  removeAuth,
  writeAtomic,
  writeAuth,
  writeProject,
  writeSession,
} from './config.js';
import { installHook } from './hook.js';
import { summarize, uploadTranscript } from './transcript.js';
import { VERSION } from './version.js';

const DEFAULT_SERVER = 'http://127.0.0.1:8080';
/** Skill names as the service allows them (a file name under `.skills/`). */
const SKILL_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** @param {unknown} v @returns {void} */
const printJson = (v) => {
  process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
};
/** @param {string} s @returns {void} */
const say = (s) => {
  process.stdout.write(`${s}\n`);
};

/**
 * The options every command sees (global ones included).
 * @param {Command} cmd
 * @returns {{ server?: string, project?: string, worker?: string, json?: boolean, [k: string]: any }}
 */
const optsOf = (cmd) => cmd.optsWithGlobals();

/** The server: `--server`, `$ARC_SERVER`, the stored login's, else the local default. @param {Command} cmd */
function serverOf(cmd) {
  return normalizeServer(optsOf(cmd).server ?? process.env.ARC_SERVER ?? readAuth()?.server ?? DEFAULT_SERVER);
}

/** A client with the stored token. @param {Command} cmd @throws {CliError} when not logged in */
function authed(cmd) {
  const auth = readAuth();
  if (!auth) throw new CliError('Not logged in. Run `arc login` first.', EXIT.auth);
  return { server: serverOf(cmd), token: auth.token, auth };
}

/**
 * The project and worker a command acts on: `--project`/`--worker`, `$ARC_PROJECT`, else `.arc/project.json`.
 * @param {Command} cmd
 */
function projectOf(cmd) {
  const o = optsOf(cmd);
  const binding = findProject();
  const project = o.project ?? process.env.ARC_PROJECT ?? binding?.project;
  if (!project) throw new CliError('No project: run `arc init <project>` here, or pass --project.', EXIT.usage);
  return {
    project,
    worker: o.worker ?? binding?.worker ?? null,
    root: binding?.root ?? process.cwd(),
  };
}

/** @param {string} project */
const issuesPath = (project) => `/api/crm/projects/${encodeURIComponent(project)}/issues`;

/**
 * Refresh the local issues file the commit-message hook reads (`<root>/.crm/issues.json`).
 * @param {{ server: string, token: string }} client @param {string} project @param {string} root
 */
async function syncIssues(client, project, root) {
  const all = [];
  for (let offset = 0; offset < 10_000; offset += 500) {
    const page = await request(client, 'GET', `${issuesPath(project)}?limit=500&offset=${offset}`);
    all.push(...page.issues);
    if (page.issues.length < 500) break;
  }
  const file = {
    version: 1,
    project,
    generated_at: new Date().toISOString(),
    issues: all.map((i) => ({ id: i.id, title: i.title, status: i.status, assignee: i.assignee })),
  };
  writeAtomic(path.join(root, '.crm', 'issues.json'), `${JSON.stringify(file, null, 2)}\n`);
}

/** Open a URL in the user's browser (best effort; `--no-browser` or `$ARC_NO_BROWSER` skip it). @param {string} url */
function openBrowser(url) {
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(cmd, args, { detached: true, stdio: 'ignore' });
    child.on('error', () => {});
    child.unref();
  } catch {
    /* no browser: the URL is printed */
  }
}

/**
 * The device check-in (fire and forget): resolves within `capMs` whatever happens.
 * @param {{ server: string, token: string }} client @param {string | null} project @param {number} capMs
 */
function heartbeat(client, project, capMs = 1500) {
  const body = {
    device_id: deviceId(),
    hostname: os.hostname(),
    platform: process.platform,
    version: VERSION,
    project,
  };
  const sent = request({ ...client, timeoutMs: capMs }, 'POST', '/api/cli/heartbeat', { body }).catch(() => undefined);
  return Promise.race([sent, new Promise((r) => setTimeout(r, capMs).unref())]);
}

/**
 * Send the summary of the session in `.arc/session.json` (and its transcript when given), then forget it.
 * @param {{ server: string, token: string }} client
 * @param {{ project: string, worker: string | null, root: string }} where
 * @param {{ transcript?: string, progress?: boolean }} [opts]
 * @returns {Promise<any>} the summary sent, or undefined when no session was open
 */
async function endSession(client, where, opts = {}) {
  const s = readSession(where.root);
  if (!s) return undefined;
  const mode = s.worker ?? where.worker ?? 'cli';
  /** @type {Record<string, unknown>} */
  const body = {
    duration_ms: Math.max(0, Date.now() - Date.parse(s.started_at)) || 0,
    session_id: s.session_id,
  };
  if (s.issue_id) body.issue_id = s.issue_id;
  if (s.issue_title) body.issue_title = s.issue_title;
  if (opts.transcript) {
    const text = fs.readFileSync(opts.transcript, 'utf8');
    const sum = summarize(text);
    body.first_prompt = sum.firstPrompt;
    body.message_count = sum.messageCount;
  }
  const p = `/api/cli/session-end/${encodeURIComponent(where.project)}/${encodeURIComponent(mode)}`;
  const answer = await request(client, 'POST', p, { body });
  if (opts.transcript)
    await uploadTranscript(client, {
      project: where.project,
      mode,
      file: opts.transcript,
      sessionId: s.session_id,
      deviceId: deviceId(),
      progress: opts.progress,
    });
  clearSession(where.root);
  return answer;
}

/** @param {string} v */
function issueId(v) {
  const n = Number(v.replace(/^#/, ''));
  if (!Number.isInteger(n) || n < 1) throw new CliError(`Not an issue number: ${v}`, EXIT.usage);
  return n;
}

/** Build the program. @param {{ beat: (p: Promise<unknown>) => void }} hooks */
export function buildProgram(hooks) {
  const program = new Command('arc')
    .description('The command-line client of the CRM service.')
    .version(VERSION, '-v, --version')
    .option(
      '--server <url>',
      'the service origin (default: $ARC_SERVER, the logged-in server, or http://127.0.0.1:8080)',
    )
    .option('--project <name>', 'the project (default: $ARC_PROJECT or the one `arc init` bound here)')
    .option('--worker <mode>', 'the worker the session acts as: its label, role or id')
    .showHelpAfterError()
    .exitOverride();

  program.hook('preAction', (_root, action) => {
    const name = action.name();
    if (['login', 'logout', 'heartbeat'].includes(name)) return;
    const auth = readAuth();
    if (!auth) return;
    let project = null;
    try {
      project = projectOf(action).project;
    } catch {
      /* no project here */
    }
    hooks.beat(heartbeat({ server: serverOf(action), token: auth.token }, project));
  });

  program
    .command('login')
    .description('Link this device: opens {server}/cli/link?code=… and waits until you confirm the code there')
    .option('--no-browser', 'only print the link')
    .action(async (o, cmd) => {
      const server = serverOf(cmd);
      // The link issues this device's own credential, named after it and revocable from the devices list.
      const link = await request({ server }, 'POST', '/api/cli/link', {
        body: { device_id: deviceId(), hostname: os.hostname().slice(0, 255) },
      });
      say(`Open ${link.url} and confirm the code ${link.code} (valid 10 minutes).`);
      if (o.browser && !process.env.ARC_NO_BROWSER) openBrowser(link.url);
      /** @type {any} */
      let linked;
      /** @type {string | undefined} */
      let ended;
      await readSse(`${server}/api/sse/cli-status?token=${encodeURIComponent(link.link_token)}`, (event, data) => {
        if (event === 'linked' && data?.token) return !!(linked = data);
        if (event === 'end') return !!(ended = data?.reason ?? 'end');
        return false;
      });
      if (!linked)
        throw new CliError(
          ended === 'timeout' || ended === 'expired'
            ? 'The code was not confirmed in time. Run `arc login` again.'
            : 'The link was not completed. Run `arc login` again.',
          EXIT.auth,
        );
      writeAuth({ server, token: linked.token, user: linked.user });
      say(`Logged in as ${linked.user?.email ?? 'you'} on ${server}.`);
      await heartbeat({ server, token: linked.token }, findProject()?.project ?? null, 3000);
    });

  program
    .command('logout')
    .description('Forget the stored token of this device')
    .action(() => say(removeAuth() ? 'Logged out.' : 'Not logged in.'));

  program
    .command('whoami')
    .description('Show the logged-in user, the server and the CLI status')
    .option('--json', 'print JSON')
    .action(async (o, cmd) => {
      const c = authed(cmd);
      const me = await request(c, 'GET', '/api/auth/me');
      const status = await request(c, 'GET', '/api/crm/onboarding/cli-status');
      if (o.json) return printJson({ server: c.server, user: me, cli_status: status });
      say(`${me.email} on ${c.server} (CLI ${status.installed ? 'installed' : 'not yet seen'})`);
    });

  program
    .command('heartbeat')
    .description('Check this device in (done on every command once logged in)')
    .action(async (_o, cmd) => {
      const c = authed(cmd);
      const body = {
        device_id: deviceId(),
        hostname: os.hostname(),
        platform: process.platform,
        version: VERSION,
        project: findProject()?.project ?? null,
      };
      await request(c, 'POST', '/api/cli/heartbeat', { body });
      say('Checked in.');
    });

  program
    .command('devices')
    .description('Your devices (at most 20, newest first)')
    .option('--json', 'print JSON')
    .action(async (o, cmd) => {
      const { devices } = await request(authed(cmd), 'GET', '/api/crm/cli/devices');
      if (o.json) return printJson(devices);
      for (const d of devices)
        say(`${d.device_id}  ${d.hostname}  ${d.platform}  arc ${d.arc_version}  ${d.last_seen}`);
    });

  program
    .command('init')
    .description(
      "Bind this directory to a project and write the worker's context (.arc/context.md, .skills/*/SKILL.md)",
    )
    .argument('[project]', 'the project (default: the one bound here)')
    .option('--dir <dir>', 'the directory to bind (default: the current one)')
    .option('--json', 'print JSON')
    .action(async (projectArg, o, cmd) => {
      const c = authed(cmd);
      const g = optsOf(cmd);
      const bound = findProject();
      const project = projectArg ?? g.project ?? bound?.project;
      if (!project) throw new CliError('Name the project: arc init <project>.', EXIT.usage);
      const root = path.resolve(o.dir ?? process.cwd());
      let worker = g.worker ?? bound?.worker ?? null;
      if (!worker) {
        const list = await request(c, 'GET', `/api/crm/projects/${encodeURIComponent(project)}/workers`);
        const workers = Array.isArray(list) ? list : (list.workers ?? []);
        if (!workers.length) throw new CliError('The project has no workers; create one first.', EXIT.error);
        worker = workers[0].label;
      }
      const ctx = await request(
        c,
        'GET',
        `/api/cli/init/${encodeURIComponent(project)}/${encodeURIComponent(/** @type {string} */ (worker))}`,
      );
      writeProject(root, { project, worker: ctx.worker.label });
      writeAtomic(path.join(root, '.arc', 'context.md'), `${ctx.context}\n`);
      const written = [];
      for (const s of ctx.autoloaded) {
        if (!SKILL_NAME.test(s.name)) continue;
        const desc = ctx.skills.find((/** @type {any} */ k) => k.name === s.name)?.description ?? '';
        const front = `---\n${stringifyYaml({ name: s.name, description: desc })}---\n\n`;
        writeAtomic(path.join(root, '.skills', s.name, 'SKILL.md'), `${front}${s.content}\n`);
        written.push(`.skills/${s.name}/SKILL.md`);
      }
      await syncIssues(c, project, root);
      if (o.json) return printJson({ project, worker: ctx.worker, context: '.arc/context.md', skills: written });
      say(`Bound ${root} to ${project} as ${ctx.worker.label}.`);
      say(`Wrote .arc/context.md${written.length ? `, ${written.join(', ')}` : ''} and .crm/issues.json.`);
    });

  const issue = program.command('issue').description('List, take, log and close issues of the project');
  issue
    .command('list')
    .description('List issues (newest first); refreshes .crm/issues.json')
    .option('--status <statuses>', 'one status or a comma list: open, in_progress, blocked, deferred, closed')
    .option('--json', 'print JSON')
    .action(async (o, cmd) => {
      const c = authed(cmd);
      const w = projectOf(cmd);
      const q = new URLSearchParams({ limit: '500' });
      if (o.status) q.set('status', o.status);
      const { issues } = await request(c, 'GET', `${issuesPath(w.project)}?${q}`);
      await syncIssues(c, w.project, w.root).catch(() => {});
      if (o.json) return printJson(issues);
      if (!issues.length) return say('No issues.');
      for (const i of issues)
        say(`#${i.id}  [${i.status}]  ${i.priority}  ${i.title}${i.assignee ? `  (${i.assignee})` : ''}`);
    });
  issue
    .command('take')
    .description('Take an issue: assignee and in_progress, an activity entry, and the session state')
    .argument('<id>', 'the issue number')
    .option('--as <assignee>', 'who takes it (default: the bound worker, else your e-mail)')
    .action(async (id, o, cmd) => {
      const c = authed(cmd);
      const w = projectOf(cmd);
      const n = issueId(id);
      const assignee = o.as ?? w.worker ?? c.auth.user?.email ?? 'cli';
      const mcp = `/api/mcp/issues/${encodeURIComponent(w.project)}/${n}`;
      const taken = await request(c, 'PUT', mcp, { body: { status: 'in_progress', assignee } });
      await request(c, 'POST', `${mcp}/log`, {
        body: { message: `Taken from the CLI on ${os.hostname()}`, author: assignee },
      });
      writeSession(w.root, {
        session_id: crypto.randomUUID(),
        started_at: new Date().toISOString(),
        issue_id: n,
        issue_title: taken.title,
        worker: w.worker,
      });
      await syncIssues(c, w.project, w.root).catch(() => {});
      say(`Took #${n} ${taken.title} as ${assignee}.`);
    });
  issue
    .command('log')
    .description('Add an activity entry to an issue')
    .argument('<id>', 'the issue number')
    .argument('<message...>', 'the entry')
    .action(async (id, words, _o, cmd) => {
      const c = authed(cmd);
      const w = projectOf(cmd);
      const n = issueId(id);
      const author = w.worker ?? c.auth.user?.email;
      await request(c, 'POST', `/api/mcp/issues/${encodeURIComponent(w.project)}/${n}/log`, {
        body: { message: words.join(' '), ...(author ? { author } : {}) },
      });
      say(`Logged on #${n}.`);
    });
  issue
    .command('close')
    .description('Close an issue (ends the session that took it, sending its summary)')
    .argument('<id>', 'the issue number')
    .option('-m, --message <text>', 'a closing note')
    .option('--transcript <file>', "upload this session's jsonl transcript with the summary")
    .action(async (id, o, cmd) => {
      const c = authed(cmd);
      const w = projectOf(cmd);
      const n = issueId(id);
      const mcp = `/api/mcp/issues/${encodeURIComponent(w.project)}/${n}`;
      if (o.message) await request(c, 'POST', `${mcp}/log`, { body: { message: o.message } });
      const closed = await request(c, 'PUT', mcp, { body: { status: 'closed' } });
      if (readSession(w.root)?.issue_id === n) await endSession(c, w, { transcript: o.transcript });
      await syncIssues(c, w.project, w.root).catch(() => {});
      say(`Closed #${n} ${closed.title}.`);
    });

  const session = program.command('session').description('The work session of this directory');
  session
    .command('end')
    .description("Send the session's summary (duration, issue, first prompt) and forget it")
    .option('--transcript <file>', "upload this session's jsonl transcript too")
    .action(async (o, cmd) => {
      const c = authed(cmd);
      const sent = await endSession(c, projectOf(cmd), { transcript: o.transcript });
      say(sent ? 'Session summary sent.' : 'No open session here.');
    });

  program
    .command('run')
    .description(
      'Run a command (e.g. your agent) as a session: on its exit the summary goes out, with --transcript the log too',
    )
    .argument('<command...>', 'the command and its arguments (put them after --)')
    .option('--transcript <file>', 'the jsonl log the command wrote, uploaded with the summary')
    .action(async (words, o, cmd) => {
      const c = authed(cmd);
      const w = projectOf(cmd);
      if (!readSession(w.root))
        writeSession(w.root, {
          session_id: crypto.randomUUID(),
          started_at: new Date().toISOString(),
          worker: w.worker,
        });
      const [bin, ...args] = words;
      const code = await new Promise((resolve) => {
        const child = spawn(bin, args, { stdio: 'inherit' });
        child.on('error', () => resolve(127));
        child.on('exit', (status, signal) => resolve(status ?? (signal ? 128 : 1)));
      });
      const transcript = o.transcript && fs.existsSync(o.transcript) ? o.transcript : undefined;
      await endSession(c, w, { transcript, progress: false });
      process.stderr.write(`arc: session summary sent (exit ${code}).\n`);
      if (code !== 0) throw new CliError(`${bin} exited with ${code}.`, /** @type {number} */ (code));
    });

  const transcript = program.command('transcript').description("Upload and list your sessions' transcripts");
  transcript
    .command('upload')
    .description('Upload a session transcript (jsonl), gzip-compressed, with a progress bar')
    .argument('<file>', 'the jsonl file')
    .option('--session <id>', 'the session id (default: the file name)')
    .option('--json', 'print JSON')
    .action(async (file, o, cmd) => {
      const c = authed(cmd);
      const w = projectOf(cmd);
      const r = await uploadTranscript(c, {
        project: w.project,
        mode: w.worker ?? 'cli',
        file,
        sessionId: o.session,
        deviceId: deviceId(),
        progress: !o.json && process.stderr.isTTY,
      });
      if (o.json) return printJson(r);
      say(`Uploaded session ${r.session_id} (${r.message_count} messages, ${r.size_bytes} bytes).`);
    });
  transcript
    .command('list')
    .description('Your transcripts of the project, newest first')
    .option('--json', 'print JSON')
    .action(async (o, cmd) => {
      const w = projectOf(cmd);
      const { transcripts } = await request(
        authed(cmd),
        'GET',
        `/api/cli/transcripts/${encodeURIComponent(w.project)}`,
      );
      if (o.json) return printJson(transcripts);
      for (const t of transcripts)
        say(`${t.session_id}  ${t.message_count} messages  ${t.updated_at}  ${t.first_prompt}`);
    });

  const hook = program.command('hook').description('Git hooks');
  hook
    .command('install')
    .description('Install the commit-message hook: refuses commits naming a closed or missing issue')
    .option('--force', "replace a commit-msg hook that is not arc's")
    .action((o) => say(`Installed ${installHook(process.cwd(), { force: o.force })}.`));

  return program;
}

/**
 * Run arc with `argv` (as `process.argv`).
 * @param {string[]} argv
 * @returns {Promise<number>} the exit code
 */
export async function main(argv) {
  /** @type {Promise<unknown>[]} */
  const beats = [];
  const program = buildProgram({ beat: (p) => beats.push(p) });
  let code = EXIT.ok;
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      code = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    } else if (err instanceof CliError) {
      process.stderr.write(`arc: ${err.message}\n`);
      code = err.exitCode;
      // This device's credential was revoked (the devices list) or has expired: forget it.
      if (err.errorCode === 'token_revoked' || err.errorCode === 'token_expired') removeAuth();
    } else {
      process.stderr.write(`arc: ${err instanceof Error ? err.message : String(err)}\n`);
      code = EXIT.error;
    }
  }
  await Promise.all(beats);
  return code;
}
