/**
 * Where arc keeps its state. The user's config directory (`$ARC_CONFIG_DIR`, else `$XDG_CONFIG_HOME/arc`, else
 * `~/.config/arc`, mode 0700) holds `auth.json` (server, token, user; mode 0600) and `device.json` (a stable
 * device id). A working directory holds `.arc/project.json` (the project and worker it is bound to, written by
 * `arc init`), `.arc/session.json` (the session of `arc issue take`) and `.crm/issues.json` (the issues the
 * commit-message hook reads).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The user's config directory of arc. */
export function configDir() {
  if (process.env.ARC_CONFIG_DIR) return path.resolve(process.env.ARC_CONFIG_DIR);
  const base = process.env.XDG_CONFIG_HOME
    ? path.resolve(process.env.XDG_CONFIG_HOME)
    : path.join(os.homedir(), '.config');
  return path.join(base, 'arc');
}

/**
 * Write a file atomically (temporary file in the same directory, then rename) with the given mode.
 * @param {string} file
 * @param {string} text
 * @param {number} mode e.g. 0o600
 */
export function writeAtomic(file, text, mode = 0o644) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, text, { mode });
  fs.chmodSync(tmp, mode);
  fs.renameSync(tmp, file);
}

/** @param {string} file @returns {any} the parsed JSON, or undefined when absent or unreadable */
export function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * @typedef {{ server: string, token: string, user?: { id: number, email: string, name?: string | null } }} Auth
 */

/** @returns {Auth | undefined} the stored login */
export function readAuth() {
  const a = readJson(path.join(configDir(), 'auth.json'));
  return a && typeof a.token === 'string' && typeof a.server === 'string' ? a : undefined;
}

/** Store the login: token file mode 0600 in a 0700 directory. @param {Auth} auth */
export function writeAuth(auth) {
  const dir = configDir();
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeAtomic(path.join(dir, 'auth.json'), `${JSON.stringify(auth, null, 2)}\n`, 0o600);
}

/** Forget the login. @returns {boolean} whether there was one */
export function removeAuth() {
  const file = path.join(configDir(), 'auth.json');
  if (!fs.existsSync(file)) return false;
  fs.rmSync(file, { force: true });
  return true;
}

/** The stable id of this device (created once). @returns {string} */
export function deviceId() {
  const file = path.join(configDir(), 'device.json');
  const d = readJson(file);
  if (d && typeof d.device_id === 'string') return d.device_id;
  const id = crypto.randomUUID();
  fs.mkdirSync(configDir(), { recursive: true, mode: 0o700 });
  writeAtomic(file, `${JSON.stringify({ device_id: id })}\n`, 0o600);
  return id;
}

/**
 * The nearest directory from `start` upwards holding `.arc/project.json`, with its content.
 * @param {string} start
 * @returns {{ root: string, project: string, worker: string | null } | undefined}
 */
export function findProject(start = process.cwd()) {
  let dir = path.resolve(start);
  for (;;) {
    const p = readJson(path.join(dir, '.arc', 'project.json'));
    if (p && typeof p.project === 'string') return { root: dir, project: p.project, worker: p.worker ?? null };
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** @param {string} root @param {{ project: string, worker: string | null }} binding */
export function writeProject(root, binding) {
  writeAtomic(path.join(root, '.arc', 'project.json'), `${JSON.stringify(binding, null, 2)}\n`);
}

/**
 * @typedef {{ session_id: string, started_at: string, issue_id?: number, issue_title?: string, worker?: string | null }} Session
 */

/** @param {string} root @returns {Session | undefined} */
export function readSession(root) {
  const s = readJson(path.join(root, '.arc', 'session.json'));
  return s && typeof s.session_id === 'string' ? s : undefined;
}

/** @param {string} root @param {Session} session */
export function writeSession(root, session) {
  writeAtomic(path.join(root, '.arc', 'session.json'), `${JSON.stringify(session, null, 2)}\n`);
}

/** @param {string} root */
export function clearSession(root) {
  fs.rmSync(path.join(root, '.arc', 'session.json'), { force: true });
}
