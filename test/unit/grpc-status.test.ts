import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { callLogLevel, statusName } from "../../src/server/grpc-status.js";

describe("gRPC status names and call log levels", () => {
  it("spells every code as gRPC does", () => {
    expect(statusName(undefined)).toBe("OK");
    expect(statusName(Code.InvalidArgument)).toBe("INVALID_ARGUMENT");
    expect(statusName(Code.Canceled)).toBe("CANCELLED");
    expect(statusName(Code.DeadlineExceeded)).toBe("DEADLINE_EXCEEDED");
    expect(statusName(Code.Unauthenticated)).toBe("UNAUTHENTICATED");
    expect(statusName(Code.DataLoss)).toBe("DATA_LOSS");
  });

  it("server-side failures at warn or error, client errors at info", () => {
    expect(callLogLevel(undefined)).toBe("info");
    expect(callLogLevel(Code.InvalidArgument)).toBe("info");
    expect(callLogLevel(Code.NotFound)).toBe("info");
    expect(callLogLevel(Code.Canceled)).toBe("info");
    expect(callLogLevel(Code.Unavailable)).toBe("warn");
    expect(callLogLevel(Code.DeadlineExceeded)).toBe("warn");
    expect(callLogLevel(Code.Internal)).toBe("error");
  });
});
