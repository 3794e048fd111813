import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * A full garbage collection of the calling thread's heap, now. A PGlite start
 * leaves buffers behind (PostgreSQL's WebAssembly as read from its file, the
 * copy of the template PGlite unpacks), and a worker that then waits for
 * requests allocates too little for V8 ever to collect them: an idle
 * ephemeral store kept 13 MiB of them resident. Node has no call for it: V8
 * installs its `gc` function in contexts made while --expose-gc is set, so one
 * is made for it and the flag is put back (V8's flags are the process's).
 */
export function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  try {
    (runInNewContext("gc") as () => void)();
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}
