// Inside the sandbox, programs reach the host's egress proxy (egress-proxy.ts) through a loopback
// TCP port: the relay — a small Node script started in the sandbox's own network namespace before
// the command — listens on 127.0.0.1 (an ephemeral port), forwards each connection to the proxy's
// unix socket bound into the sandbox, and runs the command as its child with the proxy variables
// pointing at that port. It exits with the command's status (or by its signal).
import { realpathSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";

/** Where the environment's egress directory (proxy socket and relay script) appears inside. */
export const EGRESS_SANDBOX_DIR = "/run/warrant";
export const EGRESS_SOCKET_NAME = "egress.sock";
export const EGRESS_RELAY_NAME = "relay.cjs";

/** The egress directory on the host: in the environment's stage (the unshare backend's root). */
export function egressHostDir(stage: string): string {
  return path.join(stage, EGRESS_SANDBOX_DIR);
}

const RELAY_SCRIPT = `"use strict";
// Relay: 127.0.0.1:<ephemeral> in this network namespace -> the egress proxy's unix socket.
const net = require("net");
const { spawn } = require("child_process");
const [socketPath, ...argv] = process.argv.slice(2);
const server = net.createServer((c) => {
  const u = net.connect(socketPath);
  const cut = () => { c.destroy(); u.destroy(); };
  c.on("error", cut); u.on("error", cut);
  c.on("close", () => u.end()); u.on("close", () => c.end());
  c.pipe(u); u.pipe(c);
});
server.on("error", (e) => { process.stderr.write("egress relay: " + e.message + "\\n"); process.exit(126); });
server.listen(0, "127.0.0.1", () => {
  const url = "http://127.0.0.1:" + server.address().port;
  const socks = "socks5h://127.0.0.1:" + server.address().port;
  const env = Object.assign({}, process.env, {
    HTTP_PROXY: url, HTTPS_PROXY: url, ALL_PROXY: socks,
    http_proxy: url, https_proxy: url, all_proxy: socks,
    NO_PROXY: "", no_proxy: "",
  });
  const child = spawn(argv[0], argv.slice(1), { stdio: "inherit", env });
  for (const s of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(s, () => child.kill(s));
  child.on("error", (e) => { process.stderr.write(argv[0] + ": " + e.message + "\\n"); process.exit(127); });
  child.on("exit", (code, signal) => {
    server.close();
    if (signal !== null) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      setTimeout(() => process.exit(128), 1000).unref();
    } else process.exit(code);
  });
});
`;

/** Write the relay script into the egress directory (read-only for the commands). */
export async function writeRelay(hostDir: string): Promise<void> {
  await writeFile(path.join(hostDir, EGRESS_RELAY_NAME), RELAY_SCRIPT, { mode: 0o644 });
}

/**
 * The argv that runs `argv` behind the relay: the host's own Node (its install is exposed
 * read-only in every sandbox, root-layout.ts) with the script and the socket as seen inside.
 */
export function relayArgv(argv: readonly string[]): string[] {
  return [
    realpathSync(process.execPath),
    `${EGRESS_SANDBOX_DIR}/${EGRESS_RELAY_NAME}`,
    `${EGRESS_SANDBOX_DIR}/${EGRESS_SOCKET_NAME}`,
    ...argv,
  ];
}
