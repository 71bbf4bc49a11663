// A PostgreSQL server of a test's own (initdb in a temporary folder, on a free 127.0.0.1 port), for
// tests that stop and restart the server: the shared server, which other test files use at the
// same time, is never touched. Run as an unprivileged user (uid 65534 when the tests run as root:
// PostgreSQL refuses to run as root).
import { execFile } from "node:child_process";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const NOBODY = 65534;

/** The folder holding initdb and pg_ctl: on PATH, else the newest /usr/lib/postgresql/N/bin. */
export function postgresBinDir(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir !== "" && existsSync(path.join(dir, "initdb")) && existsSync(path.join(dir, "pg_ctl")))
      return dir;
  }
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const dir = path.join(root, v, "bin");
    if (existsSync(path.join(dir, "initdb"))) return dir;
  }
  return undefined;
}

export interface PrivatePostgresOptions {
  /** More addresses to listen on (a veth's), besides 127.0.0.1. */
  readonly listen?: readonly string[];
  /** Clients trusted from this network too (CIDR), e.g. workers in network namespaces. */
  readonly trust?: string;
}

export class PrivatePostgres {
  readonly url: string;
  readonly port: number;
  readonly #bin: string;
  readonly #dir: string;
  readonly #data: string;
  readonly #listen: string;

  private constructor(bin: string, dir: string, port: number, listen: string) {
    this.#bin = bin;
    this.#dir = dir;
    this.#data = path.join(dir, "data");
    this.port = port;
    this.#listen = listen;
    this.url = `postgres://warrant@127.0.0.1:${port}/postgres`;
  }

  /** initdb and start a server; throws when PostgreSQL's programs are not installed. */
  static async start(o: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
    const bin = postgresBinDir();
    if (bin === undefined) throw new Error("initdb and pg_ctl are not installed");
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-pg-"));
    if (process.getuid?.() === 0) chownSync(dir, NOBODY, NOBODY);
    const listen = ["127.0.0.1", ...(o.listen ?? [])].join(",");
    const pg = new PrivatePostgres(bin, dir, await freePort(), listen);
    try {
      await pg.#as("initdb", [
        "-D",
        pg.#data,
        "-U",
        "warrant",
        "-A",
        "trust",
        "--no-sync",
        "--no-instructions",
      ]);
      if (o.trust !== undefined)
        appendFileSync(path.join(pg.#data, "pg_hba.conf"), `host all all ${o.trust} trust\n`);
      await pg.startServer();
      return pg;
    } catch (e) {
      await pg.destroy();
      throw e;
    }
  }

  async startServer(): Promise<void> {
    await this.#as("pg_ctl", [
      "-D",
      this.#data,
      "-l",
      path.join(this.#dir, "server.log"),
      "-o",
      `-p ${this.port} -c listen_addresses=${this.#listen} -c unix_socket_directories='' -c fsync=off -c max_connections=200`,
      "-w",
      "start",
    ]);
  }

  /** A fast shutdown: open connections are terminated (57P01), new ones refused until started. */
  async stopServer(): Promise<void> {
    await this.#as("pg_ctl", ["-D", this.#data, "-m", "fast", "-w", "stop"]);
  }

  /** A restart: every connection is cut (57P01), the server comes back on the same port. */
  async restart(): Promise<void> {
    await this.stopServer();
    await this.startServer();
  }

  /** Stop the server for good and remove its folder. */
  async destroy(): Promise<void> {
    if (existsSync(path.join(this.#data, "postmaster.pid"))) {
      await this.#as("pg_ctl", ["-D", this.#data, "-m", "immediate", "-w", "stop"]).catch(
        () => undefined,
      );
    }
    rmSync(this.#dir, { recursive: true, force: true });
  }

  async #as(program: string, args: readonly string[]): Promise<void> {
    const exe = path.join(this.#bin, program);
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: this.#dir, LC_ALL: "C" };
    if (process.getuid?.() === 0) {
      await run(
        "setpriv",
        [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", exe, ...args],
        { env, cwd: this.#dir },
      );
    } else {
      await run(exe, [...args], { env, cwd: this.#dir });
    }
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
