/**
 * Approval rules (docs/ARCHITECTURE.md, Approvals): which tool calls of a run wait for a person. Pure rules, no I/O.
 */

/** One rule: a tool name, or a prefix ending in `*`; `always` asks for every call, `once_per_run` for the first. */
export interface ApprovalRule {
  tool: string;
  mode: 'always' | 'once_per_run';
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
  return v.filter(
    (r): r is ApprovalRule =>
      !!r &&
      typeof r === 'object' &&
      typeof (r as ApprovalRule).tool === 'string' &&
      (r as ApprovalRule).tool.length > 0 &&
      ((r as ApprovalRule).mode === 'always' || (r as ApprovalRule).mode === 'once_per_run'),
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

/**
 * The rule that makes a call of `tool` wait, or null: an exact name first, else the longest matching prefix
 * (`github__*` matches `github__merge`); `always` wins over `once_per_run` among rules of the same length.
 */
export function ruleFor(rules: ApprovalRule[], tool: string): ApprovalRule | null {
  let best: ApprovalRule | null = null;
  let bestLen = -1;
  for (const r of rules) {
    const prefix = r.tool.endsWith('*') ? r.tool.slice(0, -1) : null;
    const len = prefix === null ? (r.tool === tool ? Infinity : -1) : tool.startsWith(prefix) ? prefix.length : -1;
    if (len < 0) continue;
    if (len > bestLen || (len === bestLen && r.mode === 'always')) {
      best = r;
      bestLen = len;
    }
  }
  return best;
}
