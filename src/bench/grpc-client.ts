import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

/**
 * The benchmark's client: @grpc/grpc-js with the .proto files loaded at run
 * time, as an agent runtime in another language would call the sidecar (no
 * shared code with the server's generated stubs). One channel for all calls,
 * the health check included: concurrent calls are multiplexed on it, as from
 * one agent process.
 */

const PROTO_DIR = fileURLToPath(new URL("../../proto/", import.meta.url));

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export interface BenchClient {
  /** A Recall stream, resolved with its final RecallResult; as `principal` when given, else the client's own. */
  recall(request: Json, principal?: string): Promise<Json>;
  search(request: Json, principal?: string): Promise<Json>;
  /** grpc.health.v1.Health/Check of the whole server: the floor of any call on this channel. */
  healthCheck(): Promise<string>;
  close(): void;
}

export function connectBench(address: string, identity: { tenant: string; principal: string }, deadlineMs: number): BenchClient {
  const definition = protoLoader.loadSync(["memory/v1/memory_service.proto", "grpc/health/v1/health.proto"], {
    includeDirs: [PROTO_DIR],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const loaded = grpc.loadPackageDefinition(definition) as any;
  const memory = new loaded.memory.v1.MemoryService(address, grpc.credentials.createInsecure()) as grpc.Client & Json;
  // The same channel, so the floor pays exactly what every other call pays to cross it.
  const health = new loaded.grpc.health.v1.Health(address, grpc.credentials.createInsecure(), {
    channelOverride: memory.getChannel(),
  }) as grpc.Client & Json;
  const metadata = new Map<string, grpc.Metadata>();
  const md = (principal = identity.principal) => {
    let m = metadata.get(principal);
    if (!m) {
      m = new grpc.Metadata();
      m.set("x-tenant-id", identity.tenant);
      m.set("x-principal-id", principal);
      metadata.set(principal, m);
    }
    return m;
  };
  const deadline = () => ({ deadline: Date.now() + deadlineMs });
  return {
    recall(request, principal) {
      return new Promise((resolve, reject) => {
        let result: Json | undefined;
        const call = memory.Recall(request, md(principal), deadline());
        call.on("data", (event: Json) => {
          if (event.result) result = event.result;
        });
        call.on("error", reject);
        call.on("end", () => (result ? resolve(result) : reject(new Error("Recall stream ended without a result"))));
      });
    },
    search(request, principal) {
      return new Promise((resolve, reject) => {
        memory.Search(request, md(principal), deadline(), (err: grpc.ServiceError | null, res: Json) =>
          err ? reject(err) : resolve(res.result as Json),
        );
      });
    },
    healthCheck() {
      return new Promise((resolve, reject) => {
        health.Check({ service: "" }, deadline(), (err: grpc.ServiceError | null, res: Json) =>
          err ? reject(err) : resolve(String(res.status)),
        );
      });
    },
    close() {
      health.close();
      memory.close();
    },
  };
}
