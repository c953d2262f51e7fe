/** Request and answer schemas of approvals (TypeBox; docs/api.md, Approvals). */
import { Type } from 'typebox';
import { DateTime, named, Nullable, projectIdParams } from '../../http/schemas.ts';

const Status = Type.Union([
  Type.Literal('pending'),
  Type.Literal('approved'),
  Type.Literal('denied'),
  Type.Literal('expired'),
]);

export const Approval = named(
  'Approval',
  Type.Object({
    id: Type.Integer(),
    run_id: Type.Integer(),
    worker_id: Type.Integer(),
    tool: Type.String(),
    input: Type.Record(Type.String(), Type.Unknown()),
    status: Status,
    created_at: DateTime(),
    decided_at: Nullable(DateTime()),
    decided_by: Nullable(Type.String({ description: "the deciding person's e-mail; system for an expiry" })),
    channel: Nullable(
      Type.String({ description: 'where the decision came from: web, api, messenger or system (expiry)' }),
    ),
    reason: Nullable(Type.String()),
  }),
);
export const ApprovalList = Type.Object({ approvals: Type.Array(Approval) });
export const ApprovalsQuery = Type.Object(
  {
    status: Type.Optional(
      Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('denied'), Type.Literal('expired')], {
        description: 'only approvals in this state',
      }),
    ),
  },
  { additionalProperties: false },
);
export const ApprovalParams = projectIdParams('the approval id');
export const DecisionBody = Type.Object(
  {
    decision: Type.Union([Type.Literal('approve'), Type.Literal('deny')]),
    reason: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);
