import type { DescMessage, Message } from "@bufbuild/protobuf";
import { ScalarType } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { InvalidArgumentError } from "../domain/errors.js";

/**
 * Every string field of every request, checked once before any handler: no
 * NUL. PostgreSQL text cannot hold one, so it would fail deep in the store,
 * or worse, after the answer, in the trace write. (Invalid UTF-8 and lone
 * surrogates never get this far: the protobuf decoder refuses them, see
 * decode-errors.ts.) Walking the descriptor covers fields added later
 * without anyone remembering to.
 */

const NUL = "\u0000";

export function stringCheckInterceptor(): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) {
      checkStrings(req.method.input, req.message);
      return next(req);
    }
    const input = req.message;
    const schema = req.method.input;
    return next({
      ...req,
      message: (async function* () {
        for await (const message of input) {
          checkStrings(schema, message);
          yield message;
        }
      })(),
    });
  };
}

/** Throws InvalidArgumentError naming the first bad string by its snake_case path. */
export function checkStrings(schema: DescMessage, message: Message, at = ""): void {
  const record = message as unknown as Record<string, unknown>;
  for (const field of schema.fields) {
    const path = `${at}${field.name}`;
    const value = field.oneof ? oneofValue(record[field.oneof.localName], field.localName) : record[field.localName];
    if (value === undefined || value === null) continue;
    switch (field.fieldKind) {
      case "scalar":
        if (field.scalar === ScalarType.STRING) checkString(value as string, path);
        break;
      case "message":
        checkStrings(field.message, value as Message, `${path}.`);
        break;
      case "list":
        (value as unknown[]).forEach((item, i) => {
          if (field.listKind === "scalar" && field.scalar === ScalarType.STRING) checkString(item as string, `${path}[${i}]`);
          if (field.listKind === "message") checkStrings(field.message, item as Message, `${path}[${i}].`);
        });
        break;
      case "map":
        for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
          const entry = `${path}[${JSON.stringify(key.slice(0, 40))}]`;
          checkString(key, entry);
          if (field.mapKind === "scalar" && field.scalar === ScalarType.STRING) checkString(item as string, entry);
          if (field.mapKind === "message") checkStrings(field.message, item as Message, `${entry}.`);
        }
        break;
      case "enum":
        break;
    }
  }
}

function oneofValue(oneof: unknown, localName: string): unknown {
  const o = oneof as { case?: string; value?: unknown } | undefined;
  return o?.case === localName ? o.value : undefined;
}

function checkString(value: string, path: string): void {
  if (value.includes(NUL)) throw new InvalidArgumentError(path, "must not contain a NUL character");
}
