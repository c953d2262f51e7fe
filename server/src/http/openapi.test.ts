/**
 * The OpenAPI document (`GET /api/openapi.json`) is complete enough for a client generator: a unique
 * operationId per operation, every error response the shared `Error` component, every parameter described,
 * multipart bodies described, and nothing pointing outside the repository. The README and docs/ as well.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createUser, type TestApp } from '../../test/helpers.ts';
import { EnvSchema, MANAGED_SECRET_NAMES } from '../config.ts';
import { operationIdOf } from './openapi.ts';

/** Text that points outside the repository: the shared folder beside it and its files. */
const OUTSIDE = /CONTRACT(\.md)?\b|DESIGN\.md|\.\.\/shared|crm-service-api\.md|spec\/routes\.txt/;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

let t: TestApp;
let doc: any;
/** Every operation: `METHOD path` and the operation object. */
let ops: Array<{ where: string; op: any }>;

beforeAll(async () => {
  t = await buildTestApp();
  const res = await api(t.app, 'GET', '/api/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
  ops = Object.entries<any>(doc.paths).flatMap(([p, item]) =>
    Object.entries<any>(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([m, op]) => ({ where: `${m.toUpperCase()} ${p}`, op })),
  );
});
afterAll(async () => {
  await t?.close();
});

describe('operationIdOf', () => {
  it('derives a stable id from the method and the path', () => {
    expect(operationIdOf('GET', '/api/crm/projects/:name/runs/:id')).toBe('getProjectsByNameRunsById');
    expect(operationIdOf('POST', '/api/auth/login')).toBe('postAuthLogin');
    expect(operationIdOf('PUT', '/api/mcp/issues/:project/:id')).toBe('putMcpIssuesByProjectById');
    expect(operationIdOf('POST', '/help/chat')).toBe('postRootHelpChat');
    expect(operationIdOf('POST', '/api/crm/projects/:name/workers/generate-prompt')).toBe(
      'postProjectsByNameWorkersGeneratePrompt',
    );
  });
});

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and documents the routes', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(ops.length).toBeGreaterThan(100);
    expect(doc.paths['/api/crm/projects/{name}/runs'].get).toBeDefined();
  });

  it('documents every API route, the terminal WebSocket included', () => {
    const documented = new Set(ops.map((o) => o.where));
    const routes = t.app.routeList.filter(
      (r) => r.includes(' /api/') && !r.includes(' /api/reference') && !r.endsWith(' /api/openapi.json'),
    );
    expect(routes.length).toBeGreaterThan(100);
    for (const r of routes) expect(documented.has(r.replace(/:([A-Za-z_]+)/g, '{$1}')), r).toBe(true);
    const terminal = doc.paths['/api/crm/ws/cloud/{userId}/terminal'].get;
    expect(terminal.responses['101']).toBeDefined();
    expect(terminal.description).toContain('resize');
  });

  it('gives every operation a unique operationId', () => {
    const seen = new Map<string, string>();
    for (const { where, op } of ops) {
      expect(op.operationId, where).toMatch(/^[a-z]+[A-Za-z0-9]*$/);
      expect(seen.get(op.operationId), `${where} repeats ${op.operationId}`).toBeUndefined();
      seen.set(op.operationId, where);
    }
    expect(doc.paths['/api/crm/projects/{name}/runs/{id}'].get.operationId).toBe('getProjectsByNameRunsById');
  });

  it('has one Error component that every error response references', () => {
    const error = doc.components.schemas.Error;
    expect(error).toMatchObject({ type: 'object', required: ['error', 'message'] });
    expect(Object.keys(error.properties)).toEqual(expect.arrayContaining(['error', 'message', 'details']));
    let count = 0;
    for (const { where, op } of ops)
      for (const [status, response] of Object.entries<any>(op.responses ?? {})) {
        if (Number(status) < 400) continue;
        count++;
        expect(response.description, `${where} ${status}`).toBeTruthy();
        expect(response.content, `${where} ${status}`).toEqual({
          'application/json': { schema: { $ref: '#/components/schemas/Error' } },
        });
      }
    expect(count).toBeGreaterThan(300);
  });

  it("names the service's release, its license and a relative server", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../../../package.json'), 'utf8'));
    expect(doc.info.version).toBe(pkg.version);
    expect(doc.info.license).toMatchObject({ name: 'MIT' });
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  it('declares every tag an operation uses, each with a description', () => {
    const declared = new Map<string, string>(doc.tags.map((t: any) => [t.name, t.description]));
    for (const { where, op } of ops)
      for (const tag of op.tags ?? []) expect(declared.get(tag), `${where} tag ${tag}`).toBeTruthy();
  });

  it('has no two paths that differ only in parameter names (one transcript path for upload and download)', () => {
    const shapes = new Map<string, string>();
    for (const p of Object.keys(doc.paths)) {
      const shape = p.replace(/\{[^}]+\}/g, '{}');
      expect(shapes.get(shape), `${p} and ${shapes.get(shape)}`).toBeUndefined();
      shapes.set(shape, p);
    }
    const transcript = doc.paths['/api/cli/transcript/{project}/{modeOrSession}'];
    expect(Object.keys(transcript).sort()).toEqual(['get', 'post']);
    const described = (op: any) => op.parameters.find((x: any) => x.name === 'modeOrSession').description;
    expect(described(transcript.post)).toMatch(/^POST.*mode/);
    expect(described(transcript.get)).toMatch(/^GET.*session id/);
  });

  it('names the resources as component schemas that the operations reference', () => {
    const names = [
      'Project',
      'Worker',
      'WorkerListItem',
      'Issue',
      'IssueSummary',
      'Skill',
      'SkillVersion',
      'WikiPage',
      'Note',
      'NoteSource',
      'Transcript',
      'TranscriptListItem',
      'CliTranscript',
      'CliDevice',
      'Run',
      'UsageRow',
      'AccessToken',
      'User',
      'Invite',
      'WaitlistEntry',
      'Pin',
      'Learning',
    ];
    for (const name of names) expect(doc.components.schemas[name]?.type, name).toBe('object');
    const text = JSON.stringify(doc.paths);
    for (const name of names) expect(text, name).toContain(`"#/components/schemas/${name}"`);
    expect(doc.paths['/api/crm/projects/{name}'].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Project',
    });
  });

  it('describes every parameter', () => {
    for (const { where, op } of ops)
      for (const p of op.parameters ?? []) expect(p.description, `${where} ${p.in} ${p.name}`).toBeTruthy();
  });

  it('describes the fields of every multipart request body', () => {
    const uploads = ops.filter(({ op }) => op.requestBody?.content?.['multipart/form-data']);
    expect(uploads.map((u) => u.where).sort()).toEqual([
      'POST /api/crm/onboarding/setup',
      'POST /api/crm/projects/{name}/files/upload',
      'POST /api/crm/projects/{name}/notes/{id}/sources',
      'POST /api/crm/projects/{name}/transcripts/upload',
      'POST /api/crm/projects/{name}/upload-icon',
      'POST /api/crm/projects/{name}/workers/{id}/avatar',
      'POST /api/crm/projects/{name}/workers/{id}/upload-icon',
      'POST /api/crm/voice/transcribe',
    ]);
    for (const { where, op } of uploads) {
      const schema = op.requestBody.content['multipart/form-data'].schema;
      expect(Object.keys(schema.properties ?? {}).length, where).toBeGreaterThan(0);
      for (const [field, s] of Object.entries<any>(schema.properties))
        expect(s.description, `${where} ${field}`).toBeTruthy();
    }
  });

  it('mentions no file outside the repository', () => {
    const text = JSON.stringify(doc);
    expect(text.match(OUTSIDE)?.[0]).toBeUndefined();
  });

  it('the reference page is public', async () => {
    const page = await api(t.app, 'GET', '/api/reference/');
    expect(page.status).toBe(200);
  });
});

