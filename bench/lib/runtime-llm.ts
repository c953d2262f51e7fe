/**
 * The runtime bench's LLM stand-in (`bench/runtime.ts`): answers a run's first model call with one tool call
 * (`list_files`) and the call after the tool's result with text, at once. Run as a child process of the bench
 * (`startRuntimeLlm`), as a real provider is another machine: its HTTP server's work (reading the request bodies,
 * writing the event streams) is then not counted as the service's, nor does it hold the service's event loop.
 * `BENCH_LLM_IN_PROCESS=1` keeps it in the bench's own process (how the bench ran before 2026-11-28, 20:30).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startLlmStandIn, type Responder } from '../../server/test/standins/llm.ts';

/** Tool call first, then text once the tool's result is in the conversation. */
export const runtimeResponder: Responder = (req) => {
  const last = req.body.messages?.at(-1);
  const afterTool = Array.isArray(last?.content) && last.content.some((b: any) => b.type === 'tool_result');
  return afterTool
    ? { content: [{ type: 'text', text: 'Here is what I found.' }] }
    : { content: [{ type: 'tool_use', name: 'list_files', input: {} }] };
};

/**
 * Start the stand-in, in a child process unless `inProcess`. Returns its Anthropic base URL and a `close`.
 * The request log is emptied as requests come (it would hold every request body of the runs).
 */
export async function startRuntimeLlm(inProcess: boolean): Promise<{ anthropicUrl: string; close(): Promise<void> }> {
  if (inProcess) {
    const s = await startHere();
    return { anthropicUrl: s.anthropicUrl, close: () => s.close() };
  }
  const child = fork(fileURLToPath(import.meta.url), ['--child'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const anthropicUrl = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: any) => resolve(m.anthropicUrl));
    child.once('exit', (code) => reject(new Error(`LLM stand-in exited (${code})`)));
  });
  return {
    anthropicUrl,
    close: () =>
      new Promise<void>((r) => {
        child.once('exit', () => r());
        child.kill();
      }),
  };
}

/** The stand-in in this process, its request log emptied as requests come. */
async function startHere() {
  const s = await startLlmStandIn({
    responder: (req) => {
      s.requests.length = 0;
      return runtimeResponder(req);
    },
  });
  return s;
}

if (process.argv.includes('--child')) {
  const s = await startHere();
  process.send!({ anthropicUrl: s.anthropicUrl });
  process.on('disconnect', () => process.exit(0));
}
