// A TCP proxy in front of PostgreSQL that cuts a connection at a chosen moment: after the server has
// answered a statement (so it committed) but before the client reads the answer. The client sees
// its connection lost and cannot know whether its write landed: the case a retry must recognise.
import { connect, createServer, type Server, type Socket } from "node:net";

/** ReadyForQuery ('Z', length 5): the server has finished the statement (and its commit). */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5]);

interface Armed {
  readonly pattern: Buffer;
  readonly cut: () => void;
}

export class CuttingProxy {
  readonly port: number;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #armed: Armed | undefined;
  #down = false;

  private constructor(server: Server, port: number) {
    this.#server = server;
    this.port = port;
  }

  /** A proxy on a free 127.0.0.1 port forwarding to the server of `targetUrl`. */
  static async start(targetUrl: string): Promise<CuttingProxy> {
    const target = new URL(targetUrl);
    const handler: { accept?: (client: Socket) => void } = {};
    const server = createServer((client) => handler.accept?.(client));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const proxy = new CuttingProxy(
      server,
      typeof address === "object" && address !== null ? address.port : 0,
    );
    handler.accept = (client) => proxy.#accept(client, target);
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(this.port);
    return u.toString();
  }

  /**
   * The next client message containing `pattern` is forwarded; the server's answer is held back
   * until it is complete, then the connection is cut and the proxy refuses every connection until
   * `up()`. Resolves once the cut is made.
   */
  cutAfterAnswerTo(pattern: string): Promise<void> {
    return new Promise((resolve) => {
      this.#armed = { pattern: Buffer.from(pattern), cut: resolve };
    });
  }

  up(): void {
    this.#down = false;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket, target: URL): void {
    if (this.#down) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    this.#sockets.add(client).add(upstream);
    let cutting: Armed | undefined;
    let held = Buffer.alloc(0);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(upstream);
    };
    client.on("data", (d: Buffer) => {
      const armed = this.#armed;
      if (armed !== undefined && d.includes(armed.pattern)) {
        this.#armed = undefined;
        cutting = armed;
      }
      upstream.write(d);
    });
    upstream.on("data", (d: Buffer) => {
      if (cutting === undefined) {
        client.write(d);
        return;
      }
      held = Buffer.concat([held, d]);
      if (!held.includes(READY_FOR_QUERY)) return;
      this.#down = true;
      end();
      cutting.cut();
    });
    client.on("error", end);
    upstream.on("error", end);
    client.on("close", end);
    upstream.on("close", end);
  }
}
