/**
 * The built-in local embedder (issue 5): a feature-hashing bag of n-grams, not a neural model.
 *
 * For each text: lower-cased Unicode words (letters and digits); features are every word that is not a
 * stop word (weight 1), each adjacent pair of words (weight 0.7) and each character trigram of a word padded
 * with boundary marks (weight 0.35, so inflected forms such as "worker"/"workers" or Ukrainian endings
 * still overlap). Each feature is hashed (FNV-1a, 32 bit) to one of `dims` buckets with a sign from
 * another bit of the hash (signed feature hashing keeps collisions unbiased); counts are damped with
 * `log(1 + n)` and the vector is L2-normalised. Deterministic, no download, ~µs per short text.
 *
 * What it is good for: finding text that shares words, phrases and word stems with the query in English,
 * Ukrainian or any language with word boundaries. What it cannot do: synonyms or paraphrases with
 * different words — configure `EMBEDDINGS_URL` for that.
 */
import { normalize, type Embedder } from './embeddings.ts';

export const LOCAL_EMBEDDER_DIMS = 256;

const STOP = new Set(
  (
    'a an the and or but if of to in on at by for with from as is are was were be been being it its this that these those ' +
    'i you he she we they me my your our their do does did how what which who whom where when why can could would should ' +
    'will shall may might must not no yes so than then there here about into over under up down out off again all any ' +
    'і й та а але або чи що як це ці цей ця те той в у на до з із за від по про для не ні так я ти ви ми він вона вони'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Words of a text as the embedder sees them (lower case, Unicode letters and digits). */
export function words(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).slice(0, 20000);
}

/** Embed one text into a raw (unnormalised) feature-count vector. */
function features(text: string, dims: number): number[] {
  const counts = new Map<number, number>();
  const add = (feature: string, w: number) => {
    const h = fnv1a(feature);
    const bucket = h % dims;
    const sign = (h >>> 31) & 1 ? -1 : 1;
    counts.set(bucket, (counts.get(bucket) ?? 0) + sign * w);
  };
  const ws = words(text);
  let prev: string | undefined;
  for (const w of ws) {
    const stop = STOP.has(w);
    if (!stop) {
      add(`w:${w}`, 1);
      const padded = `<${w}>`;
      if (w.length > 2) for (let i = 0; i + 3 <= padded.length; i++) add(`c:${padded.slice(i, i + 3)}`, 0.35);
      if (prev) add(`b:${prev} ${w}`, 0.7);
      prev = w;
    }
  }
  const v = new Array<number>(dims).fill(0);
  for (const [bucket, c] of counts) v[bucket] = Math.sign(c) * Math.log1p(Math.abs(c));
  return v;
}

/** @param dims vector dimension (default 256). */
export function createLocalEmbedder(dims = LOCAL_EMBEDDER_DIMS): Embedder {
  return {
    id: `local:hash-ngram-v1`,
    kind: 'local',
    dims: () => dims,
    probe: async () => dims,
    async embed(texts) {
      return texts.map((t) => normalize(features(t, dims)));
    },
    relevantDistance: 0.75,
  };
}
