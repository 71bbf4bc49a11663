// A process told to stop (SIGTERM, SIGINT: releaseSandboxes) while an environment is still being
// made: the making stops at its next step and removes its directory, and the stop waits for that
// before it removes the pins, so nothing is added to a directory after it is removed and nothing is
// left in the temp folder. The steps of a making are held open here by its `prepare`, as a slow
// copy or a slow mount would hold them.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  destroyHeldEnvironments,
  type ExecLine,
  environmentHost,
} from "../../src/adapters/sandbox/managed-environment.js";

const root = mkdtempSync(path.join(tmpdir(), "warrant-stop-making-test-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const neverRun: ExecLine = async () => {
  throw new Error("no command runs in this test");
};

function place(name: string): { temp: string; work: string } {
  const temp = path.join(root, name, "temp");
  const work = path.join(root, name, "work");
  mkdirSync(temp, { recursive: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(path.join(work, "a.txt"), "a");
  return { temp, work };
}

const leftovers = (temp: string) => readdirSync(temp).filter((n) => n.startsWith("warrant-"));

/** A `prepare` that holds the making open until `release()`. */
function heldPrepare() {
  let entered: () => void = () => {};
  let release: () => void = () => {};
  const inside = new Promise<void>((r) => {
    entered = r;
  });
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const prepare = async () => {
    entered();
    await gate;
    return neverRun;
  };
  return { inside, release, prepare };
}

describe("a stop while an environment is made", () => {
  it("waits for the making, which stops with sandbox/stopping and leaves nothing behind", async () => {
    const { temp, work } = place("stopped");
    const host = environmentHost("bwrap", { tempRoot: temp, layers: "copy", runAs: null });
    const held = heldPrepare();
    const made = host.createEnvironment(work, {}, held.prepare);
    const settled = made.catch((e: unknown) => e);
    await held.inside;
    expect(leftovers(temp).some((n) => n.startsWith("warrant-env-"))).toBe(true);

    let stopped = false;
    const stop = destroyHeldEnvironments().then(() => {
      stopped = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    // The stop has not removed the directory from under the making, nor finished.
    expect(stopped).toBe(false);
    expect(leftovers(temp).some((n) => n.startsWith("warrant-env-"))).toBe(true);

    held.release();
    expect(await settled).toMatchObject({ code: "sandbox/stopping" });
    await stop;
    expect(leftovers(temp)).toEqual([]);
  });

  it("an environment begun after the stop is made as usual, and destroyed by the next stop", async () => {
    const { temp, work } = place("after");
    const host = environmentHost("bwrap", { tempRoot: temp, layers: "copy", runAs: null });
    await destroyHeldEnvironments();
    const env = await host.createEnvironment(work, {}, async () => neverRun);
    expect(leftovers(temp).some((n) => n.startsWith("warrant-env-"))).toBe(true);
    await destroyHeldEnvironments();
    expect(leftovers(temp)).toEqual([]);
    await expect(
      env.exec(["true"], { timeoutMs: 1000, maxOutputBytes: 1024 }),
    ).rejects.toMatchObject({ code: "sandbox/destroyed" });
  });
});
