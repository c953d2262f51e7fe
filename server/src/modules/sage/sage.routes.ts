/** Marketplace scouting routes (`/sage/*`): each calls one method of the sage service. */
import type { TypedApp } from '../../http/typed-app.ts';
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import * as S from './sage.schemas.ts';
import type { SageService } from './sage.service.ts';

export function sageRoutes(app: TypedApp, { sage }: { sage: SageService }): void {
  const tags = ['sage'];
  const LLM = [400, 401, 403, 404, 429, 502, 503];
  app.get(
    '/api/crm/sage/scout/categories',
    {
      schema: {
        tags,
        summary: 'Categories of the skill catalog',
        description:
          'The catalog is the skills the service ships (each with its category) plus the global skills users published (category community).',
        response: { 200: S.Categories, ...errors(401) },
      },
    },
    async () => sage.categories(),
  );
  app.post(
    '/api/crm/sage/scout',
    {
      schema: {
        tags,
        summary: 'Skills that fit a need, ranked by the semantic index',
        description:
          'Ranks the catalog (shipped and published skills) by how close each is to `need` in the semantic index (vectors and words). With `project`, each result says whether the project already has it.',
        body: S.ScoutBody,
        response: { 200: S.ScoutAnswer, ...errors(400, 401, 403, 404, 503) },
      },
    },
    async (req) => sage.scout(requireActor(req), req.body),
  );
  app.post(
    '/api/crm/sage/scout/quick-scan',
    {
      schema: {
        tags,
        summary: "What the project's workers lack, without the model",
        description:
          "Matches the project's open issues and wiki pages against the catalog skills' tags; skills a worker or the project already has are left out. Each finding names a skill and cites the issues and pages that show the need.",
        body: S.ProjectBody,
        response: { 200: S.QuickScan, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => sage.quickScan(requireActor(req), req.body),
  );
  app.post(
    '/api/crm/sage/scout/analyze',
    {
      schema: {
        tags,
        summary: "What the project's workers lack, read by the model",
        description:
          "The model reads the open issues, wiki pages, workers (role, tools, skills) and the candidate skills and names the gaps; every finding names a catalog skill (others are dropped). Metered on the project owner's key (source sage); 429 token_budget_exceeded when the budget is spent.",
        body: S.ProjectBody,
        response: { 200: S.ProjectAnalysis, ...errors(...LLM) },
      },
    },
    async (req) => sage.analyzeProject(requireActor(req), req.body),
  );
  app.post(
    '/api/crm/sage/scout/install',
    {
      schema: {
        tags,
        summary: 'Install a catalog skill into a project',
        description:
          "A published skill is forked into the project (it is then offered its publisher's updates); a shipped skill is copied as a project skill. 409 skill_exists when the project has a skill of that name.",
        body: S.InstallBody,
        response: { 200: S.InstallAnswer, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => sage.install(requireActor(req), req.body),
  );
  app.post(
    '/api/crm/sage/analyze',
    {
      schema: {
        tags,
        summary: "The model's review of one skill: clarity, scope, risks",
        description:
          "Clarity and scope are scored 1–5 with notes; risks list what could go wrong when a worker follows the skill. Metered on the caller's key (source sage) and kept: GET /sage/status lists it.",
        body: S.SkillBody,
        response: { 200: S.SkillReview, ...errors(...LLM) },
      },
    },
    async (req) => sage.analyzeSkill(requireActor(req), req.body),
  );
  app.post(
    '/api/crm/sage/benchmark',
    {
      schema: {
        tags,
        summary: 'Run a skill against sample tasks and score the answers',
        description:
          "For each task (the given ones, else the skill's own samples; at most 5) the model answers with the skill as its instructions, then a second call grades the answer on the rubric: follows_skill, correctness, completeness, clarity, 0–5 each. A task's score is their mean on 0–1, the benchmark's the mean over tasks. Metered on the caller's key and kept. 400 no_tasks when there is no task.",
        body: S.BenchmarkBody,
        response: { 200: S.Benchmark, ...errors(...LLM) },
      },
    },
    async (req) => sage.benchmark(requireActor(req), req.body),
  );
  app.get(
    '/api/crm/sage/status',
    {
      schema: {
        tags,
        summary: 'The catalog’s size and last index time, and your reviews and benchmarks',
        response: { 200: S.Status, ...errors(401) },
      },
    },
    async (req) => sage.status(requireActor(req)),
  );
}
