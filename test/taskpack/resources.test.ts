// The task pack's `resources` field: defaults when absent, each limit taken over the defaults
// alone, and the bounds (and the closed set of keys) the schema states.
import { describe, expect, it } from "vitest";
import {
  CHANGE_BOUND_RANGES,
  DEFAULT_CHANGE_BOUNDS,
  DEFAULT_RESOURCES,
  RESOURCE_BOUNDS,
} from "../../src/core/ports/sandbox.js";
import { DEFAULT_MAX_CONNECTIONS } from "../../src/core/taskpack/network.js";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";
import { packDoc } from "./fixtures.js";

const withResources = (resources: unknown) => ({ ...packDoc(), resources });

describe("task pack resources", () => {
  it("are 1 GiB of memory, 256 MiB of /tmp and 1 GiB of disk, 50 000 changed entries and 30 s of change capture when the pack says nothing", () => {
    const r = validateTaskPack(packDoc());
    expect(r.ok && r.value.resources).toEqual({
      memoryBytes: 1073741824,
      tmpBytes: 268435456,
      diskBytes: 1073741824,
      changedEntries: 50_000,
      changeCaptureMs: 30_000,
    });
    expect(DEFAULT_CHANGE_BOUNDS).toEqual({ maxEntries: 50_000, timeMs: 30_000 });
    expect(DEFAULT_RESOURCES).toEqual({
      memoryBytes: 2 ** 30,
      tmpBytes: 2 ** 28,
      diskBytes: 2 ** 30,
    });
  });

  it("a limit the pack names replaces its default; the others keep theirs", () => {
    const r = validateTaskPack(withResources({ tmpBytes: 1048576, changedEntries: 10 }));
    expect(r.ok && r.value.resources).toEqual({
      ...DEFAULT_RESOURCES,
      tmpBytes: 1048576,
      changedEntries: 10,
      changeCaptureMs: 30_000,
    });
  });

  it("each limit is refused below its minimum and above its maximum, at the bound accepted", () => {
    const ranges = {
      ...RESOURCE_BOUNDS,
      changedEntries: CHANGE_BOUND_RANGES.maxEntries,
      changeCaptureMs: CHANGE_BOUND_RANGES.timeMs,
    };
    for (const [key, [min, max]] of Object.entries(ranges)) {
      for (const [value, valid] of [
        [min - 1, false],
        [min, true],
        [max, true],
        [max + 1, false],
        [1.5 * min, Number.isInteger(1.5 * min)],
      ] as const) {
        const r = validateTaskPack(withResources({ [key]: value }));
        expect(r.ok, `${key}=${value}`).toBe(valid);
        if (!r.ok) expect(r.errors[0]?.code).toBe("taskpack/schema");
      }
    }
  });

  it("an unknown key or a value that is not an integer is refused", () => {
    for (const bad of [{ cpus: 2 }, { memoryBytes: "1G" }, { diskBytes: null }, []]) {
      const r = validateTaskPack(withResources(bad));
      expect(r.ok, JSON.stringify(bad)).toBe(false);
      if (!r.ok) expect(r.errors.every((e) => e.code === "taskpack/schema")).toBe(true);
    }
  });
});

describe("task pack network.maxConnections", () => {
  const withNetwork = (network: unknown) => ({ ...packDoc(), network });
  it("defaults to 256 and is taken from the pack within 1 to 4096", () => {
    expect(DEFAULT_MAX_CONNECTIONS).toBe(256);
    const plain = validateTaskPack(withNetwork({ allow: ["127.0.0.1:8080"] }));
    expect(plain.ok && plain.value.network?.maxConnections).toBeUndefined();
    for (const [value, valid] of [
      [0, false],
      [1, true],
      [4096, true],
      [4097, false],
      [2.5, false],
    ] as const) {
      const r = validateTaskPack(withNetwork({ allow: ["127.0.0.1:8080"], maxConnections: value }));
      expect(r.ok, String(value)).toBe(valid);
      if (r.ok) expect(r.value.network?.maxConnections).toBe(value);
    }
  });
});
