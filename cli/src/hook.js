/**
 * The commit-message hook of `arc hook install`: a commit whose message names an issue (`#12`) that is closed,
 * or missing from the local issues file (`.crm/issues.json` at the top of the repository, written by arc), is
 * rejected. When that file or its interpreter (node, or `$ARC_HOOK_NODE`) is unavailable the commit is allowed:
 * the hook never blocks work because of itself.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CliError, EXIT } from './api.js';

/** The line that marks a hook as arc's own (an existing foreign hook is kept unless `--force`). */
export const HOOK_MARKER = '# arc commit-msg hook';

/** The shell part: finds the interpreter and the issues file, else allows the commit. */
export const HOOK_SH = `#!/bin/sh
${HOOK_MARKER} (installed by \`arc hook install\`; reinstall to update).
# Rejects a commit naming a closed or missing issue of .crm/issues.json; allows it when that file or node is unavailable.
NODE="\${ARC_HOOK_NODE:-node}"
command -v "$NODE" >/dev/null 2>&1 || exit 0
top=$(git rev-parse --show-toplevel 2>/dev/null) || exit 0
issues="$top/.crm/issues.json"
[ -f "$issues" ] || exit 0
"$NODE" "$(dirname "$0")/arc-commit-msg.cjs" "$1" "$issues"
[ $? -eq 3 ] && exit 1
exit 0
`;

/** The interpreter part (CommonJS, no dependencies): exit 3 rejects, anything else allows. */
export const HOOK_JS = `// ${HOOK_MARKER.slice(2)}: the check itself (exit 3 rejects the commit).
'use strict';
const fs = require('fs');
const [msgFile, issuesFile] = process.argv.slice(2);
let data;
try {
  data = JSON.parse(fs.readFileSync(issuesFile, 'utf8'));
} catch {
  process.exit(0);
}
if (!data || !Array.isArray(data.issues)) process.exit(0);
const message = fs
  .readFileSync(msgFile, 'utf8')
  .split('\\n')
  .filter((l) => !/^#(\\s|$)/.test(l))
  .join('\\n');
const refs = [...new Set([...message.matchAll(/(?:^|[^\\w&#])#(\\d{1,9})\\b/g)].map((m) => Number(m[1])))];
const byId = new Map(data.issues.map((i) => [Number(i.id), i]));
const problems = [];
for (const id of refs) {
  const issue = byId.get(id);
  if (!issue) problems.push('#' + id + ' does not exist');
  else if (issue.status === 'closed') problems.push('#' + id + ' is closed');
}
if (problems.length) {
  console.error('arc: commit refused: ' + problems.join('; ') + ' (issues of ' + (data.project || 'this project') + ').');
  console.error('arc: name an open issue, run \`arc issue list\` to refresh the issues file, or commit with --no-verify.');
  process.exit(3);
}
`;

/**
 * Install the hook in the git repository around `cwd` (its hooks directory, `core.hooksPath` respected).
 * @param {string} cwd
 * @param {{ force?: boolean }} [opts]
 * @returns {string} the hook's path
 * @throws {CliError} outside a git repository, or when another commit-msg hook exists (without `force`)
 */
export function installHook(cwd, opts = {}) {
  let hooksDir;
  try {
    hooksDir = execFileSync('git', ['rev-parse', '--git-path', 'hooks'], { cwd, encoding: 'utf8' }).trim();
  } catch {
    throw new CliError('Not inside a git repository.', EXIT.usage);
  }
  hooksDir = path.resolve(cwd, hooksDir);
  fs.mkdirSync(hooksDir, { recursive: true });
  const hook = path.join(hooksDir, 'commit-msg');
  if (fs.existsSync(hook) && !fs.readFileSync(hook, 'utf8').includes(HOOK_MARKER) && !opts.force)
    throw new CliError(`${hook} exists and is not arc's; pass --force to replace it.`, EXIT.error);
  fs.writeFileSync(path.join(hooksDir, 'arc-commit-msg.cjs'), HOOK_JS, { mode: 0o644 });
  fs.writeFileSync(hook, HOOK_SH, { mode: 0o755 });
  fs.chmodSync(hook, 0o755);
  return hook;
}
