/** Request and answer schemas of a project's outside MCP servers (docs/api.md, Outside MCP servers for workers). */
import { Type } from 'typebox';
import { DateTime, Id, ProjectName } from '../../http/schemas.ts';

/** A server's name: the prefix of its tools (`<name>__<tool>`). */
export const ServerName = Type.String({
  pattern: '^[a-z0-9](?:[a-z0-9-]|_(?!_)){0,29}$',
  description: 'lower-case letters, digits, - and single _ (at most 30); its tools reach the model as <name>__<tool>',
});

export const CreateServerBody = Type.Object(
  {
    name: ServerName,
    url: Type.String({ minLength: 1, maxLength: 2000, description: 'the Streamable HTTP address (http or https)' }),
    headers: Type.Optional(
      Type.Record(
        Type.String({ pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$", description: 'an HTTP header name' }),
        Type.String({ maxLength: 4096, pattern: '^[^\\r\\n]*$', description: 'a header value (one line)' }),
        { maxProperties: 20, description: 'sent with every request (e.g. Authorization); stored sealed' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const CreatedServer = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  url: Type.String(),
  tools: Type.Array(Type.String(), { description: 'the tools the server listed' }),
});

export const ServerList = Type.Object({
  servers: Type.Array(
    Type.Object({
      id: Type.Integer(),
      name: Type.String(),
      url: Type.String(),
      header_names: Type.Array(Type.String(), { description: 'the names of its headers (values are never shown)' }),
      tools: Type.Array(Type.String(), { description: 'the tools it listed last' }),
      created_at: DateTime(),
      updated_at: DateTime(),
    }),
  ),
});

export const ServerParams = Type.Object({ name: ProjectName, id: Id('the MCP server id') });
