import * as net from "node:net";

/**
 * HTTP/2 frames written by hand on a plain TCP socket: a client that does
 * what node:http2 refuses to (open a stream after GOAWAY, send broken
 * frames). Headers are HPACK literals without indexing or Huffman coding,
 * which every decoder must accept; the server's header blocks are not
 * decoded, only frame types, flags, stream ids and error codes.
 */

export const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8 } as const;
export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK header block of "literal never indexed, new name" fields (RFC 7541 6.2.3). */
export function headerBlock(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    parts.push(Buffer.from([0x10]), hpackString(name), hpackString(value));
  }
  return Buffer.concat(parts);
}

function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length < 127) return Buffer.concat([Buffer.from([bytes.length]), bytes]);
  // 7-bit prefix integer: 127, then the rest in 7-bit groups.
  const rest: number[] = [];
  let v = bytes.length - 127;
  while (v >= 128) {
    rest.push((v & 0x7f) | 0x80);
    v >>= 7;
  }
  rest.push(v);
  return Buffer.concat([Buffer.from([127, ...rest]), bytes]);
}

/** The request headers of a gRPC call. */
export function grpcRequestHeaders(path: string, authority: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ":method": "POST",
    ":scheme": "http",
    ":path": path,
    ":authority": authority,
    "content-type": "application/grpc",
    te: "trailers",
    ...extra,
  };
}

export interface RawConnection {
  readonly frames: Frame[];
  readonly closed: Promise<void>;
  write(bytes: Buffer): void;
  /** Resolves with the first received frame that matches, waiting for it if need be. */
  waitFor(match: (f: Frame) => boolean, timeoutMs?: number): Promise<Frame>;
  destroy(): void;
}

/** Connects, sends the preface and an empty SETTINGS, and acknowledges the server's SETTINGS and PINGs. */
export async function rawConnect(host: string, port: number): Promise<RawConnection> {
  const socket = net.connect({ host, port });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  socket.on("error", () => {});
  const frames: Frame[] = [];
  const waiters: { match: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];
  let buffer = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    while (buffer.length >= 9) {
      const length = buffer.readUIntBE(0, 3);
      if (buffer.length < 9 + length) break;
      const f: Frame = { type: buffer[3]!, flags: buffer[4]!, streamId: buffer.readUInt32BE(5) & 0x7fffffff, payload: buffer.subarray(9, 9 + length) };
      buffer = buffer.subarray(9 + length);
      frames.push(f);
      if (f.type === FRAME.SETTINGS && (f.flags & 1) === 0 && !socket.destroyed) socket.write(frame(FRAME.SETTINGS, 1, 0));
      if (f.type === FRAME.PING && (f.flags & 1) === 0 && !socket.destroyed) socket.write(frame(FRAME.PING, 1, 0, f.payload));
      for (const w of [...waiters]) {
        if (!w.match(f)) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(f);
      }
    }
  });
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0)]));
  return {
    frames,
    closed,
    write: (bytes) => {
      if (!socket.destroyed) socket.write(bytes);
    },
    waitFor(match, timeoutMs = 15_000) {
      const seen = frames.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise<Frame>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("the awaited frame never came")), timeoutMs);
        waiters.push({ match, resolve: (f) => (clearTimeout(timer), resolve(f)) });
        void closed.then(() => {
          clearTimeout(timer);
          reject(new Error("connection closed before the awaited frame"));
        });
      });
    },
    destroy: () => socket.destroy(),
  };
}
