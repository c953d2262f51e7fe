/**
 * OpenAI-compatible embeddings client (`EMBEDDINGS_URL`, `EMBEDDINGS_MODEL`, `EMBEDDINGS_KEY`):
 * `POST {EMBEDDINGS_URL}/embeddings`
 * `{model, input: string[], encoding_format: 'float'}` → `{data:[{index, embedding}]}`, through the
 * vendor's SDK (`openai`). Inputs are sent in batches of 64; each text is cut to 8000 characters.
 */
import type OpenAI from 'openai';
import { EmbeddingsError, normalize, type Embedder } from './embeddings.ts';

const BATCH = 64;
const MAX_CHARS = 8000;

/**
 * @param opts.baseUrl the API base that `/embeddings` is appended to (e.g. `https://api.openai.com/v1`).
 * @param opts.model model name sent with every request; part of the embedder id.
 * @param opts.apiKey bearer key (optional for local servers).
 */
export function createOpenAiEmbedder(opts: {
  baseUrl: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
  maxRetries?: number;
}): Embedder {
  // The SDK is loaded on the first call, not at start.
  let sdk: Promise<{ Sdk: typeof OpenAI; client: OpenAI }> | undefined;
  const loadSdk = () =>
    (sdk ??= import('openai').then(({ default: Sdk }) => ({
      Sdk,
      client: new Sdk({
        apiKey: opts.apiKey || 'none',
        baseURL: opts.baseUrl,
        timeout: opts.timeoutMs ?? 60_000,
        maxRetries: opts.maxRetries ?? 2,
      }),
    })));
  let known: number | undefined;

  const call = async (input: string[]): Promise<number[][]> => {
    const { Sdk, client } = await loadSdk();
    let res: OpenAI.CreateEmbeddingResponse;
    try {
      res = await client.embeddings.create({
        model: opts.model,
        input: input.map((t) => t.slice(0, MAX_CHARS) || ' '),
        encoding_format: 'float',
      });
    } catch (err) {
      if (err instanceof Sdk.APIError)
        throw new EmbeddingsError(`The embeddings service answered ${err.status ?? 'an error'}.`, err.status);
      throw new EmbeddingsError('The embeddings service cannot be reached.');
    }
    const out: number[][] = new Array(input.length);
    for (const d of res.data ?? []) {
      if (!Array.isArray(d.embedding) || typeof d.index !== 'number')
        throw new EmbeddingsError('The embeddings service answered an unexpected shape.');
      out[d.index] = d.embedding as number[];
    }
    for (let i = 0; i < input.length; i++) {
      const v = out[i];
      if (!v || v.length === 0) throw new EmbeddingsError('The embeddings service left out a vector.');
      known ??= v.length;
      if (v.length !== known)
        throw new EmbeddingsError(`The embeddings service changed dimension (${v.length} instead of ${known}).`);
      normalize(v);
    }
    return out;
  };

  return {
    id: `openai:${opts.model}`,
    kind: 'openai',
    dims() {
      if (known === undefined) throw new Error('embedding dimension not known yet: call probe() first');
      return known;
    },
    async probe() {
      if (known === undefined) await call(['dimension probe']);
      return known!;
    },
    async embed(texts) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += BATCH) out.push(...(await call(texts.slice(i, i + BATCH))));
      return out;
    },
    relevantDistance: 0.6,
  };
}
