// The composite ToolHost: routing by name, duplicate names refused, close reaching every host.
import { describe, expect, it } from "vitest";
import {
  createCompositeToolHost,
  registryOf,
  type ToolHost,
  toolAnswer,
  toolFailure,
} from "../../src/core/ports/tool-host.js";
import { READ_FILE, WRITE_FILE } from "./fixtures.js";

function fakeHost(label: string, specs = [READ_FILE]): ToolHost & { closed: number } {
  const host = {
    closed: 0,
    specs: () => specs,
    call: async (name: string, args: Record<string, unknown>) =>
      toolAnswer(`${label}:${name}:${JSON.stringify(args)}`),
    close: async () => {
      host.closed++;
    },
  };
  return host;
}

describe("createCompositeToolHost", () => {
  it("merges the specs in order and routes each call to its host", async () => {
    const a = fakeHost("a", [READ_FILE]);
    const b = fakeHost("b", [WRITE_FILE]);
    const r = createCompositeToolHost([a, b]);
    if (!r.ok) throw new Error("composite");
    expect(r.value.specs().map((s) => s.name)).toEqual([READ_FILE.name, WRITE_FILE.name]);
    expect(await r.value.call(WRITE_FILE.name, { path: "x" })).toEqual({
      ok: true,
      isError: false,
      content: 'b:workspace.write_file:{"path":"x"}',
    });
    expect((await r.value.call(READ_FILE.name, {})).content).toMatch(/^a:/);
  });

  it("answers an unknown tool with tool/unknown, not a rejection", async () => {
    const r = createCompositeToolHost([fakeHost("a")]);
    if (!r.ok) throw new Error("composite");
    expect(await r.value.call("nope.tool", {})).toMatchObject({
      ok: false,
      isError: true,
      code: "tool/unknown",
    });
  });

  it("refuses a name offered by two hosts", () => {
    const r = createCompositeToolHost([fakeHost("a"), fakeHost("b", [WRITE_FILE, READ_FILE])]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => [e.code, e.path])).toEqual([["tool/duplicate-name", "/1/1"]]);
  });

  it("closes every host", async () => {
    const a = fakeHost("a", [READ_FILE]);
    const b = fakeHost("b", [WRITE_FILE]);
    const r = createCompositeToolHost([a, b]);
    if (!r.ok) throw new Error("composite");
    await r.value.close?.();
    expect([a.closed, b.closed]).toEqual([1, 1]);
  });

  it("builds a registry of a host's tools", () => {
    const r = registryOf(fakeHost("a", [READ_FILE, WRITE_FILE]));
    expect(r.ok && r.value.get(WRITE_FILE.name)?.spec.effect).toBe("mutation");
  });

  it("keeps failures and answers apart", () => {
    expect(toolFailure("tool/timeout", "late")).toEqual({
      ok: false,
      isError: true,
      code: "tool/timeout",
      content: "late",
    });
    expect(toolAnswer("no", true)).toEqual({ ok: true, isError: true, content: "no" });
  });
});
