/** API shapes of marketplace scouting (`/sage/*`), with examples for the OpenAPI document. */
import { Type } from 'typebox';
import { DateTime, Nullable, ProjectName } from '../../http/schemas.ts';
import { Skill } from '../skills/skills.schemas.ts';

export const SkillId = Type.Union(
  [
    Type.Integer({ minimum: 1, maximum: 2147483647, description: 'a published (global) skill: its id' }),
    Type.String({
      pattern: '^catalog:[a-z0-9][a-z0-9-]{0,63}$',
      description: 'a skill the service ships: catalog:<name>',
    }),
  ],
  { description: 'a skill of the catalog: a published skill’s id, or catalog:<name> for a shipped one' },
);
const Source = Type.Union([Type.Literal('catalog'), Type.Literal('published')], {
  description: 'catalog: shipped with the service; published: a global skill a user published',
});
const Usage = Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer() });

export const Categories = Type.Object(
  {
    categories: Type.Array(
      Type.Object({
        name: Type.String(),
        skills: Type.Integer({ description: 'skills in the category' }),
        catalog: Type.Integer({ description: 'of them shipped with the service' }),
        published: Type.Integer({ description: 'of them published by users (category community)' }),
      }),
    ),
    total: Type.Integer(),
  },
  {
    examples: [
      {
        categories: [
          { name: 'community', skills: 2, catalog: 0, published: 2 },
          { name: 'engineering', skills: 3, catalog: 3, published: 0 },
        ],
        total: 5,
      },
    ],
  },
);

export const ScoutBody = Type.Object(
  {
    need: Type.String({ minLength: 1, maxLength: 2000, description: 'what the team needs, in words' }),
    project: Type.Optional(ProjectName),
    category: Type.Optional(Type.String({ maxLength: 64, description: 'only skills of this category' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: 'results, 5 by default' })),
  },
  { examples: [{ need: 'our login tests fail randomly', project: 'shop' }] },
);
export const ScoutAnswer = Type.Object(
  {
    need: Type.String(),
    results: Type.Array(
      Type.Object({
        skill_id: SkillId,
        name: Type.String(),
        description: Type.String(),
        category: Type.String(),
        source: Source,
        relevance: Type.Number({ description: 'cosine similarity of the best matching part, 0–1' }),
        installed: Type.Boolean({ description: 'the project already has a skill of this name' }),
      }),
    ),
  },
  {
    examples: [
      {
        need: 'our login tests fail randomly',
        results: [
          {
            skill_id: 'catalog:test-writing',
            name: 'test-writing',
            description: 'Write focused automated tests that fail without the behaviour they protect.',
            category: 'quality',
            source: 'catalog',
            relevance: 0.41,
            installed: false,
          },
        ],
      },
    ],
  },
);

export const ProjectBody = Type.Object({ project: ProjectName }, { examples: [{ project: 'shop' }] });

export const QuickScan = Type.Object(
  {
    project: Type.String(),
    scanned: Type.Object({ issues_and_pages: Type.Integer(), workers: Type.Integer() }),
    findings: Type.Array(
      Type.Object({
        skill_id: SkillId,
        name: Type.String(),
        category: Type.String(),
        reason: Type.String(),
        evidence: Type.Array(Type.String(), { description: 'the issues and pages that show the need (at most 5)' }),
        matches: Type.Integer(),
      }),
    ),
  },
  {
    examples: [
      {
        project: 'shop',
        scanned: { issues_and_pages: 14, workers: 3 },
        findings: [
          {
            skill_id: 'catalog:test-writing',
            name: 'test-writing',
            category: 'quality',
            reason: "2 of the project's issues and pages mention flaky, test; no worker has test-writing.",
            evidence: ['#4 Flaky login test', '#9 Add tests for export'],
            matches: 2,
          },
        ],
      },
    ],
  },
);

export const ProjectAnalysis = Type.Object(
  {
    project: Type.String(),
    summary: Type.String(),
    findings: Type.Array(
      Type.Object({
        skill_id: SkillId,
        name: Type.String(),
        gap: Type.String({ description: 'what is missing and why' }),
        worker: Nullable(Type.String({ description: 'the worker that should get it' })),
      }),
    ),
    model: Type.String(),
    usage: Usage,
  },
  {
    examples: [
      {
        project: 'shop',
        summary: 'Testing is the main gap.',
        findings: [
          {
            skill_id: 'catalog:test-writing',
            name: 'test-writing',
            gap: 'Flaky tests block releases and nobody owns them.',
            worker: 'QA',
          },
        ],
        model: 'claude-sonnet-4-6',
        usage: { input_tokens: 1800, output_tokens: 160 },
      },
    ],
  },
);

