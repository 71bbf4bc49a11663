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

  it("compiles a schema once per process: a later registry of the same tools reuses its validator", () => {
    const schema = { type: "object", properties: { q: { type: "string", minLength: 2 } } };
    const first = createToolRegistry([spec({ name: "c.one", inputSchema: schema })]);
    const again = createToolRegistry([
      spec({ name: "c.other", inputSchema: JSON.parse(JSON.stringify(schema)) }),
    ]);
    if (!first.ok || !again.ok) throw new Error("registry");
    const v1 = first.value.get("c.one")?.validate;
    const v2 = again.value.get("c.other")?.validate;
    expect(v2).toBe(v1);
    expect(v2?.({ q: "ab" })).toBe(true);
    expect(v2?.({ q: "a" })).toBe(false);
    // Another schema, another validator; the dialect named by $schema is part of the schema.
    const other = createToolRegistry([
      spec({ name: "c.one", inputSchema: { ...schema, required: ["q"] } }),
    ]);
    if (!other.ok) throw new Error("registry");
    expect(other.value.get("c.one")?.validate).not.toBe(v1);
    expect(other.value.get("c.one")?.validate?.({})).toBe(false);
  });

  it("compiles, in later registries, two schemas whose nested $ids clash", () => {
    const nested = (t: string) => ({
      type: "object",
      properties: { v: { $ref: "urn:shared-def" } },
      $defs: { d: { $id: "urn:shared-def", type: t } },
    });
    const a = createToolRegistry([spec({ name: "d.one", inputSchema: nested("string") })]);
    const b = createToolRegistry([spec({ name: "d.two", inputSchema: nested("number") })]);
    if (!a.ok || !b.ok) throw new Error(JSON.stringify([a, b]));
    expect(a.value.get("d.one")?.validate?.({ v: "x" })).toBe(true);
    expect(a.value.get("d.one")?.validate?.({ v: 1 })).toBe(false);
    expect(b.value.get("d.two")?.validate?.({ v: 1 })).toBe(true);
    expect(b.value.get("d.two")?.validate?.({ v: "x" })).toBe(false);
    // A schema that does not compile is still refused, cached or not.
    const broken = { type: "object", properties: { v: { $ref: "urn:nowhere" } } };
    expect(codes([spec({ inputSchema: broken })])).toEqual([
      ["tool/input-schema", "/0/inputSchema"],
    ]);
    expect(codes([spec({ inputSchema: broken })])).toEqual([
      ["tool/input-schema", "/0/inputSchema"],
    ]);
  });

  it("keeps at most 512 compiled schemas: past them it starts again and compiles anew", () => {
    const schemaN = (n: number) => ({ type: "object", properties: { [`p${n}`]: { const: n } } });
    const validatorOf = (n: number) => {
      const r = createToolRegistry([spec({ name: "e.tool", inputSchema: schemaN(n) })]);
      if (!r.ok) throw new Error("registry");
      return r.value.get("e.tool")?.validate;
    };
    const first = validatorOf(0);
    expect(validatorOf(0)).toBe(first);
    for (let n = 1; n <= 512; n++) validatorOf(n);
    const again = validatorOf(0);
    expect(again).not.toBe(first);
    expect(again?.({ p0: 0 })).toBe(true);
    expect(again?.({ p0: 1 })).toBe(false);
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
