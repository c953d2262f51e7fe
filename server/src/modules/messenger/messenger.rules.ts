/**
 * Pure rules of the messenger workers: reading a command, splitting a long reply at the messenger's limit,
 * and offering a reply's closing numbered choices as inline buttons.
 */
import type { InlineButton } from '../../providers/messenger/messenger.ts';

/** The messenger's limit on one message's text, in characters. */
export const MESSAGE_LIMIT = 4096;
/** The messenger's limit on a button's `callback_data`, in bytes. */
export const CALLBACK_DATA_LIMIT = 64;

/** The commands a worker's bot knows. */
export const COMMANDS = ['start', 'help', 'status', 'issues'] as const;
export type Command = (typeof COMMANDS)[number];

/**
 * `/status`, `/start ABC123` or `/status@some_bot` → `{command, arg}`; undefined when the text is not a command
 * the bot knows (it is then a message to the worker).
 */
export function parseCommand(text: string): { command: Command; arg: string } | undefined {
  const m = /^\/([a-z]+)(?:@[A-Za-z0-9_]{1,64})?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m || !(COMMANDS as readonly string[]).includes(m[1])) return undefined;
  return { command: m[1] as Command, arg: (m[2] ?? '').trim() };
}

/**
 * Split `text` into messages of at most `limit` characters, cutting at the last paragraph break, else line
 * break, else space in the second half of the window, else hard at the limit (never inside a surrogate pair).
 * @returns at least one part; no part is empty unless `text` is.
 */
export function splitMessage(text: string, limit = MESSAGE_LIMIT): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const window = rest.slice(0, limit);
    let cut = -1;
    for (const sep of ['\n\n', '\n', ' ']) {
      const i = window.lastIndexOf(sep);
      if (i >= limit / 2) {
        cut = i;
        break;
      }
    }
    let next: number;
    if (cut < 0) {
      cut = limit;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut--; // keep a surrogate pair together
      next = cut;
    } else next = cut + 1;
    parts.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(next).replace(/^\n+/, '');
  }
  parts.push(rest);
  return parts.filter((p, i) => p.length > 0 || i === 0);
}

/** A press on an approval's button: `approve:<id>` / `deny:<id>` → the decision and the id; else undefined. */
export function approvalCallback(data: string): { decision: 'approve' | 'deny'; id: number } | undefined {
  const m = /^(approve|deny):([1-9][0-9]{0,9})$/.exec(data);
  if (!m || Number(m[2]) > 2 ** 31 - 1) return undefined;
  return { decision: m[1] as 'approve' | 'deny', id: Number(m[2]) };
}

/**
 * A reply denying an approval: `deny: reason`, `deny reason` or `deny` (any case) → the reason ('' when none,
 * at most 2000 characters); undefined when the text is something else.
 */
export function denyReply(text: string): string | undefined {
  const m = /^\s*deny\b\s*:?\s*([\s\S]*)$/i.exec(text);
  return m ? m[1].trim().slice(0, 2000) : undefined;
}

/** How a decided approval reads in the chat: `Approved by a@b.c.`, `Denied by a@b.c: reason`, `Expired: …`. */
export function approvalOutcome(a: { status: string; decided_by: string | null; reason: string | null }): string {
  const why = a.reason ? `: ${a.reason}` : '.';
  if (a.status === 'approved') return `Approved by ${a.decided_by ?? 'the owner'}${why}`;
  if (a.status === 'denied') return `Denied by ${a.decided_by ?? 'the owner'}${why}`;
  if (a.status === 'expired') return `Expired${why}`;
  return 'Waiting for a decision.';
}

/** `s` cut to at most `max` UTF-8 bytes, on a character boundary. */
function cutBytes(s: string, max: number): string {
  let out = '';
  let bytes = 0;
  for (const ch of s) {
    const b = Buffer.byteLength(ch);
    if (bytes + b > max) break;
    out += ch;
    bytes += b;
  }
  return out;
}

/**
 * The choices a reply ends with, as inline buttons: when its last lines are a numbered list of 2 to 8 short
 * items (`1. Yes`, `2) No`, at most 60 characters each) following a line that ends with `?` or `:`, each item
 * becomes a button (one per row) whose `callback_data` is the item's text (cut to 64 bytes). A press comes
 * back as a message with that text.
 * @returns the rows of buttons, or undefined when the reply offers no choice.
 */
export function choiceButtons(reply: string): InlineButton[][] | undefined {
  const lines = reply.trimEnd().split('\n');
  const items: string[] = [];
  let i = lines.length - 1;
  for (; i >= 0; i--) {
    const m = /^\s*\d{1,2}[.)]\s+(.{1,60})$/.exec(lines[i]);
    if (!m) break;
    items.unshift(m[1].trim());
  }
  if (items.length < 2 || items.length > 8) return undefined;
  while (i >= 0 && !lines[i].trim()) i--;
  if (i < 0 || !/[?:]\s*$/.test(lines[i])) return undefined;
  return items.map((text) => [{ text, callback_data: cutBytes(text, CALLBACK_DATA_LIMIT) }]);
}
