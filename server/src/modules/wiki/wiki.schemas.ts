/**
 * Schemas of the wiki (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings): tree `{tree}`, file `{path,
 * title, content, updated_at, updated_by}`, save `{path, content}`.
 */
import { Type } from 'typebox';
import { DateTime, named, Nullable, ProjectParam } from '../../http/schemas.ts';

export { ProjectParam };
const PagePath = Type.String({ minLength: 1, maxLength: 300, description: 'relative page path, e.g. guides/setup.md' });
export const PathQuery = Type.Object({ path: PagePath });
export const SaveBody = Type.Object(
  { path: PagePath, content: Type.String({ maxLength: 900_000 }) },
  { additionalProperties: false },
);
export const Page = named(
  'WikiPage',
  Type.Object({
    path: Type.String(),
    title: Type.String(),
    content: Type.String(),
    updated_at: DateTime(),
    updated_by: Nullable(
      Type.String({
        description: 'who saved it last: the user’s name or e-mail, or the label of the worker that wrote it',
      }),
    ),
  }),
);

export interface TreeNode {
  path: string;
  title: string;
  children?: TreeNode[];
}
/** A folder has `children` (nodes of the same shape); a page has none. */
export const TreeNodeSchema = Type.Object({
  path: Type.String(),
  title: Type.String(),
  children: Type.Optional(Type.Array(Type.Unknown({ description: 'a tree node: {path, title, children?}' }))),
});
export const Tree = Type.Object({ tree: Type.Array(TreeNodeSchema) });
