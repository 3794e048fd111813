import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hashedVector } from "../../src/embed/hashed-embedder.js";

/**
 * A real OpenAI-compatible embeddings endpoint on 127.0.0.1 for tests:
 * POST /v1/embeddings answers the hashed embedder's vectors, unless the test
 * sets `respond` to answer otherwise (a status, a bad body, a delay).
 */

export interface EmbeddingsRequest {
  authorization: string | undefined;
  body: { model: string; input: string[] };
}

export interface EmbeddingsServer {
  /** Base URL, e.g. http://127.0.0.1:40123/v1 */
  baseUrl: string;
  requests: EmbeddingsRequest[];
  /** Overrides the answer; return undefined to answer normally. */
  respond: ((req: EmbeddingsRequest, res: ServerResponse) => Promise<boolean | void> | boolean | void) | null;
  close(): Promise<void>;
}

export async function startEmbeddingsServer(dimensions: number): Promise<EmbeddingsServer> {
  const state: EmbeddingsServer = {
    baseUrl: "",
    requests: [],
    respond: null,
    close: async () => {},
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (raw += chunk));
    req.on("end", () => {
      void (async () => {
        if (req.method !== "POST" || req.url !== "/v1/embeddings") {
          res.writeHead(404).end();
          return;
        }
        const request: EmbeddingsRequest = { authorization: req.headers.authorization, body: JSON.parse(raw) };
        state.requests.push(request);
        if (state.respond && (await state.respond(request, res))) return;
        if (res.destroyed) return;
        const data = request.body.input.map((text, index) => ({ object: "embedding", index, embedding: hashedVector(text, dimensions) }));
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data, model: request.body.model }));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
