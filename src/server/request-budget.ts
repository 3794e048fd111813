import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Bounds the bytes of requests in flight, for the whole process and for each
 * connection. Without it every stream of every connection is buffered and
 * decoded: 100 concurrent 3.9 MB requests on one connection took the sidecar
 * from 76 to 928 MiB (issue 38).
 *
 * A request reserves its bytes as they are announced, before they are read:
 * each gRPC/Connect-streaming message its declared length (from the 5-byte
 * prefix), a Connect unary body its Content-Length, anything else each chunk
 * as it comes. A reservation that does not fit fails the call at once with
 * RESOURCE_EXHAUSTED, without reading the message; what a call reserved is
 * given back when its response closes. The same scan of the message prefixes
 * rejects a flag byte other than 0 or 1 (the gRPC wire protocol's
 * Compressed-Flag; connect-es reads only its lowest bit).
 */

export class ByteBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  get inUse(): number {
    return this.used;
  }

  take(bytes: number): boolean {
    if (this.used + bytes > this.limit) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}

/** Where a request's reservations go: the process's budget and its connection's. */
export interface RequestBudgets {
  process: ByteBudget;
  connection: ByteBudget;
  /** Messages larger than this are left to connect-es's own check (RESOURCE_EXHAUSTED, with its message). */
  readMaxBytes: number;
}

/** The part of a Node request this needs (HTTP/1.1 and HTTP/2 alike). */
interface MeteredRequest extends AsyncIterable<Buffer> {
  headers: Record<string, string | string[] | undefined>;
}

/** A call refused here: the caller may retry later, on this or another connection. */
export class RequestBudgetError extends ConnectError {
  constructor(scope: "process" | "connection", limit: number) {
    super(`request: too many request bytes in flight (${scope} limit ${limit} bytes); retry later`, Code.ResourceExhausted);
  }
}

const ENVELOPED = /^application\/(grpc|grpc-web|connect\+)/;
const PREFIX_BYTES = 5;

/**
 * Makes `req` reserve from `budgets` as it is read (its async iterator, which
 * is what connect-node reads). Returns the function that gives everything
 * back; call it once the call's response has closed.
 */
export function meterRequest(req: MeteredRequest, budgets: RequestBudgets): () => void {
  let reserved = 0;
  const reserve = (bytes: number) => {
    if (!budgets.process.take(bytes)) throw new RequestBudgetError("process", budgets.process.limit);
    if (!budgets.connection.take(bytes)) {
      budgets.process.give(bytes);
      throw new RequestBudgetError("connection", budgets.connection.limit);
    }
    reserved += bytes;
  };
  const contentType = String(req.headers["content-type"] ?? "");
  const enveloped = ENVELOPED.test(contentType);
  const declared = Number(req.headers["content-length"]);
  const announced = !enveloped && Number.isSafeInteger(declared) && declared > 0 && declared <= budgets.readMaxBytes;
  const chunks = req[Symbol.asyncIterator].bind(req);
  const scanner = enveloped ? new PrefixScanner(budgets.readMaxBytes, reserve) : undefined;
  let first = true;
  Object.defineProperty(req, Symbol.asyncIterator, {
    configurable: true,
    value: async function* metered(): AsyncGenerator<Buffer> {
      for await (const chunk of { [Symbol.asyncIterator]: chunks }) {
        if (first && announced) reserve(declared);
        first = false;
        if (scanner) scanner.scan(chunk);
        else if (!announced) reserve(chunk.length);
        yield chunk;
      }
    },
  });
  return () => {
    budgets.process.give(reserved);
    budgets.connection.give(reserved);
    reserved = 0;
  };
}

/**
 * Follows the length-prefixed messages of an enveloped body across chunks:
 * checks each flag byte and reserves each message's bytes when its prefix is
 * complete, before its payload is read.
 */
class PrefixScanner {
  /** Bytes of the current message's payload still to come; when 0, a prefix is being read. */
  private payloadLeft = 0;
  private readonly prefix = Buffer.alloc(PREFIX_BYTES);
  private prefixHave = 0;

  constructor(
    private readonly readMaxBytes: number,
    private readonly reserve: (bytes: number) => void,
  ) {}

  scan(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.payloadLeft > 0) {
        const take = Math.min(this.payloadLeft, chunk.length - at);
        this.payloadLeft -= take;
        at += take;
        continue;
      }
      const take = Math.min(PREFIX_BYTES - this.prefixHave, chunk.length - at);
      if (this.prefixHave === 0) checkFlag(chunk[at]!);
      chunk.copy(this.prefix, this.prefixHave, at, at + take);
      this.prefixHave += take;
      at += take;
      if (this.prefixHave < PREFIX_BYTES) continue;
      this.prefixHave = 0;
      const length = this.prefix.readUInt32BE(1);
      // Over the per-message limit: connect-es refuses it from the same prefix, with its own message.
      if (length <= this.readMaxBytes) this.reserve(PREFIX_BYTES + length);
      this.payloadLeft = length;
    }
  }
}

/** A request message's flag byte: 0 (uncompressed) or 1 (compressed); any other bit is a protocol error. */
function checkFlag(flag: number): void {
  if (flag === 0 || flag === 1) return;
  throw new ConnectError(`request: message flag 0x${flag.toString(16).padStart(2, "0")} is not 0 or 1`, Code.InvalidArgument);
}
