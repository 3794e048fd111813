import { describe, expect, it } from "vitest";
import { viewingSurface } from "../../src/cli/trace.js";
import { InvalidArgumentError } from "../../src/domain/errors.js";

describe("recall trace --view: the viewing surface", () => {
  const config = { defaultSensitivityCeiling: "personal" as const };

  it("--surface names a ceiling or a surface id; unset, the configured default ceiling applies", () => {
    expect(viewingSurface("public", undefined, config)).toEqual({ surfaceId: "", sensitivityCeiling: 1 });
    expect(viewingSurface("restricted", undefined, config)).toEqual({ surfaceId: "", sensitivityCeiling: 4 });
    expect(viewingSurface("slack:#team", undefined, config)).toEqual({ surfaceId: "slack:#team", sensitivityCeiling: 2 });
    expect(viewingSurface(undefined, undefined, config)).toEqual({ surfaceId: "", sensitivityCeiling: 2 });
    // Only the four level names are ceilings, not whatever an object happens to have.
    expect(viewingSurface("toString", undefined, config)).toEqual({ surfaceId: "toString", sensitivityCeiling: 2 });
  });

  it("--ceiling sets the ceiling explicitly and must be a known level", () => {
    expect(viewingSurface("slack:#team", "public", config)).toEqual({ surfaceId: "slack:#team", sensitivityCeiling: 1 });
    expect(viewingSurface(undefined, "top-secret", config)).toBeInstanceOf(InvalidArgumentError);
  });
});
