import * as net from "node:net";

/**
 * A TCP proxy between a process and PostgreSQL that a test can break on
 * purpose, without touching the shared server:
 *
 * - `refuse()`: the port is closed (new connections get ECONNREFUSED) and
 *   every open connection is destroyed.
 * - `stall()`: connections are accepted and open ones stay open, but not a
 *   byte is forwarded either way (a hung network path or a frozen server);
 *   `stall({ repliesOnly: true })` still forwards what the client sends, so
 *   requests reach the server and only the answers are held back.
 * - `restore()`: forwarding again. Stalled connections are reset (destroyed),
 *   as a stateful firewall or a rebooted peer would, unless `resume: true`,
 *   which delivers what they buffered (a late reply).
 * - `reset()`: every open connection is destroyed, the port stays open (a
 *   server restart the client reconnects through at once).
 * - `cutWhenSent(marker, times)`: the next `times` connections whose client
 *   sends bytes containing `marker` are destroyed right after sending them,
 *   before any answer (a connection lost mid-statement, at a chosen statement).
 */
export class FaultProxy {
  private server: net.Server | undefined;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  mode: "pass" | "refuse" | "stall" = "pass";
  private repliesOnly = false;
  private cut: { marker: Buffer; left: number } | undefined;
  /** How many connections `cutWhenSent` has destroyed. */
  cuts = 0;
  port = 0;

  constructor(private readonly upstream: { host: string; port: number }) {}

  /** A proxy in front of the PostgreSQL server of `url`, listening on a free port. */
  static async for(url: string): Promise<FaultProxy> {
    const target = new URL(url);
    const proxy = new FaultProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await proxy.listen();
    return proxy;
  }

  /** `url` with its host and port replaced by this proxy's. */
  via(url: string): string {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(this.port);
    return u.toString();
  }

  get connections(): number {
    return this.pairs.size;
  }

  refuse(): Promise<void> {
    this.mode = "refuse";
    for (const pair of this.pairs) destroy(pair);
    const server = this.server;
    this.server = undefined;
    return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  stall(options: { repliesOnly?: boolean } = {}): void {
    this.mode = "stall";
    this.repliesOnly = options.repliesOnly ?? false;
    for (const pair of this.pairs) pause(pair, this.repliesOnly);
  }

  reset(): void {
    for (const pair of this.pairs) destroy(pair);
  }

  cutWhenSent(marker: string, times = 1): void {
    this.cut = { marker: Buffer.from(marker), left: times };
  }

  async restore(options: { resume?: boolean } = {}): Promise<void> {
    const stalled = this.mode === "stall";
    this.mode = "pass";
    for (const pair of this.pairs) {
      if (stalled && !options.resume) destroy(pair);
      else forward(pair);
    }
    if (!this.server) await this.listen();
  }

  async close(): Promise<void> {
    await this.refuse();
  }

  private async listen(): Promise<void> {
    const server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      // The same port again after a refusal, so the client's URL stays valid.
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.upstream.port, this.upstream.host);
    const pair = { client, upstream };
    this.pairs.add(pair);
    for (const s of [client, upstream]) {
      s.on("error", () => destroy(pair));
      s.once("close", () => {
        destroy(pair);
        this.pairs.delete(pair);
      });
    }
    client.on("data", (chunk: Buffer) => {
      if (!this.cut || this.cut.left === 0 || !chunk.includes(this.cut.marker)) return;
      this.cut.left -= 1;
      this.cuts += 1;
      destroy(pair);
    });
    if (this.mode === "stall") pause(pair, this.repliesOnly);
    else forward(pair);
  }
}

function forward(pair: { client: net.Socket; upstream: net.Socket }): void {
  pair.client.pipe(pair.upstream);
  pair.upstream.pipe(pair.client);
  pair.client.resume();
  pair.upstream.resume();
}

function pause(pair: { client: net.Socket; upstream: net.Socket }, repliesOnly = false): void {
  pair.upstream.unpipe(pair.client);
  pair.upstream.pause();
  if (repliesOnly) return;
  pair.client.unpipe(pair.upstream);
  pair.client.pause();
}

function destroy(pair: { client: net.Socket; upstream: net.Socket }): void {
  pair.client.destroy();
  pair.upstream.destroy();
}
