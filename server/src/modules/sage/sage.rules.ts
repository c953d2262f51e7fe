/**
 * Pure rules of skill scouting: matching a project's texts against skills' tags (quick scan), reading the
 * model's JSON answers, and the benchmark rubric.
 */

/** A skill as scouting sees it (catalog or published). */
export interface ScoutSkill {
  skill_id: number | string;
  name: string;
  description: string;
  category: string;
  tags: string[];
}

/** One text of the project that may show a need (an open issue, a wiki page). */
export interface ProjectText {
  /** What the finding cites: `#12 Flaky login test`, `wiki: Deploy guide`. */
  label: string;
  text: string;
}

export interface QuickFinding {
  skill_id: number | string;
  name: string;
  category: string;
  /** Project texts that mention the skill's tags, at most 5 cited. */
  evidence: string[];
  /** How many project texts matched. */
  matches: number;
  reason: string;
}

const normalize = (s: string) => ` ${s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ')} `;

/**
 * Which skills the project's texts call for: a skill is found when at least one text mentions one of its tags
 * (whole words; a tag of several words as a phrase) and the project does not have a skill of that name yet.
 * @returns findings, most matches first (ties by name), at most `limit`.
 */
export function quickScan(
  skills: ScoutSkill[],
  texts: ProjectText[],
  installed: Set<string>,
  limit = 10,
): QuickFinding[] {
  const norm = texts.map((t) => ({ label: t.label, text: normalize(`${t.label} ${t.text}`) }));
  const out: QuickFinding[] = [];
  for (const s of skills) {
    if (installed.has(s.name) || !s.tags.length) continue;
    const tags = s.tags.map((t) => normalize(t)).filter((t) => t.trim());
    const hits = norm.filter((t) => tags.some((tag) => t.text.includes(tag)));
    if (!hits.length) continue;
    const words = [...new Set(s.tags.filter((tag) => hits.some((h) => h.text.includes(normalize(tag)))))].slice(0, 4);
    out.push({
      skill_id: s.skill_id,
      name: s.name,
      category: s.category,
      evidence: hits.slice(0, 5).map((h) => h.label),
      matches: hits.length,
      reason: `${hits.length} of the project's issues and pages mention ${words.join(', ')}; no worker has ${s.name}.`,
    });
  }
  return out.sort((a, b) => b.matches - a.matches || a.name.localeCompare(b.name)).slice(0, limit);
}

/**
 * The first JSON object in a model's answer (bare, or inside a ```json fence).
 * @returns the parsed object, or undefined when there is none.
 */
export function jsonOf(answer: string): Record<string, unknown> | undefined {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(answer);
  const candidates = [fenced?.[1], answer];
  for (const c of candidates) {
    if (!c) continue;
    const start = c.indexOf('{');
    const end = c.lastIndexOf('}');
    if (start < 0 || end <= start) continue;
    try {
      const v = JSON.parse(c.slice(start, end + 1));
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      /* try the next */
    }
  }
  return undefined;
}

/** The benchmark rubric: each criterion scored 0–5 by the judge. */
export const RUBRIC = {
  follows_skill: 'the answer applies the skill’s method and answer format',
  correctness: 'what it says is right and fits the task',
  completeness: 'it covers what the task needs, nothing important missing',
  clarity: 'it is clear, concrete and easy to act on',
} as const;
export type RubricScores = Record<keyof typeof RUBRIC, number>;

/**
 * Read the judge's scores: each criterion an integer 0–5 (numbers clamped and rounded; a missing or non-numeric
 * one counts 0). @returns the scores and their mean scaled to 0–1 (two decimals).
 */
export function rubricScore(raw: Record<string, unknown> | undefined): { scores: RubricScores; score: number } {
  const scores = {} as RubricScores;
  let sum = 0;
  for (const k of Object.keys(RUBRIC) as Array<keyof typeof RUBRIC>) {
    const v = Number(raw?.[k]);
    const n = Number.isFinite(v) ? Math.max(0, Math.min(5, Math.round(v))) : 0;
    scores[k] = n;
    sum += n;
  }
  const count = Object.keys(RUBRIC).length;
  return { scores, score: Math.round((sum / (count * 5)) * 100) / 100 };
}

/** A 1–5 score from the model (clamped, rounded), or null when it gave none. */
export function fivePoint(v: unknown): number | null {
  const n = Number(v);
  return Number.isFinite(n) ? Math.max(1, Math.min(5, Math.round(n))) : null;
}
