/**
 * Request and answer schemas of skills, forks, evolution and skill updates (docs/ARCHITECTURE.md, Issues, skills, wiki,
 * files, pins, learnings).
 */
import { Type } from 'typebox';
import { DateTime, idParam, named, Nullable, projectIdParams, ProjectParam } from '../../http/schemas.ts';

/** A skill name: a lowercase slug (it names the folder `.skills/<name>/`). */
export const SkillName = Type.String({
  pattern: '^[a-z0-9][a-z0-9-]{0,63}$',
  description: 'lowercase slug: a-z, 0-9 and -, at most 64',
});
const Description = Type.String({ maxLength: 1000 });
const Content = Type.String({ maxLength: 200_000 });
const Reason = Type.String({
  minLength: 1,
  maxLength: 500,
  description: 'why it changed (kept in the evolution history)',
});

export const Skill = named(
  'Skill',
  Type.Object({
    id: Type.Integer(),
    owner_project: Nullable(Type.String({ description: 'the owning project name; null for a global skill' })),
    name: Type.String(),
    description: Type.String(),
    content: Type.String(),
    version: Type.Integer(),
    forked_from: Nullable(Type.Integer()),
    forked_version: Nullable(Type.Integer()),
    created_by: Nullable(
      Type.Integer({
        description:
          'id of the user who created the skill (for a global skill: its publisher, who may change it); null once that account is gone',
      }),
    ),
    created_at: DateTime(),
    updated_at: DateTime(),
  }),
);
export const SkillList = Type.Object({ skills: Type.Array(Skill) });
export const CreateBody = Type.Object(
  {
    name: SkillName,
    description: Type.Optional(Description),
    content: Type.Optional(Content),
    reason: Type.Optional(Reason),
  },
  { additionalProperties: false },
);
export const UpdateBody = Type.Object(
  {
    name: Type.Optional(SkillName),
    description: Type.Optional(Description),
    content: Type.Optional(Content),
    reason: Type.Optional(Reason),
  },
  { additionalProperties: false },
);
export const ForkBody = Type.Object(
  {
    skill_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2147483647,
        description: 'the global skill to fork (an alternative to naming it); `name` is then the fork’s name',
      }),
    ),
    name: Type.Optional(
      Type.String({
        pattern: '^[a-z0-9][a-z0-9-]{0,63}$',
        description:
          'lowercase slug; without skill_id: the name of the global skill to fork (the fork keeps it); with it: the fork’s name',
      }),
    ),
    description: Type.Optional(Description),
    content: Type.Optional(Content),
  },
  { additionalProperties: false },
);
export const Version = named(
  'SkillVersion',
  Type.Object({
    version: Type.Integer(),
    name: Type.String(),
    description: Type.String(),
    content: Type.String(),
    author: Type.String(),
    reason: Type.String(),
    created_at: DateTime(),
  }),
);
export const Evolution = Type.Object({
  skill_id: Type.Integer(),
  versions: Type.Array(Version, { description: 'newest first' }),
});
export const SkillUpdate = Type.Object({
  id: Type.Integer(),
  project: Type.String(),
  fork_id: Type.Integer(),
  fork_name: Type.String(),
  source_id: Type.Integer(),
  source_name: Type.String(),
  from_version: Type.Integer(),
  to_version: Type.Integer(),
  status: Type.String(),
  description: Type.String({ description: 'the offered description (global skill at to_version)' }),
  content: Type.String({ description: 'the offered content' }),
  created_at: DateTime(),
});
export const SkillUpdateList = Type.Object({ updates: Type.Array(SkillUpdate) });
export const UpdatesQuery = Type.Object({
  project: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'only the updates offered to this project (its name)' }),
  ),
  status: Type.Optional(
    Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected')], {
      default: 'pending',
      description: 'which updates: pending (default), approved or rejected',
    }),
  ),
});
export const Decision = Type.Object({ ok: Type.Boolean(), update: SkillUpdate, skill: Nullable(Skill) });
export { ProjectParam };
export const ProjectIdParams = projectIdParams('the skill id');
export const SkillIdParam = idParam('the skill id');
export const UpdateIdParam = idParam('the skill update id');
export const Deleted = Type.Object({ ok: Type.Boolean(), id: Type.Integer() });
