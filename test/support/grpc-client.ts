import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

/**
 * An independent client: @grpc/grpc-js with the .proto files loaded at run
 * time by @grpc/proto-loader, sharing no code with the server's generated
 * stubs. Fields keep their snake_case names; enums come back as names.
 */

const PROTO_DIR = fileURLToPath(new URL("../../proto/", import.meta.url));

const definition = protoLoader.loadSync(
  [
    "memory/v1/memory_service.proto",
    "memory/v1/write_service.proto",
    "memory/v1/inspect_service.proto",
    "grpc/health/v1/health.proto",
    "grpc/reflection/v1/reflection.proto",
    "grpc/reflection/v1alpha/reflection.proto",
  ],
  { includeDirs: [PROTO_DIR], keepCase: true, longs: String, enums: String, defaults: true, oneofs: true },
);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const loaded = grpc.loadPackageDefinition(definition) as any;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export interface Identity {
  tenant?: string;
  principal?: string;
  /** Sent as `authorization: Bearer …`. */
  token?: string;
}

export function metadata(identity: Identity): grpc.Metadata {
  const md = new grpc.Metadata();
  if (identity.token !== undefined) md.set("authorization", `Bearer ${identity.token}`);
  if (identity.tenant !== undefined) md.set("x-tenant-id", identity.tenant);
  if (identity.principal !== undefined) md.set("x-principal-id", identity.principal);
  return md;
}

export interface Clients {
  memory: grpc.Client & Json;
  write: grpc.Client & Json;
  inspect: grpc.Client & Json;
  health: grpc.Client & Json;
  reflectionV1: grpc.Client & Json;
  reflectionV1alpha: grpc.Client & Json;
  close(): void;
}

/** `target` is "127.0.0.1:PORT" or "unix:///path/to.sock"; plaintext unless `creds` say otherwise. */
export function connect(target: string, creds: grpc.ChannelCredentials = grpc.credentials.createInsecure()): Clients {
  const memory = new loaded.memory.v1.MemoryService(target, creds);
  const write = new loaded.memory.v1.MemoryWriteService(target, creds);
  const inspect = new loaded.memory.v1.InspectService(target, creds);
  const health = new loaded.grpc.health.v1.Health(target, creds);
  const reflectionV1 = new loaded.grpc.reflection.v1.ServerReflection(target, creds);
  const reflectionV1alpha = new loaded.grpc.reflection.v1alpha.ServerReflection(target, creds);
  return {
    memory,
    write,
    inspect,
    health,
    reflectionV1,
    reflectionV1alpha,
    close() {
      for (const c of [memory, write, inspect, health, reflectionV1, reflectionV1alpha]) c.close();
    },
  };
}

/** A unary call as a promise; rejects with the grpc ServiceError (code, details). */
export function unary(client: Json, method: string, request: Json, identity: Identity, deadlineMs = 10_000): Promise<Json> {
  return new Promise((resolve, reject) => {
    client[method](request, metadata(identity), { deadline: Date.now() + deadlineMs }, (err: grpc.ServiceError | null, res: Json) =>
      err ? reject(err) : resolve(res),
    );
  });
}

/** A server-streaming call collected into an array of messages. */
export function serverStream(client: Json, method: string, request: Json, identity: Identity, deadlineMs = 10_000): Promise<Json[]> {
  return new Promise((resolve, reject) => {
    const messages: Json[] = [];
    const call = client[method](request, metadata(identity), { deadline: Date.now() + deadlineMs });
    call.on("data", (m: Json) => messages.push(m));
    call.on("error", reject);
    call.on("end", () => resolve(messages));
  });
}

/** Expects a call to fail; returns the error's code and details. */
export async function failure(promise: Promise<unknown>): Promise<{ code: grpc.status; details: string }> {
  try {
    await promise;
  } catch (err) {
    const e = err as grpc.ServiceError;
    return { code: e.code, details: e.details };
  }
  throw new Error("expected the call to fail, it succeeded");
}

export { grpc };
