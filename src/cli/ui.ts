import { parseArgs } from "node:util";
import type { Config } from "../config/config.js";
import { createLogger } from "../log/logger.js";
import { startSidecar } from "../sidecar/start-sidecar.js";
import { readUiRecord } from "../inspect/ui-runtime-file.js";
import { untilSignalled } from "./serve.js";
import { UsageError } from "./usage-error.js";

/**
 * `recall ui`: the memory inspector's address. A sidecar already serving the
 * page on RECALL_PORT is found through its runtime file and its address
 * printed; otherwise a sidecar is started here with the page on
 * (RECALL_UI=on), its address printed, and it serves until Ctrl-C.
 */
export async function runUi(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { tenant: { type: "string" }, principal: { type: "string" } } });
  if ((values.tenant === undefined) !== (values.principal === undefined)) throw new UsageError("--tenant and --principal go together");
  const principal = values.tenant && values.principal ? { tenantId: values.tenant, principalId: values.principal } : undefined;
  const withPrincipal = (url: string) => {
    if (!principal || !url.includes("token=")) return url;
    const u = new URL(url);
    u.searchParams.set("tenant", principal.tenantId);
    u.searchParams.set("principal", principal.principalId);
    return u.toString();
  };
  const running = config.listen.port === 0 ? null : await readUiRecord(config.listen.port);
  if (running) {
    process.stdout.write(`memory inspector of the sidecar running as pid ${running.pid}:\n  ${withPrincipal(running.url)}\n`);
    return 0;
  }
  const logger = createLogger(config.logLevel === "info" ? "warn" : config.logLevel);
  const sidecar = await startSidecar({ ...config, ui: true }, logger);
  process.stdout.write(`memory inspector (the token in it is made for this start):\n  ${sidecar.inspector!.address(principal)}\nCtrl-C to stop.\n`);
  await untilSignalled(sidecar, logger);
  return 0;
}
