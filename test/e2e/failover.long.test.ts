// Takeover after a SIGKILL, repeated (npm run test:long): ten trials with the workers on this
// host's loopback, then trials with each worker in a network namespace of its own, reaching
// PostgreSQL over a veth pair as another machine would. Every trial: the worker driving the loop is
// killed a second into its drive, the other takes the loop over and drives it to its stop, no
// environment or lease is left. The takeover times are printed.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrivatePostgres, postgresBinDir } from "../store/private-postgres.js";
import { type TakeoverTimes, takeoverTrial, type WorkerProcess } from "./failover-harness.js";

const TTL_MS = 2000;
const TRIALS = 10;
const unavailable =
  postgresBinDir() === undefined ? "initdb and pg_ctl are not installed" : undefined;

function mkdirs() {
  const dirs: string[] = [];
  const mkdir = (label: string) => {
    const d = mkdtempSync(path.join(tmpdir(), `warrant-failover-${label}-`));
    chmodSync(d, 0o755);
    dirs.push(d);
    return d;
  };
  return { dirs, mkdir };
}

function summary(label: string, times: readonly TakeoverTimes[]): string {
  const take = times.map((t) => t.takeoverMs).sort((a, b) => a - b);
  return (
    `${label} (lease ${TTL_MS} ms, ${times.length} trials): taken over after ` +
    `${take.join(", ")} ms (max ${take.at(-1)} ms); stopped after ` +
    `${times.map((t) => t.stoppedMs).join(", ")} ms\n`
  );
}

describe.skipIf(unavailable !== undefined && process.env.CI !== "true")(
  "takeover after SIGKILL, repeated",
  () => {
    let server: PrivatePostgres;
    const workers: WorkerProcess[] = [];
    const { dirs, mkdir } = mkdirs();
    beforeAll(async () => {
      server = await PrivatePostgres.start();
    });
    afterAll(async () => {
      for (const w of workers) if (w.child.exitCode === null) w.signal("SIGKILL");
      await server?.destroy();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it(`${TRIALS} of ${TRIALS} trials: the loop stops under the other worker`, async () => {
      const times: TakeoverTimes[] = [];
      for (let i = 0; i < TRIALS; i++)
        times.push(await takeoverTrial(server.url, `long_takeover_${i}`, TTL_MS, mkdir, workers));
      expect(times).toHaveLength(TRIALS);
      process.stdout.write(summary("takeover on loopback", times));
    });
  },
);

/** Why workers cannot be put in network namespaces here, or undefined. */
function netnsUnavailable(): string | undefined {
  if (unavailable !== undefined) return unavailable;
  const name = `wprobe${randomBytes(3).toString("hex")}`;
  const add = spawnSync("ip", ["netns", "add", name], { encoding: "utf8" });
  if (add.error !== undefined) return `ip is not installed (${add.error.message})`;
  if (add.status !== 0) return `ip netns add is not permitted here: ${add.stderr.trim()}`;
  spawnSync("ip", ["netns", "del", name]);
  return undefined;
}

const noNetns = netnsUnavailable();

describe.skipIf(noNetns !== undefined)(
  `takeover with each worker in its own network namespace${noNetns === undefined ? "" : ` (skipped: ${noNetns})`}`,
  () => {
    const tag = randomBytes(2).toString("hex");
    // Two namespaces, each joined to the host by a veth pair: host 10.87.<n>.1, worker 10.87.<n>.2.
    const nets = [1, 2].map((n) => ({
      ns: `wq${tag}n${n}`,
      host: `wq${tag}h${n}`,
      peer: `wq${tag}p${n}`,
      hostIp: `10.87.${n}.1`,
      nsIp: `10.87.${n}.2`,
    }));
    const ip = (...args: string[]) => {
      const r = spawnSync("ip", args, { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`ip ${args.join(" ")}: ${r.stderr}`);
    };
    let server: PrivatePostgres;
    const workers: WorkerProcess[] = [];
    const { dirs, mkdir } = mkdirs();
    beforeAll(async () => {
      for (const n of nets) {
        ip("netns", "add", n.ns);
        ip("link", "add", n.host, "type", "veth", "peer", "name", n.peer);
        ip("link", "set", n.peer, "netns", n.ns);
        ip("addr", "add", `${n.hostIp}/24`, "dev", n.host);
        ip("link", "set", n.host, "up");
        ip("-n", n.ns, "addr", "add", `${n.nsIp}/24`, "dev", n.peer);
        ip("-n", n.ns, "link", "set", n.peer, "up");
        ip("-n", n.ns, "link", "set", "lo", "up");
      }
      server = await PrivatePostgres.start({
        listen: nets.map((n) => n.hostIp),
        trust: "10.87.0.0/16",
      });
    });
    afterAll(async () => {
      for (const w of workers) if (w.child.exitCode === null) w.signal("SIGKILL");
      await server?.destroy();
      for (const n of nets) {
        spawnSync("ip", ["link", "del", n.host]);
        spawnSync("ip", ["netns", "del", n.ns]);
      }
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it("the loop stops under the worker in the other namespace", async () => {
      const times: TakeoverTimes[] = [];
      for (let i = 0; i < 3; i++) {
        // Each worker reaches the server at its own veth's host address.
        const [a, b] = nets as [(typeof nets)[0], (typeof nets)[0]];
        times.push(
          await takeoverTrial(server.url, `netns_takeover_${i}`, TTL_MS, mkdir, workers, {
            storeUrls: [
              `postgres://warrant@${a.hostIp}:${server.port}/postgres`,
              `postgres://warrant@${b.hostIp}:${server.port}/postgres`,
            ],
            prefixes: [
              ["ip", "netns", "exec", a.ns],
              ["ip", "netns", "exec", b.ns],
            ],
          }),
        );
      }
      process.stdout.write(summary("takeover across network namespaces", times));
    });
  },
);
