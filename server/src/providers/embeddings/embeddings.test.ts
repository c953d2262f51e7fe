import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlmStandIn, fakeEmbedding } from '../../../test/standins/llm.ts';
import { createEmbedder, createLocalEmbedder, createOpenAiEmbedder, EmbeddingsError } from './index.ts';

const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);
const norm = (a: number[]) => Math.sqrt(dot(a, a));

describe('OpenAI-compatible embeddings client against the stand-in', () => {
  let s: Awaited<ReturnType<typeof startLlmStandIn>>;
  beforeAll(async () => {
    s = await startLlmStandIn({ embeddingDims: 48 });
  });
  afterAll(async () => s?.close());

  it('posts {model, input} to /v1/embeddings with the key and returns normalised vectors in order', async () => {
    const e = createOpenAiEmbedder({ baseUrl: s.openaiUrl, model: 'embed-small', apiKey: 'emb-key-1' });
    expect(e.id).toBe('openai:embed-small');
    expect(() => e.dims()).toThrow();
    const v = await e.embed(['alpha beta', 'gamma']);
    expect(e.dims()).toBe(48);
    expect(v).toHaveLength(2);
    expect(norm(v[0])).toBeCloseTo(1, 5);
    expect(v[0]).toEqual(fakeEmbedding('alpha beta', 48).map((x) => expect.closeTo(x, 5)));
    const req = s.requests.at(-1)!;
    expect(req.path).toBe('/v1/embeddings');
    expect(req.headers.authorization).toBe('Bearer emb-key-1');
    expect(req.body).toMatchObject({ model: 'embed-small', input: ['alpha beta', 'gamma'] });
  });

  it('batches 64 inputs per request', async () => {
    const e = createEmbedder({ embeddingsUrl: s.openaiUrl, embeddingsModel: 'embed-small', embeddingsKey: undefined });
    const before = s.requests.length;
    const v = await e.embed(Array.from({ length: 70 }, (_, i) => `text ${i}`));
    expect(v).toHaveLength(70);
    expect(s.requests.length - before).toBe(2);
    expect(await e.probe()).toBe(48);
  });

  it('raises EmbeddingsError when the service cannot be reached', async () => {
    const e = createOpenAiEmbedder({ baseUrl: 'http://127.0.0.1:9/v1', model: 'x', maxRetries: 0, timeoutMs: 2000 });
    await expect(e.embed(['a'])).rejects.toBeInstanceOf(EmbeddingsError);
  });
});

describe('local embedder', () => {
  const e = createLocalEmbedder();
  it('is deterministic, 256-dimensional and L2-normalised', async () => {
    const [a, b] = await e.embed(['The quick brown fox', 'The quick brown fox']);
    expect(a).toHaveLength(256);
    expect(a).toEqual(b);
    expect(norm(a)).toBeCloseTo(1, 6);
    expect(createEmbedder({ embeddingsUrl: undefined, embeddingsModel: 'm', embeddingsKey: undefined }).id).toBe(
      'local:hash-ngram-v1',
    );
  });
  it('puts texts sharing words and stems closer than unrelated ones', async () => {
    const [q, near, stem, far] = await e.embed([
      'deploy the workers',
      'how to deploy workers safely',
      'deploying a worker',
      'banana bread recipe with walnuts',
    ]);
    expect(dot(q, near)).toBeGreaterThan(dot(q, far) + 0.3);
    expect(dot(q, stem)).toBeGreaterThan(dot(q, far) + 0.1);
    expect(1 - dot(q, far)).toBeGreaterThan(e.relevantDistance);
  });
});
