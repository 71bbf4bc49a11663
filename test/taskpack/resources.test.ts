// The task pack's `resources` field: defaults when absent, each limit taken over the defaults
// alone, and the bounds (and the closed set of keys) the schema states.
import { describe, expect, it } from "vitest";
import { DEFAULT_RESOURCES, RESOURCE_BOUNDS } from "../../src/core/sandbox/sandbox-port.js";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";
import { packDoc } from "./fixtures.js";

const withResources = (resources: unknown) => ({ ...packDoc(), resources });

describe("task pack resources", () => {
  it("are 1 GiB of memory, 256 MiB of /tmp and 1 GiB of disk when the pack says nothing", () => {
    const r = validateTaskPack(packDoc());
    expect(r.ok && r.value.resources).toEqual({
      memoryBytes: 1073741824,
      tmpBytes: 268435456,
      diskBytes: 1073741824,
    });
    expect(DEFAULT_RESOURCES).toEqual({
      memoryBytes: 2 ** 30,
      tmpBytes: 2 ** 28,
      diskBytes: 2 ** 30,
    });
  });

  it("a limit the pack names replaces its default; the others keep theirs", () => {
    const r = validateTaskPack(withResources({ tmpBytes: 1048576 }));
    expect(r.ok && r.value.resources).toEqual({ ...DEFAULT_RESOURCES, tmpBytes: 1048576 });
  });

  it("each limit is refused below its minimum and above its maximum, at the bound accepted", () => {
    for (const [key, [min, max]] of Object.entries(RESOURCE_BOUNDS)) {
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
