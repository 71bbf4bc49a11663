// Egress on an allow-list, on every backend this machine has: commands inside the empty network
// namespace reach an allowed host:port only through the host's egress proxy (curl and node, plain
// HTTP, CONNECT and SOCKS5), everything else is refused and recorded, and without `network`
// nothing changes. Servers listen on the host's 127.0.0.1 with an explicit allow for them.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import type {
  Environment,
  EnvironmentOptions,
  ExecOptions,
  Sandbox,
} from "../../src/core/ports/sandbox.js";

const required = new Set((process.env.WARRANT_REQUIRE_BACKENDS ?? "").split(",").filter(Boolean));
const LIMITS: ExecOptions = { timeoutMs: 20_000, maxOutputBytes: 1 << 20 };

const tools = ["/usr/bin/curl", "/usr/bin/node"].filter((p) => existsSync(p));

let work: string;
let baseline: string;
let allowed: http.Server;
let other: http.Server;
let port: number;
let otherPort: number;

const listen = async (s: http.Server) => {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  return (s.address() as AddressInfo).port;
};

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "warrant-egress-"));
  baseline = path.join(work, "baseline");
  mkdirSync(baseline);
  writeFileSync(path.join(baseline, "a.txt"), "a\n");
  allowed = http.createServer((q, s) => s.end(`allowed ${q.method} ${q.url}\n`));
  other = http.createServer((_q, s) => s.end("other\n"));
  port = await listen(allowed);
  otherPort = await listen(other);
});

afterAll(() => {
  allowed.close();
  other.close();
  rmSync(work, { recursive: true, force: true });
});

