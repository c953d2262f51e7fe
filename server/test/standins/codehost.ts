/**
 * A stand-in of the code host, in GitHub's shape, on 127.0.0.1 over http: the OAuth app pages
 * (`/login/oauth/authorize` approves at once for the configured user and redirects back with `code` and `state`;
 * `/login/oauth/access_token` checks the client, the code, the redirect address and the PKCE verifier and answers
 * `{access_token, token_type, scope}`, or GitHub's 200 `{error}`), the API under `/api` (`GET /api/user`,
 * `DELETE /api/applications/{client_id}/token` revoking a token), and private git repositories over smart HTTP
 * (`git http-backend`), readable only with `Authorization: Basic` carrying a live token as the password.
 */
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

const GIT_ENV = {
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
};

/**
 * Start the stand-in.
 * @param client the OAuth app it knows (`secret` may be changed later through the returned object)
 * @param user who approves the authorization (login and numeric id)
 */
export async function startCodehostStandIn(client: { id: string; secret: string }, user = { login: 'octo', id: 4242 }) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'codehost-'));
  const codes = new Map<string, { challenge: string; redirect: string }>();
  const tokens = new Set<string>();
  const revoked: string[] = [];
  const gitRequests: { path: string; authorized: boolean }[] = [];

  const body = (req: IncomingMessage) =>
    new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks)));
    });
  const params = (raw: Buffer, type = ''): Record<string, string> =>
    type.includes('json')
      ? JSON.parse(raw.toString() || '{}')
      : Object.fromEntries(new URLSearchParams(raw.toString()));
  const basic = (req: IncomingMessage): [string, string] | undefined => {
    const m = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    if (!m) return undefined;
    const s = Buffer.from(m[1], 'base64').toString();
    const i = s.indexOf(':');
    return [s.slice(0, i), s.slice(i + 1)];
  };

  const server = createServer(async (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const json = (status: number, b: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(b));
    if (u.pathname === '/login/oauth/authorize') {
      if (u.searchParams.get('client_id') !== client.id) return json(404, { message: 'Not Found' });
      const redirect = u.searchParams.get('redirect_uri') ?? '';
      const code = crypto.randomBytes(10).toString('hex');
      codes.set(code, { challenge: u.searchParams.get('code_challenge') ?? '', redirect });
      const back = new URL(redirect);
      back.searchParams.set('code', code);
      back.searchParams.set('state', u.searchParams.get('state') ?? '');
      return res.writeHead(302, { location: back.href }).end();
    }
    if (u.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      const p = params(await body(req), req.headers['content-type']);
      const pending = codes.get(p.code);
      codes.delete(p.code);
      if (p.client_id !== client.id || p.client_secret !== client.secret)
        return json(200, { error: 'incorrect_client_credentials' });
      const verifierOk =
        !!pending &&
        !!p.code_verifier &&
        crypto.createHash('sha256').update(p.code_verifier).digest('base64url') === pending.challenge;
      if (!pending || pending.redirect !== p.redirect_uri || !verifierOk)
        return json(200, { error: 'bad_verification_code' });
      const token = `gho_${crypto.randomBytes(16).toString('hex')}`;
      tokens.add(token);
      return json(200, { access_token: token, token_type: 'bearer', scope: 'repo,read:user' });
    }
    if (u.pathname === '/api/user') {
      const t = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      return tokens.has(t) ? json(200, { login: user.login, id: user.id }) : json(401, { message: 'Bad credentials' });
    }
    if (u.pathname === `/api/applications/${client.id}/token` && req.method === 'DELETE') {
      const creds = basic(req);
      if (!creds || creds[0] !== client.id || creds[1] !== client.secret) return json(401, { message: 'Bad creds' });
      const { access_token } = params(await body(req), 'json');
      if (!tokens.delete(access_token)) return json(404, { message: 'Not Found' });
      revoked.push(access_token);
      return res.writeHead(204).end();
    }
    if (/^\/[^/]+\/[^/]+\.git\//.test(u.pathname)) {
      const creds = basic(req);
      const authorized = !!creds && tokens.has(creds[1]);
      gitRequests.push({ path: u.pathname, authorized });
      if (!authorized) return res.writeHead(401, { 'www-authenticate': 'Basic realm="code host"' }).end();
      // git's smart HTTP through the CGI program `git http-backend`.
      const cgi = spawn('git', ['http-backend'], {
        env: {
          ...process.env,
          GIT_PROJECT_ROOT: root,
          GIT_HTTP_EXPORT_ALL: '1',
          PATH_INFO: u.pathname,
          QUERY_STRING: u.search.slice(1),
          REQUEST_METHOD: req.method ?? 'GET',
          CONTENT_TYPE: req.headers['content-type'] ?? '',
          HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
          GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
          REMOTE_USER: creds![0],
          REMOTE_ADDR: '127.0.0.1',
        },
      });
      req.pipe(cgi.stdin);
      let head = Buffer.alloc(0);
      let headDone = false;
      cgi.stdout.on('data', (c: Buffer) => {
        if (headDone) return void res.write(c);
        head = Buffer.concat([head, c]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        headDone = true;
        const headers: Record<string, string> = {};
        let status = 200;
        for (const line of head.subarray(0, end).toString().split('\r\n')) {
          const i = line.indexOf(':');
          const [k, v] = [line.slice(0, i).trim(), line.slice(i + 1).trim()];
          if (k.toLowerCase() === 'status') status = Number(v.split(' ')[0]);
          else headers[k] = v;
        }
        res.writeHead(status, headers);
        res.write(head.subarray(end + 4));
      });
      cgi.stdout.on('end', () => res.end());
      return;
    }
    json(404, { message: 'Not Found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    /** The OAuth pages' root and the clone URLs' origin (`CODEHOST_OAUTH_URL`). */
    url,
    /** The API root (`CODEHOST_API_URL`). */
    apiUrl: `${url}/api`,
    client,
    /** Tokens issued and not revoked. */
    tokens,
    revoked,
    gitRequests,
    /**
     * A private repository `owner/name` with one commit of `files`. @returns its clone URL
     */
    createRepo(owner: string, name: string, files: Record<string, string>): string {
      const work = fs.mkdtempSync(path.join(os.tmpdir(), 'codehost-work-'));
      const git = (...a: string[]) => execFileSync('git', a, { cwd: work, env: { ...process.env, ...GIT_ENV } });
      git('init', '-q');
      for (const [f, content] of Object.entries(files)) fs.writeFileSync(path.join(work, f), content);
      git('add', '.');
      git('commit', '-qm', 'first');
      fs.mkdirSync(path.join(root, owner), { recursive: true });
      execFileSync('git', ['clone', '-q', '--bare', work, path.join(root, owner, `${name}.git`)]);
      fs.rmSync(work, { recursive: true, force: true });
      return `${url}/${owner}/${name}.git`;
    },
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