export const InstallBody = Type.Object(
  { project: ProjectName, skill_id: SkillId },
  { examples: [{ project: 'shop', skill_id: 'catalog:test-writing' }] },
);
export const InstallAnswer = Type.Object({ ok: Type.Boolean(), skill: Skill });

export const SkillBody = Type.Object({ skill_id: SkillId }, { examples: [{ skill_id: 'catalog:code-review' }] });
const Part = Type.Object({ score: Nullable(Type.Integer({ minimum: 1, maximum: 5 })), notes: Type.String() });
export const SkillReview = Type.Object(
  {
    id: Type.Integer(),
    skill_id: SkillId,
    name: Type.String(),
    review: Type.Object({
      clarity: Part,
      scope: Part,
      risks: Type.Array(Type.String()),
      summary: Type.String(),
    }),
    model: Type.String(),
    usage: Usage,
    created_at: DateTime(),
  },
  {
    examples: [
      {
        id: 3,
        skill_id: 'catalog:code-review',
        name: 'code-review',
        review: {
          clarity: { score: 4, notes: 'Clear steps.' },
          scope: { score: 5, notes: 'One kind of task.' },
          risks: ['May approve changes it could not run.'],
          summary: 'A sound review checklist.',
        },
        model: 'claude-sonnet-4-6',
        usage: { input_tokens: 700, output_tokens: 120 },
        created_at: '2026-11-24T12:00:00.000Z',
      },
    ],
  },
);

export const BenchmarkBody = Type.Object(
  {
    skill_id: SkillId,
    tasks: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
        minItems: 1,
        maxItems: 5,
        description: 'sample tasks; by default the skill’s own',
      }),
    ),
  },
  { examples: [{ skill_id: 'catalog:bug-triage', tasks: ['A user writes: the app is broken. Triage it.'] }] },
);
const Scores = Type.Object({
  follows_skill: Type.Integer(),
  correctness: Type.Integer(),
  completeness: Type.Integer(),
  clarity: Type.Integer(),
});
export const Benchmark = Type.Object(
  {
    id: Type.Integer(),
    skill_id: SkillId,
    name: Type.String(),
    score: Type.Number({ description: 'mean of the tasks’ scores, 0–1' }),
    rubric: Type.Record(Type.String(), Type.String(), { description: 'the criteria, each scored 0–5' }),
    tasks: Type.Array(
      Type.Object({
        task: Type.String(),
        answer: Type.String({ description: 'the model’s answer with the skill (first 4000 characters)' }),
        scores: Scores,
        score: Type.Number({ description: 'mean of the criteria scaled to 0–1' }),
        comment: Type.String(),
      }),
    ),
    model: Type.String(),
    usage: Usage,
    created_at: DateTime(),
  },
  {
    examples: [
      {
        id: 4,
        skill_id: 'catalog:bug-triage',
        name: 'bug-triage',
        score: 0.85,
        rubric: { follows_skill: 'the answer applies the skill’s method and answer format' },
        tasks: [
          {
            task: 'A user writes: the app is broken. Triage it.',
            answer: 'Title: …',
            scores: { follows_skill: 5, correctness: 4, completeness: 4, clarity: 4 },
            score: 0.85,
            comment: 'Follows the format.',
          },
        ],
        model: 'claude-sonnet-4-6',
        usage: { input_tokens: 2100, output_tokens: 600 },
        created_at: '2026-11-24T12:00:00.000Z',
      },
    ],
  },
);

export const Status = Type.Object(
  {
    catalog: Type.Object({
      shipped: Type.Integer({ description: 'skills shipped with the service' }),
      published: Type.Integer({ description: 'global skills published by users' }),
      indexed_at: Nullable(DateTime({ description: 'when the shipped catalog was last indexed' })),
    }),
    results: Type.Array(
      Type.Object({
        id: Type.Integer(),
        kind: Type.Union([Type.Literal('analyze'), Type.Literal('benchmark')]),
        skill_id: SkillId,
        name: Type.String(),
        score: Nullable(Type.Number({ description: '0–1' })),
        model: Nullable(Type.String()),
        created_at: DateTime(),
      }),
      { description: 'your 20 newest reviews and benchmarks' },
    ),
  },
  {
    examples: [
      {
        catalog: { shipped: 8, published: 2, indexed_at: '2026-11-24T11:00:00.000Z' },
        results: [
          {
            id: 4,
            kind: 'benchmark',
            skill_id: 'catalog:bug-triage',
            name: 'bug-triage',
            score: 0.85,
            model: 'claude-sonnet-4-6',
            created_at: '2026-11-24T12:00:00.000Z',
          },
        ],
      },
    ],
  },
);
