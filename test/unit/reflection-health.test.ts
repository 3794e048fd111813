import { describe, it, expect } from "vitest";
import { fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import * as v1 from "../../src/gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../src/gen/grpc/reflection/v1alpha/reflection_pb.js";
import { MemoryService } from "../../src/gen/memory/v1/memory_service_pb.js";
import { MemoryWriteService } from "../../src/gen/memory/v1/write_service_pb.js";
import { HealthStatus, registerHealth } from "../../src/server/health.js";
import { registerReflection } from "../../src/server/reflection.js";

const READ = "memory.v1.MemoryService";
const WRITE = "memory.v1.MemoryWriteService";

function setup() {
  const health = new HealthStatus([READ, WRITE]);
  const transport = createRouterTransport((router) => {
    registerHealth(router, health);
    registerReflection(router, [MemoryService, MemoryWriteService, Health]);
  });
  return {
    health,
    healthClient: createClient(Health, transport),
    reflection: createClient(v1.ServerReflection, transport),
    reflectionAlpha: createClient(v1alpha.ServerReflection, transport),
  };
}

type ReflectionRequest = MessageInitShape<typeof v1.ServerReflectionRequestSchema>;

/** Sends the requests over one bidi stream and collects every answer. */
async function reflect(
  client: ReturnType<typeof setup>["reflection"],
  requests: ReflectionRequest[],
): Promise<v1.ServerReflectionResponse[]> {
  async function* send() {
    yield* requests;
  }
  const out: v1.ServerReflectionResponse[] = [];
  for await (const res of client.serverReflectionInfo(send())) out.push(res);
  return out;
}

async function reflectOne(req: ReflectionRequest): Promise<v1.ServerReflectionResponse> {
  const [res, ...rest] = await reflect(setup().reflection, [req]);
  expect(rest).toHaveLength(0);
  if (res === undefined) throw new Error("no response");
  return res;
}

function fileNames(res: v1.ServerReflectionResponse): string[] {
  if (res.messageResponse.case !== "fileDescriptorResponse") {
    throw new Error(`expected files, got ${res.messageResponse.case}: ${JSON.stringify(res.messageResponse.value)}`);
  }
  return res.messageResponse.value.fileDescriptorProto.map(
    (bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name,
  );
}

function errorCode(res: v1.ServerReflectionResponse): number | undefined {
  return res.messageResponse.case === "errorResponse" ? res.messageResponse.value.errorCode : undefined;
}

describe("server reflection", () => {
  it("lists the given services and both reflection services", async () => {
    const res = await reflectOne({ host: "localhost", messageRequest: { case: "listServices", value: "*" } });
    expect(res.messageResponse.case).toBe("listServicesResponse");
    const names =
      res.messageResponse.case === "listServicesResponse"
        ? res.messageResponse.value.service.map((s) => s.name)
        : [];
    expect(names.sort()).toEqual(
      [
        READ,
        WRITE,
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
      ].sort(),
    );
    // valid_host and original_request are echoed.
    expect(res.validHost).toBe("localhost");
    expect(res.originalRequest?.messageRequest).toEqual({ case: "listServices", value: "*" });
  });

  it("returns a service's file with all transitive dependencies, once each", async () => {
    const names = fileNames(
      await reflectOne({ messageRequest: { case: "fileContainingSymbol", value: READ } }),
    );
    expect(names[0]).toBe("memory/v1/memory_service.proto");
    expect(names).toContain("memory/v1/types.proto");
    expect(names).toContain("google/protobuf/timestamp.proto");
    expect(new Set(names).size).toBe(names.length);
  });

  it("decodes to descriptors that actually describe the service", async () => {
    const res = await reflectOne({
      messageRequest: { case: "fileByFilename", value: "memory/v1/memory_service.proto" },
    });
    if (res.messageResponse.case !== "fileDescriptorResponse") throw new Error("expected files");
    const first = res.messageResponse.value.fileDescriptorProto[0];
    if (first === undefined) throw new Error("no files");
    const file = fromBinary(FileDescriptorProtoSchema, first);
    expect(file.package).toBe("memory.v1");
    expect(file.service.map((s) => s.name)).toEqual(["MemoryService"]);
    expect(file.dependency).toContain("memory/v1/types.proto");
  });

  it("resolves methods, fields and nested members by their parent", async () => {
    const method = await reflectOne({
      messageRequest: { case: "fileContainingSymbol", value: `${READ}.Recall` },
    });
    expect(fileNames(method)[0]).toBe("memory/v1/memory_service.proto");

    const field = await reflectOne({
      messageRequest: { case: "fileContainingSymbol", value: "memory.v1.RecallRequest.query" },
    });
    expect(fileNames(field)[0]).toBe("memory/v1/memory_service.proto");

    const wkt = await reflectOne({
      messageRequest: { case: "fileContainingSymbol", value: "google.protobuf.Timestamp" },
    });
    expect(fileNames(wkt)).toEqual(["google/protobuf/timestamp.proto"]);
  });

  it("answers unknown names with NOT_FOUND and keeps the stream open", async () => {
    const responses = await reflect(setup().reflection, [
      { messageRequest: { case: "fileContainingSymbol", value: "memory.v1.Nope" } },
      { messageRequest: { case: "fileContainingSymbol", value: `${READ}.Nope` } },
      { messageRequest: { case: "fileByFilename", value: "nope.proto" } },
      {
        messageRequest: {
          case: "fileContainingExtension",
          value: { containingType: "memory.v1.RecallRequest", extensionNumber: 100 },
        },
      },
      { messageRequest: { case: "allExtensionNumbersOfType", value: "memory.v1.Nope" } },
      { messageRequest: { case: "fileContainingSymbol", value: READ } },
    ]);
    expect(responses.map(errorCode)).toEqual([5, 5, 5, 5, 5, undefined]);
    const first = responses[0];
    expect(first?.messageResponse.case === "errorResponse" && first.messageResponse.value.errorMessage).toContain(
      "memory.v1.Nope",
    );
  });

  it("lists no extension numbers for a known message", async () => {
    const res = await reflectOne({
      messageRequest: { case: "allExtensionNumbersOfType", value: "memory.v1.RecallRequest" },
    });
    expect(res.messageResponse).toEqual({
      case: "allExtensionNumbersResponse",
      value: expect.objectContaining({ baseTypeName: "memory.v1.RecallRequest", extensionNumber: [] }),
    });
  });

  it("serves v1alpha with the same answers", async () => {
    const { reflectionAlpha } = setup();
    async function* send() {
      yield { host: "h", messageRequest: { case: "fileContainingSymbol" as const, value: READ } };
      yield { messageRequest: { case: "fileContainingSymbol" as const, value: "memory.v1.Nope" } };
    }
    const responses: v1alpha.ServerReflectionResponse[] = [];
    for await (const res of reflectionAlpha.serverReflectionInfo(send())) responses.push(res);

    expect(responses).toHaveLength(2);
    const [files, missing] = responses;
    expect(files?.$typeName).toBe("grpc.reflection.v1alpha.ServerReflectionResponse");
    expect(files?.validHost).toBe("h");
    if (files?.messageResponse.case !== "fileDescriptorResponse") throw new Error("expected files");
    const names = files.messageResponse.value.fileDescriptorProto.map(
      (b) => fromBinary(FileDescriptorProtoSchema, b).name,
    );
    expect(names).toContain("memory/v1/types.proto");
    expect(missing?.messageResponse.case === "errorResponse" && missing.messageResponse.value.errorCode).toBe(5);
  });
});

describe("health", () => {
  it("Check fails with NotFound for an unknown service", async () => {
    const { healthClient } = setup();
    const err = await healthClient.check({ service: "nope.v1.Nope" }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err?.code).toBe(Code.NotFound);
    expect(err?.rawMessage).toBe('unknown service "nope.v1.Nope"');
  });

  it("Check reports NOT_SERVING until set, then SERVING", async () => {
    const { health, healthClient } = setup();
    expect((await healthClient.check({ service: READ })).status).toBe(ServingStatus.NOT_SERVING);
    health.set(READ, ServingStatus.SERVING);
    expect((await healthClient.check({ service: READ })).status).toBe(ServingStatus.SERVING);
    // The whole-server entry is separate and still NOT_SERVING.
    expect((await healthClient.check({ service: "" })).status).toBe(ServingStatus.NOT_SERVING);
    health.setAll(ServingStatus.SERVING);
    expect((await healthClient.check({ service: "" })).status).toBe(ServingStatus.SERVING);
    expect(health.get(WRITE)).toBe(ServingStatus.SERVING);
  });

  it("Watch yields the current status, each change, and ends on shutdown", async () => {
    const { health, healthClient } = setup();
    const stream = healthClient.watch({ service: READ })[Symbol.asyncIterator]();

    expect((await stream.next()).value?.status).toBe(ServingStatus.NOT_SERVING);
    expect(health.listenerCount).toBe(1);

    health.set(READ, ServingStatus.SERVING);
    expect((await stream.next()).value?.status).toBe(ServingStatus.SERVING);

    health.shutdown();
    expect((await stream.next()).value?.status).toBe(ServingStatus.NOT_SERVING);
    expect((await stream.next()).done).toBe(true);
    expect(health.listenerCount).toBe(0);

    // Frozen after shutdown.
    health.set(READ, ServingStatus.SERVING);
    expect(health.get(READ)).toBe(ServingStatus.NOT_SERVING);
  });

  it("Watch reports SERVICE_UNKNOWN without ending, then the status once known", async () => {
    const { health, healthClient } = setup();
    const stream = healthClient.watch({ service: "late.v1.Service" })[Symbol.asyncIterator]();
    expect((await stream.next()).value?.status).toBe(ServingStatus.SERVICE_UNKNOWN);
    health.set("late.v1.Service", ServingStatus.SERVING);
    expect((await stream.next()).value?.status).toBe(ServingStatus.SERVING);
    health.shutdown();
  });

  it("Watch releases its listener when the client cancels", async () => {
    const { health, healthClient } = setup();
    const abort = new AbortController();
    const stream = healthClient.watch({ service: READ }, { signal: abort.signal })[Symbol.asyncIterator]();
    expect((await stream.next()).value?.status).toBe(ServingStatus.NOT_SERVING);
    expect(health.listenerCount).toBe(1);

    const pending = stream.next();
    abort.abort();
    await expect(pending).rejects.toMatchObject({ code: Code.Canceled });
    await expect.poll(() => health.listenerCount).toBe(0);
  });
});
