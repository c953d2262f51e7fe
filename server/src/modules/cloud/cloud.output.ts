/**
 * Output of the cloud containers (docs/ARCHITECTURE.md, Cloud containers): pty bytes split into clean lines, and
 * each user's lines stored and published within the user's output budget (docs/configuration.md, Cloud sandbox
 * caps).
 */
import type { Bus } from '../../lib/bus.ts';
import type { CloudRepo } from './cloud.repo.ts';
import { lineBudget } from './cloud.rules.ts';

/** A stored log line is cut to this many characters (a bus message must stay small). */
const MAX_LINE = 2000;

/** Strip terminal escape sequences and carriage returns from a line of pty output. */
export function cleanLine(s: string): string {
  return (
    (
      s
        // CSI sequences, OSC sequences (to BEL or ST), other two-character escapes.
        .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '')
        .replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, '')
        .replace(/\x1b[@-_]/g, '')
        // a line redrawn with \r keeps what was written last
        .split('\r')
        .filter((p) => p.length)
        .pop() ?? ''
    )
      .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '')
      .slice(0, MAX_LINE)
  );
}

/**
 * Split a byte stream into lines (UTF-8 across chunk boundaries kept whole). `push` returns the complete lines
 * so far; `flush` the rest.
 */
export function lineSplitter() {
  const decoder = new TextDecoder('utf-8');
  let rest = '';
  return {
    push(chunk: Buffer): string[] {
      rest += decoder.decode(chunk, { stream: true });
      const parts = rest.split('\n');
      rest = parts.pop() ?? '';
      // A runaway line without a newline is cut into pieces.
      while (rest.length > MAX_LINE * 4) {
        parts.push(rest.slice(0, MAX_LINE));
        rest = rest.slice(MAX_LINE * 4);
      }
      return parts;
    },
    flush(): string[] {
      const last = rest + decoder.decode();
      rest = '';
      return last ? [last] : [];
    },
  };
}

/**
 * The recorder of container output lines: `record(userId, lines)` stores the lines of user `userId`'s container and
 * publishes them (`cloud.log` on the bus) to every instance's log streams, within the user's output budget of
 * `perSecond` lines a second (bursts of ten seconds' worth): lines over it are dropped, and the next stored batch
 * starts with one line saying how many; the user's stored lines are trimmed to the newest `keepLines`.
 * `drop(userId, n)` counts `n` lines dropped before they reached `record` (a full terminal buffer), so the notice
 * counts them too.
 */
export function outputRecorder(deps: {
  repo: Pick<CloudRepo, 'appendLines' | 'trimLines'>;
  bus: Pick<Bus, 'publish'>;
  perSecond: number;
  keepLines: number;
}): { record(userId: number, lines: string[]): Promise<void>; drop(userId: number, n: number): void } {
  const { repo, bus, perSecond, keepLines } = deps;
  /** Each user's output budget on this instance (forgotten once full again). */
  const budgets = new Map<number, ReturnType<typeof lineBudget>>();
  const budgetOf = (userId: number) => {
    let b = budgets.get(userId);
    if (!b) budgets.set(userId, (b = lineBudget(perSecond, perSecond * 10)));
    return b;
  };
  /** Lines stored per user since the table was last trimmed to `keepLines`. */
  const sinceTrim = new Map<number, number>();

  const record = async (userId: number, lines: string[]) => {
    const clean = lines.map(cleanLine).filter((l) => l.trim().length > 0);
    const budget = budgetOf(userId);
    const admitted = clean.slice(0, budget.take(clean.length));
    if (!admitted.length) return;
    const dropped = budget.dropped();
    // The notice takes the place of the batch's last line, so the budget holds.
    if (dropped) admitted.pop();
    if (dropped) admitted.unshift(`[${dropped} lines of output not logged: over ${perSecond} lines a second]`);
    const rows = await repo.appendLines(userId, admitted);
    for (const r of rows) await bus.publish('cloud.log', { user: userId, id: r.id, line: r.line });
    const n = (sinceTrim.get(userId) ?? 0) + rows.length;
    // Trimmed every tenth of the cap, so the table holds at most 1.1 × keepLines lines of a user.
    if (n >= Math.max(1, Math.floor(keepLines / 10))) {
      sinceTrim.delete(userId);
      await repo.trimLines(userId, keepLines);
    } else sinceTrim.set(userId, n);
    for (const [id, b] of budgets) if (b.full()) budgets.delete(id);
  };
  return { record, drop: (userId, n) => budgetOf(userId).drop(n) };
}
