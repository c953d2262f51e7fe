/**
 * Benchmark (web UI): what a first visit to the sign-in page costs, in Debian's Chromium against the real
 * service (`node server/start.js`) on the embedded database: bytes on the wire (JS + CSS + HTML as sent,
 * compressed; budget 300 kB), first contentful paint and total blocking time (sum over long tasks of the time
 * past 50 ms, until the page is idle). Baseline in the same run: the service's API reference page
 * (`/api/reference`, a prebuilt Swagger UI) loaded the same way; figures are medians of BENCH_RUNS cold loads
 * (new browser context each, cache empty), printed with their ratio to the baseline.
 *
 *   npx tsx bench/web-ui.ts          (BENCH_RUNS loads per page, default 5)
 */
import fs from 'node:fs';
import { CHROMIUM, launchChromium } from '../web/e2e/browser.ts';
import { ensureWebBuild } from '../web/build.js';
import { median, startNode, stop, table, tempDir, benchLine } from './lib/util.ts';

const runs = Number(process.env.BENCH_RUNS ?? 5);
if (!fs.existsSync(CHROMIUM)) {
  console.log(`skipped: no Chromium at ${CHROMIUM}`);
  process.exit(0);
}
await ensureWebBuild({ log: console.log });

interface Load {
  bytes: number;
  fcp: number;
  tbt: number;
}

const dir = tempDir('web-ui');
const server = await startNode('server/start.js', { DATA_DIR: dir, LOG_LEVEL: 'warn', BREACH_CHECK_URL: 'off' });
const browser = await launchChromium();

async function load(url: string, ready: string): Promise<Load> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  let bytes = 0;
  cdp.on('Network.loadingFinished', (e: { encodedDataLength: number }) => (bytes += e.encodedDataLength));
  await page.addInitScript(() => {
    const w = window as unknown as { __tbt: number };
    w.__tbt = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__tbt += Math.max(0, e.duration - 50);
    }).observe({ type: 'longtask', buffered: true });
  });
  await page.goto(url, { waitUntil: 'networkidle' });
  await page.locator(ready).first().waitFor();
  const { fcp, tbt } = await page.evaluate(() => ({
    fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
    tbt: (window as unknown as { __tbt: number }).__tbt,
  }));
  await context.close();
  return { bytes, fcp, tbt };
}

try {
  const pages = [
    { name: 'baseline: /api/reference', url: `${server.url}/api/reference`, ready: '#swagger-ui' },
    { name: 'sign-in page /login', url: `${server.url}/login`, ready: 'form button[type=submit]' },
  ];
  const results: Record<string, Load[]> = {};
  for (let i = 0; i < runs; i++) for (const p of pages) (results[p.name] ??= []).push(await load(p.url, p.ready));
  const med = (name: string, k: keyof Load) => median(results[name].map((r) => r[k]));
  const base = pages[0].name;
  const rows = pages.map((p) => {
    const kb = med(p.name, 'bytes') / 1000;
    return [
      p.name,
      `${kb.toFixed(1)} kB (×${(kb / (med(base, 'bytes') / 1000)).toFixed(2)})`,
      `${med(p.name, 'fcp').toFixed(0)} ms (×${(med(p.name, 'fcp') / med(base, 'fcp')).toFixed(2)})`,
      `${med(p.name, 'tbt').toFixed(0)} ms`,
    ];
  });
  console.log(`web UI first load, median of ${runs} cold loads each`);
  console.log(table(['page', 'bytes on the wire (compressed)', 'first contentful paint', 'total blocking time'], rows));
  const signIn = med(pages[1].name, 'bytes');
  console.log(
    `sign-in page: ${(signIn / 1000).toFixed(1)} kB of the 300 kB budget (${signIn <= 300_000 ? 'within' : 'OVER'})`,
  );
  benchLine('web-ui', {
    sign_in_kb: +(signIn / 1000).toFixed(1),
    fcp_ratio: +(med(pages[1].name, 'fcp') / med(base, 'fcp')).toFixed(2),
    tbt_ms: Math.round(med(pages[1].name, 'tbt')),
    baseline: 'the API reference page loaded the same way',
    aim: 'sign-in <= 300 kB',
  });
} finally {
  await browser.close();
  await stop(server.proc);
  fs.rmSync(dir, { recursive: true, force: true });
}