describe('error answers follow the Error component', () => {
  it('renders 404, 400 with details and extra fields through the shared schema', async () => {
    const u = await createUser(t);
    const missing = await api(t.app, 'GET', '/api/crm/projects/no-such-project', { token: u.token });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'project_not_found', message: expect.any(String) });
    const create = (body: unknown) => api(t.app, 'POST', '/api/crm/projects/create', { token: u.token, body });
    expect((await create({ displayName: 'A', projectName: 'taken-name' })).status).toBe(201);
    const bad = await api(t.app, 'GET', '/api/crm/projects/taken-name/runs?limit=0', { token: u.token });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_request', details: [{ path: expect.any(String) }] });
    const other = await createUser(t);
    const taken = await api(t.app, 'POST', '/api/crm/projects/create', {
      token: other.token,
      body: { displayName: 'B', projectName: 'taken-name' },
    });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({ error: 'project_exists', message: expect.any(String), name: 'taken-name' });
  });
});

describe('the project documents itself', () => {
  it('README.md and docs/ point nowhere outside the repository', () => {
    const root = path.resolve(import.meta.dirname, '../../..');
    const files = ['README.md'];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
        const rel = path.join(dir, e.name);
        if (e.isDirectory()) walk(rel);
        else if (e.name.endsWith('.md')) files.push(rel);
      }
    };
    walk('docs');
    expect(files).toEqual(expect.arrayContaining(['docs/configuration.md', 'docs/api.md']));
    for (const f of files) {
      const hit = fs.readFileSync(path.join(root, f), 'utf8').match(OUTSIDE);
      expect(hit?.[0], f).toBeUndefined();
    }
  });

  it('docs/configuration.md describes every environment variable and managed secret', () => {
    const root = path.resolve(import.meta.dirname, '../../..');
    const text = fs.readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
    for (const name of [...Object.keys(EnvSchema.properties), ...MANAGED_SECRET_NAMES])
      expect(text, name).toContain(`\`${name}\``);
  });
});
