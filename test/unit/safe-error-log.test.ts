import { describe, expect, it } from "vitest";
import { safeErrorLog } from "../../src/log/safe-error-log.js";

describe("safeErrorLog", () => {
  it("keeps a driver error's kind and codes, and none of the values it quotes or carries", () => {
    const pg = Object.assign(new Error('invalid input syntax for type uuid: "Andy keeps bees"'), {
      code: "22P02",
      severity: "ERROR",
      routine: "string_to_uuid",
      detail: "Failing row contains (Andy keeps bees).",
      where: "unnamed portal parameter $5 = 'Andy keeps bees'",
      params: ["Andy keeps bees"],
      query: "INSERT INTO beliefs …",
    });
    const logged = JSON.stringify(safeErrorLog(pg));
    expect(logged).not.toContain("bees");
    expect(safeErrorLog(pg)).toMatchObject({ type: "Error", code: "22P02", routine: "string_to_uuid", message: 'invalid input syntax for type uuid: "…"' });
  });

  it("keeps identifiers quoted mid-sentence, and ordinary errors whole", () => {
    const pg = Object.assign(new Error('new row for relation "beliefs" violates check constraint "beliefs_confidence_check"'), {
      code: "23514",
      constraint_name: "beliefs_confidence_check",
    });
    expect(safeErrorLog(pg)).toMatchObject({ message: pg.message, constraint_name: "beliefs_confidence_check" });
    const plain = new TypeError("Cannot read properties of null (reading 'write')");
    expect(safeErrorLog(plain)).toMatchObject({ type: "TypeError", message: plain.message, stack: plain.stack });
  });
});
