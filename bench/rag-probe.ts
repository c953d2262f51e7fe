/**
 * Probe of the HNSW build and of the corpus (issue 31), outside the app's tables: `npx tsx bench/rag-probe.ts`.
 * PROBE_N chunks of a corpus (PROBE_CORPUS zipf|topics) embedded by the local embedder, bulk-loaded into a bare
 * table, exact top-6 similarities printed for a few queries, then HNSW builds timed (PROBE_BUILDS, e.g.
 * `vector:16:64,halfvec:16:64`) with pgvector's notices shown.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { corpus, rng, type CorpusKind } from './lib/rag-corpus.ts';
import { createLocalEmbedder } from '../server/src/providers/embeddings/index.ts';

const N = Number(process.env.PROBE_N ?? 20000);
const KIND = (process.env.PROBE_CORPUS ?? 'zipf') as CorpusKind;
const MWM = process.env.PROBE_MWM ?? '512MB';
const BUILDS = (process.env.PROBE_BUILDS ?? 'vector:16:64,halfvec:16:64').split(',').filter(Boolean);
const Q = Number(process.env.PROBE_Q ?? 20);
const SECTIONS = 50;
const c = corpus(KIND, {
  docs: Math.ceil(N / SECTIONS),
  projects: 1,
  sections: SECTIONS,
  topics: Number(process.env.PROBE_TOPICS ?? 100),
});
const emb = createLocalEmbedder();
const lit = (v: number[]) => `{${v.map((x) => (x === 0 ? '0' : x.toPrecision(7))).join(',')}}`;

const db = await PGlite.create({
  extensions: { vector },
  startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'],
});
await db.exec('create extension vector; create table t (id int primary key, emb real[] not null)');
const notice = { onNotice: (n: { message?: string }) => process.stderr.write(`  NOTICE ${n.message}\n`) };
let embedMs = 0;
let insertMs = 0;
for (let d = 0; d < c.length; d++) {
  const doc = c.at(d);
  const e0 = performance.now();
  const vs = await emb.embed(doc.sections.map((s, i) => `${doc.title} › ${i}\n${s}`));
  embedMs += performance.now() - e0;
  const i0 = performance.now();
  const values = vs.map((v, i) => `(${d * SECTIONS + i}, '${lit(v)}')`).join(',');
  await db.exec(`insert into t values ${values}`);
  insertMs += performance.now() - i0;
}
process.stderr.write(
  `${N} chunks (${KIND}): embed ${(N / (embedMs / 1000)).toFixed(0)} chunks/s, insert ${(N / (insertMs / 1000)).toFixed(0)} chunks/s\n`,
);

// Exact top 6 of queries taken from a chunk, with the source chunk's rank.
const qr = rng(7);
let found = 0;
const queries: Array<{ v: string; exact: Set<number>; src: number }> = [];
for (let i = 0; i < Q; i++) {
  const d = Math.floor(qr() * c.length);
  const s = Math.floor(qr() * SECTIONS);
  const words = c.at(d).sections[s].split(' ');
  const start = Math.floor(qr() * Math.max(1, words.length - 6));
  const q = words.slice(start, start + 4 + Math.floor(qr() * 4)).join(' ');
  const [qv] = await emb.embed([q]);
  const r = await db.query<{ id: number; sim: number }>(
    `select id, 1 - (emb::vector(256) <=> $1::vector(256)) as sim from t order by emb::vector(256) <=> $1::vector(256) limit 20`,
    [`[${qv.join(',')}]`],
  );
  const src = d * SECTIONS + s;
  queries.push({ v: `[${qv.join(',')}]`, exact: new Set(r.rows.slice(0, 6).map((x) => x.id)), src });
  const rank = r.rows.findIndex((x) => x.id === src);
  if (rank >= 0 && rank < 6) found++;
  process.stderr.write(
    `  q${i} (${q.split(' ').length} words) source rank ${rank < 0 ? '>20' : rank + 1}; top 6 sims ${r.rows
      .slice(0, 6)
      .map((x) => x.sim.toFixed(3))
      .join(' ')}; 7th–20th ${r.rows[6].sim.toFixed(3)}…${r.rows[19].sim.toFixed(3)}\n`,
  );
}
process.stderr.write(`source in exact top 6: ${found}/${Q}\n`);

for (const b of BUILDS) {
  const [type, m, efc] = b.split(':');
  const expr = type === 'halfvec' ? 'emb::halfvec(256)' : 'emb::vector(256)';
  const ops = type === 'halfvec' ? 'halfvec_cosine_ops' : 'vector_cosine_ops';
  await db.exec('drop index if exists t_hnsw');
  await db.exec(`set maintenance_work_mem = '${MWM}'`);
  const b0 = performance.now();
  await db.query(
    `create index t_hnsw on t using hnsw ((${expr}) ${ops}) with (m = ${m}, ef_construction = ${efc})`,
    [],
    notice,
  );
  const size = await db.query<{ s: string }>(`select pg_size_pretty(pg_relation_size('t_hnsw')) as s`);
  process.stderr.write(
    `build ${b} mwm ${MWM}: ${((performance.now() - b0) / 1000).toFixed(1)} s, index ${size.rows[0].s}\n`,
  );
  for (const ef of (process.env.PROBE_EF ?? '40,100,200,400').split(',').map(Number)) {
    await db.exec(`set hnsw.ef_search = ${ef}`);
    let hits = 0;
    let src = 0;
    const lat: number[] = [];
    for (const q of queries) {
      const q0 = performance.now();
      const r = await db.query<{ id: number }>(`select id from t order by ${expr} <=> $1::${type}(256) limit 6`, [q.v]);
      lat.push(performance.now() - q0);
      hits += r.rows.filter((x) => q.exact.has(x.id)).length;
      if (r.rows.some((x) => x.id === q.src)) src++;
    }
    lat.sort((a, b) => a - b);
    process.stderr.write(
      `  ef_search ${ef}: recall@6 ${(hits / (6 * queries.length)).toFixed(3)}, source found ${(src / queries.length).toFixed(3)}, p50 ${lat[Math.floor(lat.length / 2)].toFixed(1)} ms\n`,
    );
  }
}
await db.close();
