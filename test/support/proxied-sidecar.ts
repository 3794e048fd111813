import { connect, type Clients } from "./grpc-client.js";
import { FaultProxy } from "./fault-proxy.js";
import { startSidecarProcess, type SidecarProcess } from "./sidecar-process.js";
import { freshPostgresDatabase } from "./stores.js";

/** A sidecar process on a fresh PostgreSQL database reached through a FaultProxy, and a client for it. */
export interface ProxiedSidecar {
  sidecar: SidecarProcess;
  proxy: FaultProxy;
  c: Clients;
  /** The database's own URL, not through the proxy. */
  databaseUrl: string;
  stop(): Promise<void>;
}

export async function startProxiedSidecar(env: Record<string, string> = {}): Promise<ProxiedSidecar> {
  const db = await freshPostgresDatabase();
  const proxy = await FaultProxy.for(db.url);
  const sidecar = await startSidecarProcess("pglite", { RECALL_DATABASE_URL: proxy.via(db.url), ...env });
  const c = connect(sidecar.address);
  return {
    sidecar,
    proxy,
    c,
    databaseUrl: db.url,
    async stop() {
      c.close();
      await sidecar.stop();
      await proxy.close();
      await db.drop();
    },
  };
}
