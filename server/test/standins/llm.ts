/**
 * Local stand-ins of the LLM vendors' HTTP APIs, speaking their real wire protocols so the real SDK
 * clients run against them:
 *  - Anthropic Messages API: `POST /v1/messages`, JSON or SSE streaming (message_start,
 *    content_block_start/delta/stop with text_delta and input_json_delta, message_delta, message_stop);
 *  - OpenAI-compatible: `POST /v1/chat/completions` (JSON or SSE chunks with tool-call fragments and a
 *    final usage chunk) and `POST /v1/embeddings` (deterministic vectors).
 * Replies are scripted per request; every request is recorded (path, headers, parsed body).
 */
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';

export type ScriptBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string };

export interface ScriptedReply {
  content?: ScriptBlock[];
  stop_reason?: string;
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
  };
  /** Answer an error with this HTTP status instead (e.g. 529 overloaded, 429, 401). */
  status?: number;
  errorType?: string;
  /** Wait this long before answering (ms). */
  delayMs?: number;
}

export interface RecordedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export type Responder = (req: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>;

const defaultReply: ScriptedReply = { content: [{ type: 'text', text: 'ok' }] };

/** Deterministic unit vector for a text (for the embeddings stand-in). */
export function fakeEmbedding(text: string, dims = 64): number[] {
  const v = new Array(dims).fill(0);
  for (const word of text.toLowerCase().split(/\W+/).filter(Boolean)) {
    const h = crypto.createHash('sha256').update(word).digest();
    v[h[0] % dims] += 1;
    v[h[1] % dims] += 0.5;
  }
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / n);
}

export async function startLlmStandIn(opts: { responder?: Responder; embeddingDims?: number } = {}) {
  const requests: RecordedRequest[] = [];
  let responder: Responder = opts.responder ?? (() => defaultReply);
  const queued: ScriptedReply[] = [];

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      return res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad json"}');
    }
    const path = (req.url ?? '').split('?')[0];
    const rec: RecordedRequest = { path, headers: req.headers, body };
    requests.push(rec);
    if (path.endsWith('/embeddings')) {
      const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
      return json(res, 200, {
        object: 'list',
        model: body.model,
        data: inputs.map((t, index) => ({
          object: 'embedding',
          index,
          embedding: fakeEmbedding(String(t), opts.embeddingDims ?? 64),
        })),
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      });
    }
    const reply = queued.length ? queued.shift()! : await responder(rec);
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.status && reply.status >= 400) {
      if (path.endsWith('/messages'))
        return json(res, reply.status, {
          type: 'error',
          error: { type: reply.errorType ?? 'api_error', message: 'scripted failure' },
        });
      return json(res, reply.status, {
        error: { message: 'scripted failure', type: reply.errorType ?? 'server_error' },
      });
    }
    if (path.endsWith('/v1/messages')) return anthropic(res, body, reply);
    if (path.endsWith('/chat/completions')) return openai(res, body, reply);
    json(res, 404, { error: 'unknown path' });
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    /** Base for `LLM_PROVIDER=anthropic` (`LLM_BASE_URL`). */
    anthropicUrl: `http://127.0.0.1:${port}`,
    /** Base for `LLM_PROVIDER=openai` and `EMBEDDINGS_URL`-style clients that append paths to /v1. */
    openaiUrl: `http://127.0.0.1:${port}/v1`,
    origin: `http://127.0.0.1:${port}`,
    requests,
    /** Replace the responder; replies still queued by `enqueue` are dropped, so one test's leftovers never answer the next. */
    respond(fn: Responder) {
      responder = fn;
      queued.length = 0;
    },
    /** Replies used, in order, before the responder. */
    enqueue(...replies: ScriptedReply[]) {
      queued.push(...replies);
    },
    /** Model-call requests only (not embeddings). */
    modelCalls: () => requests.filter((r) => !r.path.endsWith('/embeddings')),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function json(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function blocksOf(reply: ScriptedReply) {
  return (reply.content ?? []).map((b) =>
    b.type === 'tool_use' ? { ...b, id: b.id ?? `toolu_${crypto.randomBytes(6).toString('hex')}` } : b,
  );
}

function anthropic(res: http.ServerResponse, body: any, reply: ScriptedReply) {
  const blocks = blocksOf(reply);
  const stop = reply.stop_reason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const usage = {
    input_tokens: reply.usage?.input_tokens ?? 10,
    output_tokens: reply.usage?.output_tokens ?? 5,
    cache_read_input_tokens: reply.usage?.cache_read_input_tokens ?? 0,
    cache_creation_input_tokens: reply.usage?.cache_creation_input_tokens ?? 0,
  };
  const id = `msg_${crypto.randomBytes(6).toString('hex')}`;
  if (!body.stream) {
    return json(res, 200, {
      id,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: blocks,
      stop_reason: stop,
      stop_sequence: null,
      usage,
    });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  send('message_start', {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      const words = b.text.match(/\S+\s*/g) ?? [b.text];
      for (const w of words)
        send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: w } });
    } else {
      send('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
      });
      const js = JSON.stringify(b.input);
      const mid = Math.floor(js.length / 2);
      send('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: js.slice(0, mid) },
      });
      send('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: js.slice(mid) },
      });
    }
    send('content_block_stop', { type: 'content_block_stop', index });
  });
  send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  send('message_stop', { type: 'message_stop' });
  res.end();
}

function openai(res: http.ServerResponse, body: any, reply: ScriptedReply) {
  const blocks = blocksOf(reply);
  const text = blocks
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join('');
  const calls = blocks.filter((b) => b.type === 'tool_use') as Array<{
    id: string;
    name: string;
    input: Record<string, unknown>;
  }>;
  const finish = calls.length ? 'tool_calls' : reply.stop_reason === 'max_tokens' ? 'length' : 'stop';
  const usage = {
    prompt_tokens: reply.usage?.input_tokens ?? 10,
    completion_tokens: reply.usage?.output_tokens ?? 5,
    total_tokens: (reply.usage?.input_tokens ?? 10) + (reply.usage?.output_tokens ?? 5),
  };
  const id = `chatcmpl-${crypto.randomBytes(6).toString('hex')}`;
  const created = Math.floor(Date.now() / 1000);
  if (!body.stream) {
    return json(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model: body.model,
      choices: [
        {
          index: 0,
          finish_reason: finish,
          message: {
            role: 'assistant',
            content: text || null,
            ...(calls.length
              ? {
                  tool_calls: calls.map((c) => ({
                    id: c.id,
                    type: 'function',
                    function: { name: c.name, arguments: JSON.stringify(c.input) },
                  })),
                }
              : {}),
          },
        },
      ],
      usage,
    });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: unknown, finish_reason: string | null = null) =>
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason }] })}\n\n`,
    );
  chunk({ role: 'assistant', content: '' });
  for (const w of text.match(/\S+\s*/g) ?? []) chunk({ content: w });
  calls.forEach((c, index) => {
    const js = JSON.stringify(c.input);
    chunk({
      tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: js.slice(0, 3) } }],
    });
    chunk({ tool_calls: [{ index, function: { arguments: js.slice(3) } }] });
  });
  chunk({}, finish);
  res.write(
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage })}\n\n`,
  );
  res.write('data: [DONE]\n\n');
  res.end();
}
