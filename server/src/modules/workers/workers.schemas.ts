/** Request and answer schemas of the workers area (TypeBox). */
import { Type } from 'typebox';
import { DateTime, named, Nullable, projectIdParams } from '../../http/schemas.ts';

const Str = (max: number) => Type.String({ maxLength: max });
const StrList = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 });

/**
 * One approval rule (docs/ARCHITECTURE.md, Approvals): a tool name, a prefix ending in `*`, or a class of tools, and
 * when to ask.
 */
export const ApprovalRule = Type.Object(
  {
    tool: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^(@(commands|writes|deletions|outbound|tokens)|[^@*][^*]*\\*?)$',
      description:
        'a tool name, a prefix ending in * (e.g. github__*), or a class: @commands (run_command), @writes (files, ' +
        "wiki, issues), @deletions (a tool whose name says it deletes), @outbound (an outside MCP server's tools), " +
        '@tokens (any call once the run has spent more than `above` tokens)',
    }),
    mode: Type.Union([Type.Literal('always'), Type.Literal('once_per_run'), Type.Literal('never')], {
      description:
        'always: every call waits; once_per_run: the first call of the tool in a run waits; never: the tool is ' +
        'exempt from a broader rule (a class or a shorter prefix)',
    }),
    above: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'for @tokens: the run spent more than this' }),
    ),
  },
  { additionalProperties: false },
);
export const ApprovalRules = Type.Array(ApprovalRule, { maxItems: 50 });

/**
 * Worker fields (docs/ARCHITECTURE.md, Projects, workers, plan limits and onboarding); `preset` fills the others from
 * the preset library.
 */
export const WorkerFields = {
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  icon: Type.Optional(Nullable(Str(200))),
  type: Type.Optional(Type.Union([Type.Literal('terminal'), Type.Literal('messenger')])),
  model: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100 }))),
  max_turns: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
  tools: Type.Optional(StrList),
  system_prompt: Type.Optional(Str(50_000)),
  focus_dirs: Type.Optional(StrList),
  context_assets: Type.Optional(StrList),
  prompt_style: Type.Optional(Nullable(Str(100))),
  role: Type.Optional(Nullable(Str(100))),
  mcp_servers: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 30 }), {
      maxItems: 20,
      description: "names of the project's outside MCP servers whose tools the worker uses (<server>__<tool>)",
    }),
  ),
  approvals: Type.Optional(ApprovalRules),
};
export const WorkerCreateBody = Type.Object(
  { preset: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), ...WorkerFields },
  { additionalProperties: false },
);
export const WorkerUpdateBody = Type.Object(
  { ...WorkerFields, avatar_pack: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
  { additionalProperties: false },
);

export const Worker = named(
  'Worker',
  Type.Object({
    id: Type.Integer(),
    label: Type.String(),
    icon: Nullable(Type.String()),
    type: Type.String(),
    model: Nullable(Type.String()),
    max_turns: Type.Integer(),
    tools: Type.Array(Type.String()),
    system_prompt: Type.String(),
    focus_dirs: Type.Array(Type.String()),
    context_assets: Type.Array(Type.String()),
    prompt_style: Nullable(Type.String()),
    avatar_pack: Type.String(),
    role: Nullable(Type.String()),
    mcp_servers: Type.Array(Type.String()),
    approvals: Type.Array(
      Type.Object({ tool: Type.String(), mode: Type.String(), above: Type.Optional(Type.Integer()) }),
    ),
    position: Type.Integer(),
    has_avatar: Type.Boolean(),
    has_icon: Type.Boolean(),
    bot_username: Nullable(Type.String()),
    project_name: Type.String(),
    created_at: DateTime(),
    updated_at: DateTime(),
  }),
);

export const WorkerListItem = named(
  'WorkerListItem',
  Type.Object({
    id: Type.Integer(),
    label: Type.String(),
    icon: Nullable(Type.String()),
    type: Type.String(),
    model: Nullable(Type.String()),
    tools: Type.Array(Type.String()),
    context_assets: Type.Array(Type.String()),
    project_name: Type.String(),
    owner_email: Type.Optional(Type.String()),
  }),
);

export const Preset = Type.Object({
  id: Type.String(),
  label: Type.String(),
  icon: Type.String(),
  type: Type.String(),
  model: Type.String(),
  max_turns: Type.Integer(),
  tools: Type.Array(Type.String()),
  system_prompt: Type.String(),
  context_assets: Type.Array(Type.String()),
  focus_dirs: Type.Array(Type.String()),
  prompt_style: Type.String(),
});

export const ModelTiers = Type.Object({
  tiers: Type.Array(
    Type.Object({
      key: Type.String(),
      label: Type.String(),
      stage: Type.Integer({ description: '1 = cheapest; optimize mode escalates to the next stage' }),
      model: Type.String(),
      hint: Type.String(),
    }),
  ),
  roleDefaults: Type.Record(Type.String(), Type.String()),
  fallbackTier: Type.String(),
});

export const Template = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  config: Type.Record(Type.String(), Type.Unknown()),
  is_public: Type.Boolean(),
  created_at: DateTime(),
  owner: Type.Boolean({ description: 'true when the caller owns it (may delete)' }),
});
export const TemplateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Str(2000)),
    config: Type.Record(Type.String(), Type.Unknown()),
    is_public: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const ProjectWorkerParams = projectIdParams('the worker id');
export const ReorderBody = Type.Object({
  order: Type.Array(Type.Integer({ minimum: 1, maximum: 2147483647 }), { maxItems: 1000 }),
});
export const TokenBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
export const NotifyBody = Type.Object({
  event: Type.Optional(Str(100)),
  text: Type.String({ minLength: 1, maxLength: 4096 }),
  buttons: Type.Optional(
    Type.Array(
      Type.Object({
        text: Type.String({ minLength: 1, maxLength: 64 }),
        url: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 2000 })),
        callback_data: Type.Optional(Type.String({ maxLength: 64 })),
      }),
      { maxItems: 20 },
    ),
  ),
});
export const ActivityEvent = Type.Object({
  type: Type.String(),
  title: Type.String(),
  detail: Nullable(Type.String()),
  when: DateTime(),
});
export const Runtime = Type.Object({
  status: Type.Union([Type.Literal('working'), Type.Literal('idle')]),
  status_started_at: Nullable(DateTime()),
  current_skill: Nullable(Type.String()),
  tokens_today: Type.Integer(),
  tokens_pct: Type.Number(),
  tokens_cap: Nullable(Type.Integer()),
});
export const GeneratePromptBody = Type.Object(
  {
    role: Type.String({
      minLength: 3,
      maxLength: 4000,
      description: 'what the worker is for (e.g. "reviews pull requests for security problems")',
    }),
    label: Type.Optional(Type.String({ maxLength: 100, description: "the worker's name, e.g. Reviewer" })),
    description: Type.Optional(
      Type.String({
        maxLength: 4000,
        description: 'more about the worker: its duties, tools, tone, what it must not do',
      }),
    ),
    model: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'a tier key or a model id to write the prompt with (default: the strict fallback tier)',
      }),
    ),
  },
  { additionalProperties: false },
);
export const GeneratePromptAnswer = Type.Object({
  system_prompt: Type.String(),
  model: Type.String(),
  usage: Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});
