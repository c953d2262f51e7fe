/**
 * Approval rules (docs/ARCHITECTURE.md, Approvals): which tool calls of a run wait for a person. Pure rules, no I/O.
 */

/**
 * One rule. `tool`: a tool name, a prefix ending in `*`, or a class of tools (APPROVAL_CLASSES): `@commands`,
 * `@writes`, `@deletions`, `@outbound`, or `@tokens` with `above` (any call once the run has spent more than that many
 * tokens). `mode`: `always` asks for every call, `once_per_run` for the first (of the tool; of any tool for
 * `@tokens`), `never` exempts the tool from a broader rule (a class or a shorter prefix).
 */
export interface ApprovalRule {
  tool: string;
  mode: 'always' | 'once_per_run' | 'never';
  above?: number;
}

/** The classes a rule may name instead of a tool (docs/api.md, Approvals). */
export const APPROVAL_CLASSES = ['@commands', '@writes', '@deletions', '@outbound', '@tokens'] as const;

/** Built-in tools that change the project (files, wiki, issues). */
const WRITE_TOOLS = new Set([
  'write_file',
  'save_wiki_page',
  'create_issue',
  'update_issue',
  'take_issue',
  'log_issue',
]);

/**
 * The classes of a tool: `@commands` (run_command), `@writes` (the built-in tools that write files, the wiki or
 * issues), `@outbound` (an outside MCP server's tool, named `<server>__<tool>`), `@deletions`
 * (a tool whose name says it deletes: delete, remove, drop, destroy, purge).
 */
export function classesOf(tool: string): string[] {
  const out: string[] = [];
  if (tool === 'run_command') out.push('@commands');
  if (WRITE_TOOLS.has(tool)) out.push('@writes');
  if (tool.includes('__')) out.push('@outbound');
  if (/(^|[_-])(delete|remove|drop|destroy|purge|rm)([_-]|$)/i.test(tool.split('__').pop() ?? tool))
    out.push('@deletions');
  return out;
}

/** The refusal the model reads when an approval was denied or expired (the tool result, marked as an error). */
export function refusalText(a: { status: 'denied' | 'expired'; reason: string | null; tool: string }): string {
  if (a.status === 'expired')
    return `The call of ${a.tool} was refused: nobody approved it in time (${a.reason ?? 'the approval expired'}). Do not retry it.`;
  return `A person refused the call of ${a.tool}${a.reason ? `: ${a.reason}` : '.'} Do not retry it.`;
}

/** The well-formed rules of a stored value (anything else is ignored). */
export function asRules(v: unknown): ApprovalRule[] {
  if (!Array.isArray(v)) return [];
  return v.filter((r): r is ApprovalRule => {
    if (!r || typeof r !== 'object') return false;
    const { tool, mode, above } = r as ApprovalRule;
    if (typeof tool !== 'string' || !tool.length) return false;
    if (mode !== 'always' && mode !== 'once_per_run' && mode !== 'never') return false;
    if (tool === '@tokens') return Number.isInteger(above) && above! >= 0 && mode !== 'never';
    return true;
  });
}

/**
 * What is wrong with rules a user sends, beyond their schema: `@tokens` needs `above` and cannot be `never`; `above`
 * belongs to `@tokens` only. @returns the problem in a sentence, or null.
 */
export function rulesProblem(rules: ApprovalRule[]): string | null {
  for (const r of rules) {
    if (r.tool === '@tokens' && r.above === undefined)
      return 'A @tokens rule needs `above`, the tokens a run may spend.';
    if (r.tool === '@tokens' && r.mode === 'never') return 'A @tokens rule asks always or once per run, not never.';
    if (r.tool !== '@tokens' && r.above !== undefined) return 'Only a @tokens rule takes `above`.';
  }
  return null;
}

/** The rules as stored: `{tool, mode}`, with `above` for `@tokens`. */
export function storedRules(rules: ApprovalRule[]): ApprovalRule[] {
  return rules.map((r) =>
    r.tool === '@tokens' ? { tool: r.tool, mode: r.mode, above: r.above } : { tool: r.tool, mode: r.mode },
  );
}

/**
 * The rules that apply to a worker's runs: the worker's own when it has any, else the project's default (its
 * config's `approvals`).
 */
export function effectiveRules(worker: unknown, projectConfig: Record<string, unknown>): ApprovalRule[] {
  const own = asRules(worker);
  return own.length ? own : asRules(projectConfig.approvals);
}

/** How closely a rule names `tool`: an exact name, then the longer prefix, then a class; -1 when it does not. */
function specificity(r: ApprovalRule, tool: string): number {
  if (r.tool.startsWith('@')) return r.tool !== '@tokens' && classesOf(tool).includes(r.tool) ? 0 : -1;
  if (r.tool.endsWith('*')) {
    const prefix = r.tool.slice(0, -1);
    return tool.startsWith(prefix) ? 1 + prefix.length : -1;
  }
  return r.tool === tool ? Infinity : -1;
}

const STRICTNESS = { always: 2, once_per_run: 1, never: 0 } as const;

/**
 * The rule that makes a call of `tool` wait, or null. The rules naming the tool decide first: an exact name, else the
 * longest matching prefix (`github__*` matches `github__merge`), else a class it belongs to; among rules as close,
 * the stricter (`always`, `once_per_run`, `never`); a `never` that decides lets the call run. When none asks, a
 * `@tokens` rule asks once the run has spent more than its `above` tokens (`spentTokens`).
 */
export function ruleFor(rules: ApprovalRule[], tool: string, spentTokens = 0): ApprovalRule | null {
  let best: ApprovalRule | null = null;
  let bestLen = -1;
  for (const r of rules) {
    const len = specificity(r, tool);
    if (len < 0) continue;
    if (len > bestLen || (len === bestLen && STRICTNESS[r.mode] > STRICTNESS[best!.mode])) {
      best = r;
      bestLen = len;
    }
  }
  if (best && best.mode !== 'never') return best;
  let spend: ApprovalRule | null = null;
  for (const r of rules)
    if (r.tool === '@tokens' && r.mode !== 'never' && spentTokens > (r.above ?? Infinity))
      if (!spend || STRICTNESS[r.mode] > STRICTNESS[spend.mode]) spend = r;
  return spend;
}
