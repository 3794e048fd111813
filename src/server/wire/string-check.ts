import type { DescMessage, Message } from "@bufbuild/protobuf";
import { ScalarType } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { InvalidArgumentError } from "../../domain/errors.js";

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
    return next({ ...req, message: new CheckedStream(req.message[Symbol.asyncIterator](), req.method.input) });
  };
}

/** A request stream, each message checked as it is read (a class, not a generator per call: see call-end.ts). */
class CheckedStream<T extends Message> implements AsyncIterableIterator<T> {
  constructor(
    private readonly inner: AsyncIterator<T>,
    private readonly schema: DescMessage,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<T>> {
    const step = await this.inner.next();
    if (step.done) return step;
    try {
      checkStrings(this.schema, step.value);
    } catch (error) {
      // Refused: the rest of the stream is not read (a for-await over a generator closed it the same way).
      await this.inner.return?.();
      throw error;
    }
    return step;
  }

  async return(value?: unknown): Promise<IteratorResult<T>> {
    await this.inner.return?.(value);
    return { done: true, value: undefined };
  }
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
