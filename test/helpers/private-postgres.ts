// A PostgreSQL server of a test's own (initdb in a temp folder, trust auth, 127.0.0.1 on a free
// port), so that a test may restart or stop it without touching the server other tests share.
// As root the server runs as the `postgres` user (PostgreSQL refuses to run as root).
import { execFile } from "node:child_process";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  readonly url: string;
  readonly port: number;
  /** A fast restart (`pg_ctl restart -m fast`): every connection is cut, the server comes back. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The binaries folder of the newest PostgreSQL installed the Debian way, if any. */
function binDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(root, versions[0], "bin");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Why a private server cannot be made here, or undefined when it can. */
export function privatePostgresUnavailable(): string | undefined {
  return binDir() === undefined
    ? "no PostgreSQL server binaries under /usr/lib/postgresql"
    : undefined;
}

export interface PrivatePostgresOptions {
  /** Listen on these addresses too (besides 127.0.0.1), trusting clients from `trust` (CIDR). */
  readonly listen?: readonly string[];
  readonly trust?: string;
}

export async function startPrivatePostgres(
  o: PrivatePostgresOptions = {},
): Promise<PrivatePostgres> {
  const bin = binDir();
  if (bin === undefined) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql");
  const dir = mkdtempSync(path.join(tmpdir(), "warrant-pg-"));
  const data = path.join(dir, "data");
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const as = (cmd: string, args: string[]) =>
    asRoot
      ? run("runuser", ["-u", "postgres", "--", path.join(bin, cmd), ...args], { cwd: dir })
      : run(path.join(bin, cmd), args, { cwd: dir });
  await as("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  if (o.trust !== undefined) {
    const hba = path.join(data, "pg_hba.conf");
    appendFileSync(hba, `host all all ${o.trust} trust\n`);
  }
  const port = await freePort();
  const listen = ["127.0.0.1", ...(o.listen ?? [])].join(",");
  const opts = `-p ${port} -k ${dir} -c listen_addresses=${listen} -c fsync=off -c max_connections=200`;
  const log = path.join(dir, "server.log");
  await as("pg_ctl", ["-D", data, "-o", opts, "-l", log, "-w", "-t", "60", "start"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    restart: async () => {
      await as("pg_ctl", [
        "-D",
        data,
        "-o",
        opts,
        "-l",
        log,
        "-m",
        "fast",
        "-w",
        "-t",
        "60",
        "restart",
      ]);
    },
    stop: async () => {
      await as("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
