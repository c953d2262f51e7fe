/**
 * The model stand-in of scripts/image-smoke.sh: the Anthropic Messages API stand-in of the tests
 * (server/test/standins/llm.ts) on 127.0.0.1, answering every message with `IMAGE_SMOKE_REPLY`. Prints
 * `LLM_BASE_URL=<url>` once it listens, then serves until it is stopped (SIGTERM) or 10 minutes have passed.
 */
import { startLlmStandIn } from '../server/test/standins/llm.ts';

const reply = process.env.IMAGE_SMOKE_REPLY || 'Hello from the stand-in model.';
const llm = await startLlmStandIn({ responder: () => ({ content: [{ type: 'text', text: reply }] }) });
console.log(`LLM_BASE_URL=${llm.anthropicUrl}`);
const stop = () => process.exit(0);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
setTimeout(stop, 10 * 60_000);
