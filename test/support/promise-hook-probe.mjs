// Preloaded into a process (NODE_OPTIONS=--import) to tell whether promise
// hooks are on: with no async hook enabled, a promise continuation runs with
// execution async id 0; an entered AsyncLocalStorage (on Node 20) or any
// enabled async hook gives it an id, and costs every promise of the process.
import { executionAsyncId } from "node:async_hooks";
process.stderr.write("promise-hook-probe: loaded\n");
const timer = setInterval(async () => {
  await null;
  if (executionAsyncId() !== 0) {
    process.stderr.write("promise-hook-probe: promise hooks are on\n");
    clearInterval(timer);
  }
}, 50);
timer.unref();
