/**
 * `npm run lint` (after Prettier, ESLint and dpdm): the seams between areas, checked on every run.
 *
 *  1. SQL lives in repositories: under `server/src/modules/<area>/`, only `*.repo.ts` files name tables, and
 *     only tables their area owns (OWNERS below). A service reaches another area's data through that area's
 *     service or repository, never its tables. Outside the modules, the few owners of shared tables are listed
 *     in SHARED.
 *     Reporting areas (READERS) may read any table in their repository, and write none.
 *  2. Nothing imports `app.ts` or a `*.routes.ts` file except the entry points (ENTRY).
 *
 * Prints one line per violation and exits 1 when there is any.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Which area owns each table. */
const OWNERS: Record<string, string[]> = {
  accounts: [
    'users',
    'invites',
    'signups',
    'email_tokens',
    'beta_waitlist',
    'account_settings',
    'auth_events',
    'access_tokens',
    'user_identities',
  ],
  codehost: ['codehost_links'],
  usage: ['token_usage', 'trials', 'token_reservations', 'storage_usage'],
  projects: ['projects', 'active_issue_bindings'],
  workers: ['workers', 'worker_templates'],
  onboarding: ['onboarding_progress', 'onboarding_videos'],
  issues: ['issues', 'issue_counters', 'issue_activity'],
  skills: ['skills', 'skill_versions', 'skill_updates'],
  wiki: ['wiki_pages'],
  pins: ['pins', 'learnings'],
  knowledge: ['knowledge_documents', 'knowledge_chunks', 'knowledge_chunk_counts'],
  help: ['help_messages', 'help_usage'],
  // Messages and the runs that answer them are one area (a message is stored with its runs in one transaction).
  runtime: ['agent_runs', 'chat_messages'],
  chat: ['chat_active_roles'],
  billing: ['billing_accounts', 'payprov_invoices', 'payprov_events'],
  platform: ['platform_audit'],
  feedback: ['feedback_reports', 'translation_feedback'],
  cloud: ['cloud_containers', 'cloud_waitlist', 'cloud_log_lines', 'cloud_leases'],
  cli: ['cli_devices', 'cli_links', 'cli_transcripts'],
  privacy: ['export_history', 'retention_runs'],
  // issue 18
  messenger: ['messenger_pollers', 'messenger_updates', 'messenger_replies', 'messenger_link_codes'],
  sage: ['sage_results', 'sage_catalog_state'],
  notes: ['notes', 'note_sources', 'note_chat_messages', 'note_issue_links', 'note_uploads'],
  // Meeting transcripts and voice dictation.
  transcripts: ['transcripts', 'transcript_lease'],
  voice: ['voice_usage', 'voice_jobs'],
  // The processes of the service and their leases (crash recovery).
  instances: ['instances'],
  // The MCP server and workers' outside MCP servers.
  mcp: ['mcp_servers'],
  // Rate-limit counters shared by the instances.
  throttle: ['rate_limit_hits'],
};

/**
 * Reporting areas whose repository may read (never write) any area's tables, for figures computed in SQL
 * across areas (admin analytics).
 */
const READERS = ['analytics'];

/** Files outside the modules that own (or, for the access rules and the auth hook, read) shared tables. */
const SHARED: Record<string, string[]> = {
  'server/src/lib/activity.ts': ['activity_log'],
  'server/src/providers/mail/mail.ts': ['outbox'],
  'server/src/secrets/secret-store.ts': ['secrets'],
  // The access rules resolve a project for a caller (canAccessProject) and the owner acting for a run.
  'server/src/access/access.ts': ['projects', 'users'],
  // The auth hook reads the caller's user row on every request.
  'server/src/http/auth.ts': ['users'],
};

/** Files that may import app.ts or route files. */
const ENTRY = [
  'server/src/main.ts',
  'server/src/offline-app.ts', // builds the app for routes-cli.ts and openapi-cli.ts
  'server/src/modules/routes.ts',
  'server/src/app.ts',
];

const root = path.resolve(import.meta.dirname, '..');
const tableOwner = new Map<string, string>();
for (const [area, tables] of Object.entries(OWNERS)) for (const t of tables) tableOwner.set(t, area);
const allTables = new Set([...tableOwner.keys(), ...Object.values(SHARED).flat()]);

function walk(dir: string, out: string[] = []): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

const stripComments = (s: string) => s.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

/** Tables a file names: Kysely builders (`selectFrom('x')`, `leftJoin('x as y')`, …) and raw `sql\`…\`` text. */
function tablesOf(text: string): Set<string> {
  const found = new Set<string>();
  const code = stripComments(text);
  for (const m of code.matchAll(
    /\b(?:selectFrom|insertInto|updateTable|deleteFrom|innerJoin|leftJoin|rightJoin|fullJoin|replaceInto|mergeInto)\(\s*['"]([a-z_]+)/g,
  ))
    if (allTables.has(m[1])) found.add(m[1]);
  for (const m of code.matchAll(/\bsql(?:<[^`]*?>)?`([^`]*)`/g)) {
    for (const k of m[1].matchAll(/\b(?:from|join|into|update|table|exists)\s+([a-z_]+)/gi))
      if (allTables.has(k[1])) found.add(k[1]);
  }
  return found;
}

const problems: string[] = [];
const files = walk(path.join(root, 'server/src')).filter((f) => !f.endsWith('.test.ts'));
for (const abs of files) {
  const rel = path.relative(root, abs).split(path.sep).join('/');
  if (rel.startsWith('server/src/db/')) continue; // migrations and table types
  const text = fs.readFileSync(abs, 'utf8');
  const tables = tablesOf(text);
  const m = /^server\/src\/modules\/([^/]+)\//.exec(rel);
  if (m) {
    const area = m[1];
    const isRepo = rel.endsWith('.repo.ts');
    const reader = READERS.includes(area);
    if (reader && isRepo && /\b(insertInto|updateTable|deleteFrom)\(/.test(stripComments(text)))
      problems.push(`${rel}: a reporting repository writes; it may only read`);
    for (const t of tables) {
      if (!isRepo) problems.push(`${rel}: names table ${t}; SQL belongs in a repository (${area}.repo.ts)`);
      else if (tableOwner.get(t) !== area && !reader)
        problems.push(`${rel}: names table ${t} of ${tableOwner.get(t) ?? 'shared infrastructure'}; ask that area`);
    }
  } else {
    const allowed = SHARED[rel] ?? [];
    for (const t of tables)
      if (!allowed.includes(t)) problems.push(`${rel}: names table ${t}, which this file does not own`);
  }
  if (!ENTRY.includes(rel)) {
    for (const imp of text.matchAll(/from\s+['"]([^'"]+)['"]/g)) {
      const spec = imp[1];
      if (/(^|\/)app\.ts$/.test(spec) || /\.routes\.ts$/.test(spec))
        problems.push(`${rel}: imports ${spec}; only the entry points import app.ts or route files`);
    }
  }
}

if (problems.length) {
  for (const p of problems) console.log(p);
  console.log(`\n${problems.length} seam violation(s)`);
  process.exit(1);
}
console.log(`seams: ${files.length} files checked, SQL only in repositories of the owning area`);
