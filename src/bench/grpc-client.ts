import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

/**
 * The benchmark's client: @grpc/grpc-js with the .proto files loaded at run
 * time, as an agent runtime in another language would call the sidecar (no
 * shared code with the server's generated stubs). One channel for all calls:
 * concurrent calls are multiplexed on it, as from one agent process.
 */

const PROTO_DIR = fileURLToPath(new URL("../../proto/", import.meta.url));

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export interface BenchClient {
  recall(request: Json): Promise<Json>;
  search(request: Json): Promise<Json>;
  close(): void;
}

export function connectBench(address: string, identity: { tenant: string; principal: string }, deadlineMs: number): BenchClient {
  const definition = protoLoader.loadSync(["memory/v1/memory_service.proto"], {
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
  const md = new grpc.Metadata();
  md.set("x-tenant-id", identity.tenant);
  md.set("x-principal-id", identity.principal);
  return {
    /** A Recall stream, resolved with its final RecallResult when the stream ends. */
    recall(request) {
      return new Promise((resolve, reject) => {
        let result: Json | undefined;
        const call = memory.Recall(request, md, { deadline: Date.now() + deadlineMs });
        call.on("data", (event: Json) => {
          if (event.result) result = event.result;
        });
        call.on("error", reject);
        call.on("end", () => (result ? resolve(result) : reject(new Error("Recall stream ended without a result"))));
      });
    },
    search(request) {
      return new Promise((resolve, reject) => {
        memory.Search(request, md, { deadline: Date.now() + deadlineMs }, (err: grpc.ServiceError | null, res: Json) =>
          err ? reject(err) : resolve(res.result as Json),
        );
      });
    },
    close() {
      memory.close();
    },
  };
}