for (const backend of ["bwrap", "unshare"] as const) {
  const found = await detectSandbox({ only: backend });
  const reason = found.ok ? "" : (found.errors[0]?.message ?? "probe failed");
  if (!found.ok && required.has(backend)) {
    it(`${backend} is required here and works`, () => expect(reason).toBe(""));
  }
  const sandbox = found.ok ? found.value : undefined;
  describe.skipIf(sandbox === undefined || tools.length < 2)(
    `egress on an allow-list: ${backend}${sandbox === undefined ? ` (skipped: ${reason})` : ""}${tools.length < 2 ? " (skipped: no curl or node at /usr/bin)" : ""}`,
    () => {
      const envs: Environment[] = [];
      const fresh = async (opts: EnvironmentOptions = {}) => {
        const env = await (sandbox as Sandbox).createEnvironment(baseline, {
          maxProcesses: 128,
          ...opts,
        });
        envs.push(env);
        return env;
      };
      const withAllow = (...allow: { host: string; port: number }[]) =>
        fresh({
          network: {
            allow: allow.map((a) => ({
              ...a,
              kind: /^[0-9.]+$/.test(a.host) ? ("ipv4" as const) : ("name" as const),
            })),
          },
        });
      const sh = (env: Environment, script: string) => env.exec(["sh", "-c", script], LIMITS);

      afterEach(async () => {
        for (const env of envs.splice(0)) await env.destroy();
      });

      it("without network: no proxy, no egress directory, nothing reachable, nothing recorded", async () => {
        const env = await fresh();
        const r = await sh(
          env,
          `env | grep -i _proxy; ls /run/warrant 2>&1; curl -sS -m 5 http://127.0.0.1:${port}/; echo rc=$?`,
        );
        expect(r.stdout).not.toMatch(/proxy=/i);
        expect(r.stdout).toContain("rc=7");
        expect(r.stdout).not.toContain("allowed");
        expect(env.connections()).toBeUndefined();
      });

      it("curl reaches the allowed host:port by plain HTTP and CONNECT; the connections are recorded", async () => {
        const env = await withAllow({ host: "127.0.0.1", port });
        const plain = await sh(env, `curl -sS -m 10 http://127.0.0.1:${port}/plain`);
        expect(plain.stdout).toBe("allowed GET /plain\n");
        expect(plain.exitCode).toBe(0);
        const tunnel = await sh(env, `curl -sS -m 10 -p http://127.0.0.1:${port}/tunnel`);
        expect(tunnel.stdout).toBe("allowed GET /tunnel\n");
        const log = env.connections();
        expect(log?.omitted).toBe(0);
        expect(log?.list.map((c) => [c.protocol, c.host, c.port, c.address, c.allowed])).toEqual([
          ["http", "127.0.0.1", port, "127.0.0.1", true],
          ["http-connect", "127.0.0.1", port, "127.0.0.1", true],
        ]);
        for (const c of log?.list ?? []) {
          expect(c.reason).toBeUndefined();
          expect(c["bytes/up"]).toBeGreaterThan(0);
          expect(c["bytes/down"]).toBeGreaterThan(0);
        }
      });

      it("refuses another port, a name resolving to loopback that was not named, and any direct connection", async () => {
        const env = await withAllow({ host: "127.0.0.1", port });
        const otherPortTry = await sh(
          env,
          `curl -sS -m 10 -o /dev/null -w '%{http_code}' http://127.0.0.1:${otherPort}/`,
        );
        expect(otherPortTry.stdout).toBe("403");
        const tunnelTry = await sh(
          env,
          `curl -sS -m 10 -p http://127.0.0.1:${otherPort}/; echo rc=$?`,
        );
        expect(tunnelTry.stdout).not.toContain("other");
        expect(tunnelTry.stdout).toMatch(/rc=[1-9]/);
        const nameTry = await sh(
          env,
          `curl -sS -m 10 -o /dev/null -w '%{http_code}' http://localhost:${port}/`,
        );
        expect(nameTry.stdout).toBe("403");
        // The namespace has no route out: without the proxy nothing answers, not even the allowed port.
        const direct = await sh(
          env,
          `curl -sS -m 5 --noproxy '*' http://127.0.0.1:${port}/; echo rc=$?`,
        );
        expect(direct.stdout).toContain("rc=7");
        expect(
          env.connections()?.list.map((c) => [c.protocol, c.host, c.port, c.allowed, c.reason]),
        ).toEqual([
          ["http", "127.0.0.1", otherPort, false, "egress/port-not-listed"],
          ["http-connect", "127.0.0.1", otherPort, false, "egress/port-not-listed"],
          ["http", "localhost", port, false, "egress/not-listed"],
        ]);
      });

      it("SOCKS5 through ALL_PROXY: allowed to the listed host:port, refused elsewhere", async () => {
        const env = await withAllow({ host: "127.0.0.1", port });
        const ok = await sh(env, `curl -sS -m 10 -x "$ALL_PROXY" http://127.0.0.1:${port}/socks`);
        expect(ok.stdout).toBe("allowed GET /socks\n");
        const no = await sh(
          env,
          `curl -sS -m 10 -x "$ALL_PROXY" http://127.0.0.1:${otherPort}/; echo rc=$?`,
        );
        expect(no.stdout).not.toContain("other");
        expect(no.stdout).toMatch(/rc=[1-9]/);
        expect(env.connections()?.list.map((c) => [c.protocol, c.port, c.allowed])).toEqual([
          ["socks5", port, true],
          ["socks5", otherPort, false],
        ]);
      });

      it("node reaches it through HTTP_PROXY with an absolute URI and with CONNECT", async () => {
        const env = await withAllow({ host: "127.0.0.1", port });
        const script = `
const http = require("http");
const proxy = new URL(process.env.HTTP_PROXY);
const target = "127.0.0.1:${port}";
http.get({ host: proxy.hostname, port: proxy.port, path: "http://" + target + "/node", headers: { Host: target } }, (res) => {
  let body = ""; res.on("data", (d) => (body += d)); res.on("end", () => {
    process.stdout.write(res.statusCode + " " + body);
    const req = http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: target });
    req.on("connect", (r, socket) => {
      socket.write("GET /tunnelled HTTP/1.1\\r\\nHost: " + target + "\\r\\nConnection: close\\r\\n\\r\\n");
      let t = ""; socket.on("data", (d) => (t += d)); socket.on("end", () => { process.stdout.write(r.statusCode + " " + t.split("\\r\\n\\r\\n")[1]); });
    });
    req.end();
  });
});`;
        const r = await env.exec(["node", "-e", script], LIMITS);
        expect(r.stderr).toBe("");
        expect(r.stdout).toBe("200 allowed GET /node\n200 allowed GET /tunnelled\n");
        expect(env.connections()?.list.map((c) => c.protocol)).toEqual(["http", "http-connect"]);
      });

      it("a name the pack names is resolved on the host and reached, loopback included", async () => {
        const env = await withAllow({ host: "localhost", port });
        const r = await sh(env, `curl -sS -m 10 http://localhost:${port}/named`);
        expect(r.stdout).toBe("allowed GET /named\n");
        const [c] = env.connections()?.list ?? [];
        expect(c).toMatchObject({ host: "localhost", allowed: true, "address/class": "loopback" });
        expect(["127.0.0.1", "::1"]).toContain(c?.address);
      });

      it("the command's status passes through the relay; no host variable reaches it", async () => {
        process.env.WARRANT_EGRESS_CANARY = "host-only";
        try {
          const env = await withAllow({ host: "127.0.0.1", port });
          const r = await sh(env, "env; exit 3");
          expect(r.exitCode).toBe(3);
          expect(r.stdout).not.toContain("WARRANT_EGRESS_CANARY");
          expect(r.stdout).toMatch(/^HTTP_PROXY=http:\/\/127\.0\.0\.1:\d+$/m);
          expect(r.stdout).toMatch(/^ALL_PROXY=socks5h:\/\/127\.0\.0\.1:\d+$/m);
        } finally {
          delete process.env.WARRANT_EGRESS_CANARY;
        }
      });

      it("the time limit still kills the command behind the relay, relay included", async () => {
        const env = await withAllow({ host: "127.0.0.1", port });
        const marker = `${process.pid}${Date.now() % 1000}`;
        const r = await env.exec(["sleep", `3${marker}`], { ...LIMITS, timeoutMs: 1000 });
        expect(r.timedOut).toBe(true);
        const left = async () =>
          readdirSync("/proc").filter((pid) => {
            try {
              return (
                /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)
              );
            } catch {
              return false;
            }
          });
        for (let i = 0; i < 100 && (await left()).length > 0; i += 1) {
          await new Promise((done) => setTimeout(done, 50));
        }
        expect(await left()).toEqual([]);
      });

      it("the proxy's socket lives in the environment directory and goes with it", async () => {
        const env = await withAllow({ host: "127.0.0.1", port });
        const base = path.dirname(env.root);
        const socket = path.join(base, "stage/run/warrant/egress.sock");
        expect(existsSync(socket)).toBe(true);
        await sh(env, `curl -sS -m 10 http://127.0.0.1:${port}/`);
        envs.splice(envs.indexOf(env), 1);
        expect((await env.destroy()).confirmed).toBe(true);
        expect(existsSync(socket)).toBe(false);
        expect(existsSync(base)).toBe(false);
        // The record outlives the environment: the run report is written after destruction.
        expect(env.connections()?.list).toHaveLength(1);
      });
    },
  );
}
