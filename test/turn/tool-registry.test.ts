// The tool registry: names, duplicates, effects and tolerant schema compilation at registration.
import { describe, expect, it } from "vitest";
import { createToolRegistry, type ToolSpec } from "../../src/core/turn/tool-registry.js";
import { READ_FILE, WRITE_FILE } from "./fixtures.js";

function spec(over: Partial<ToolSpec>): ToolSpec {
  return { ...READ_FILE, ...over };
}

function codes(specs: readonly ToolSpec[]): [string, string][] {
  const r = createToolRegistry(specs);
  return r.ok ? [] : r.errors.map((e) => [e.code, e.path]);
}

describe("createToolRegistry", () => {
  it("registers tools in order and looks them up by name", () => {
    const r = createToolRegistry([READ_FILE, WRITE_FILE]);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.specs().map((s) => s.name)).toEqual([READ_FILE.name, WRITE_FILE.name]);
    expect(r.value.get("workspace.read_file")?.spec).toBe(READ_FILE);
    expect(r.value.get("nope")).toBeUndefined();
    const validate = r.value.get("workspace.read_file")?.validate;
    expect(validate?.({ path: "a" })).toBe(true);
    expect(validate?.({})).toBe(false);
  });

  it("restricts to one effect class", () => {
    const r = createToolRegistry([READ_FILE, WRITE_FILE]);
    if (!r.ok) throw new Error("registry");
    const obs = r.value.withEffect("observation");
    expect(obs.specs().map((s) => s.name)).toEqual([READ_FILE.name]);
    expect(obs.get(WRITE_FILE.name)).toBeUndefined();
    expect(r.value.withEffect("mutation").specs()).toEqual([WRITE_FILE]);
  });

  it.each(["Read", "r", "1tool", "has space", "a/b", "tool!", ""])(
    "tool/name-invalid: %j",
    (name) => {
      expect(codes([spec({ name })])).toEqual([["tool/name-invalid", "/0/name"]]);
    },
  );

  it("accepts names with dots, dashes and underscores", () => {
    expect(codes([spec({ name: "srv-1.get_thing.v2" })])).toEqual([]);
  });

  it("tool/duplicate-name", () => {
    expect(codes([READ_FILE, WRITE_FILE, READ_FILE])).toEqual([["tool/duplicate-name", "/2/name"]]);
  });

  it("tool/effect-invalid", () => {
    expect(codes([spec({ effect: "destroy" as never })])).toEqual([
      ["tool/effect-invalid", "/0/effect"],
    ]);
  });

  it("tool/input-schema: root that does not accept objects, not an object, does not compile", () => {
    expect(codes([spec({ inputSchema: { type: "string" } })])).toEqual([
      ["tool/input-schema", "/0/inputSchema/type"],
    ]);
    expect(codes([spec({ inputSchema: [] as never })])).toEqual([
      ["tool/input-schema", "/0/inputSchema"],
    ]);
    expect(
      codes([spec({ inputSchema: { type: "object", properties: { a: { type: "nonsense" } } } })]),
    ).toEqual([["tool/input-schema", "/0/inputSchema"]]);
    expect(codes([spec({ inputSchema: { type: "object", $ref: "#/nowhere" } })])).toEqual([
      ["tool/input-schema", "/0/inputSchema"],
    ]);
  });

  it("accepts a schema with no type, or a type list including object", () => {
    expect(
      codes([
        spec({ inputSchema: {} }),
        spec({ name: "b.c", inputSchema: { type: ["object", "null"] } }),
      ]),
    ).toEqual([]);
  });

  it("tolerates unknown keywords and formats (MCP servers' schemas)", () => {
    const r = createToolRegistry([
      spec({
        inputSchema: {
          type: "object",
          "x-vendor": { anything: true },
          properties: { when: { type: "string", format: "vendor-time" }, n: { type: "integer" } },
          required: ["n"],
        },
      }),
    ]);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const validate = r.value.get(READ_FILE.name)?.validate;
    expect(validate?.({ n: 1, when: "whenever" })).toBe(true);
    expect(validate?.({ n: "1" })).toBe(false);
  });

  it("compiles draft-07 schemas with draft-07 semantics and ignores repeated $ids", () => {
    const draft07 = {
      $schema: "http://json-schema.org/draft-07/schema#",
      $id: "urn:same",
      type: "object",
      properties: { pair: { type: "array", items: [{ type: "string" }, { type: "number" }] } },
      definitions: { x: { type: "string" } },
    };
    const r = createToolRegistry([
      spec({ name: "a.one", inputSchema: draft07 }),
      spec({ name: "a.two", inputSchema: { ...draft07, $schema: undefined } as never }),
    ]);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const validate = r.value.get("a.one")?.validate;
    expect(validate?.({ pair: ["a", 1] })).toBe(true);
    expect(validate?.({ pair: [1, "a"] })).toBe(false);
  });

  it("reports every broken spec at once", () => {
    expect(
      codes([spec({ name: "X" }), spec({ name: "b.c", inputSchema: { type: "array" } })]),
    ).toEqual([
      ["tool/name-invalid", "/0/name"],
      ["tool/input-schema", "/1/inputSchema/type"],
    ]);
  });
});
