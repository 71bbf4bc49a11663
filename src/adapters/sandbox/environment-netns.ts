// One network namespace per environment, made for its first command and joined by every command
// after it, instead of a new one per command: making a network namespace (and the kernel's
// clean-up of the last one, on another CPU) was about a tenth of a contained `true`. It is as
// empty as bwrap's own (loopback only, brought up) and the environment's alone: what one of its
// commands left listening dies with that command's pid namespace, and other environments have
// their own. `warrant-outer --make-netns` makes it inside a user namespace of the commands' uid
// and waits while the host opens both namespaces through /proc/PID/ns; the host keeps those two
// descriptors (close-on-exec) until the environment is destroyed and hands them to each command's
// `warrant-outer --netns`, which joins them before it makes its mount namespace.
import { spawn } from "node:child_process";
import { closeSync, fstatSync, openSync, statSync } from "node:fs";
import { SANDBOX_PATH } from "./contained-exec.js";
import type { RunAs } from "./environment-dir.js";

/** An environment's user and network namespaces, open in this process. */
export interface EnvironmentNetns {
  readonly user: number;
  readonly net: number;
  /** Closes both descriptors: the namespaces go once no command is in them. */
  close(): void;
}

/** How long the program may take to say it is ready before the environment does without. */
const READY_MS = 10_000;

/**
 * The namespaces made by `helper --make-netns` run as `runAs` (undefined: this process's user), or
 * undefined where it could not be made (nor said so within `readyMs`), or where what was opened is
 * not the namespace the program made or is this process's own network namespace: the commands
 * then make their own, as before.
 */
export function makeEnvironmentNetns(
  helper: string,
  runAs: RunAs | undefined,
  readyMs = READY_MS,
): Promise<EnvironmentNetns | undefined> {
  return new Promise((resolve) => {
    const child = spawn(helper, ["--make-netns"], {
      env: { PATH: SANDBOX_PATH },
      stdio: ["pipe", "pipe", "ignore"],
      ...(runAs === undefined ? {} : { uid: runAs.uid, gid: runAs.gid }),
    });
    let said = "";
    let settled = false;
    let closed = false;
    /** Made: handed over at once. Not made: once the program is gone and its pipes closed. */
    const done = (value: EnvironmentNetns | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdin?.end();
      if (value !== undefined || closed) resolve(value);
      else {
        // Not waiting for whatever of it might still hold its stdout.
        child.stdout?.destroy();
        child.kill("SIGKILL");
        child.once("close", () => resolve(undefined));
      }
    };
    const timer = setTimeout(() => done(undefined), readyMs);
    child.stdin?.on("error", () => undefined);
    // A program that cannot be started is closed too (after its `error`).
    child.on("error", () => undefined);
    child.on("close", () => {
      closed = true;
      done(undefined);
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      said += chunk.toString("latin1");
      if (!said.includes("\n") || settled) return;
      const m = /^ready (\d+)\n$/.exec(said);
      // Still unreaped (it waits for its stdin), so its pid is its own while both are opened.
      const running = child.exitCode === null && child.signalCode === null;
      const pid = child.pid;
      done(
        m !== null && running && pid !== undefined
          ? openNamespaces(pid, BigInt(m[1] as string))
          : undefined,
      );
    });
  });
}

/** /proc/PID/ns/user and /proc/PID/ns/net, when the latter is `inode` and not this process's. */
function openNamespaces(pid: number, inode: bigint): EnvironmentNetns | undefined {
  const opened: number[] = [];
  try {
    const user = openSync(`/proc/${pid}/ns/user`, "r");
    opened.push(user);
    const net = openSync(`/proc/${pid}/ns/net`, "r");
    opened.push(net);
    const own = statSync("/proc/self/ns/net", { bigint: true }).ino;
    const given = fstatSync(net, { bigint: true }).ino;
    if (given !== inode || given === own) throw new Error("not the environment's namespace");
    let open = true;
    return {
      user,
      net,
      close() {
        if (!open) return;
        open = false;
        closeSync(user);
        closeSync(net);
      },
    };
  } catch {
    for (const fd of opened) closeSync(fd);
    return undefined;
  }
}
