// The stored form (docs/spec/definitions.md): null optionals removed and graph lists filled for any
// JSON object; a definition's stored form is answered as a definition only when it has the
// properties every definition has.
import { describe, expect, it } from "vitest";
import {
  canonicalForm,
  canonicalFormInPlace,
  isAgentDefinition,
  storedForm,
} from "../../src/core/definition/canonical-form.js";
import { full, minimal } from "./fixtures.js";

describe("storedForm", () => {
  it("removes null properties at every level but inside free-form data, and fills graph lists", () => {
    const doc = {
      a: null,
      b: { c: null, d: [1, null, { e: null }] },
      extensions: { kept: null },
      graph: { nodes: ["x"] },
      subAgents: [{ graph: {}, f: null }],
    };
    expect(storedForm(doc)).toEqual({
      b: { d: [1, null, {}] },
      extensions: { kept: null },
      graph: { nodes: ["x"], edges: [] },
      subAgents: [{ graph: { nodes: [], edges: [] } }],
    });
    expect(doc.a).toBeNull();
  });

  it("keeps an own __proto__ property as data", () => {
    const doc = JSON.parse('{"__proto__": {"x": 1}, "y": null}') as Record<string, unknown>;
    const out = storedForm(doc);
    expect(Object.keys(out)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});

describe("canonicalForm", () => {
  it("answers a definition's stored form", () => {
    const def = { ...minimal(), description: null };
    const out = canonicalForm(def);
    expect(out.name).toBe("minimal");
    expect(Object.hasOwn(out, "description")).toBe(false);
  });

  it("refuses an object without the properties every definition has", () => {
    expect(() => canonicalForm({ z: [3, 2, 1] })).toThrow(TypeError);
    for (const key of ["schema", "name", "framework", "models"]) {
      const def: Record<string, unknown> = { ...minimal() };
      delete def[key];
      expect(isAgentDefinition(storedForm(def)), key).toBe(false);
    }
    expect(isAgentDefinition(storedForm({ ...minimal(), framework: {} }))).toBe(false);
    expect(
      isAgentDefinition(storedForm({ ...minimal(), schema: "viper/agent-definition/v2" })),
    ).toBe(false);
    expect(isAgentDefinition(storedForm(minimal()))).toBe(true);
  });
});

describe("canonicalFormInPlace", () => {
  it("makes the stored form canonicalForm makes, in the tree itself", () => {
    const docs = [
      minimal(),
      full(),
      {
        ...full(),
        version: null,
        extensions: { kept: null, deep: [null, { x: null }] },
        graph: { nodes: ["x"], edges: null },
        models: [{ provider: "p", model: "m", settings: { seed: null, betas: [] } }],
        subAgents: [
          {
            ...minimal(),
            graph: {},
            description: null,
            subAgents: [{ ...minimal(), graph: { edges: [] } }],
          },
        ],
        tools: [
          {
            name: "t",
            description: "d",
            inputSchema: { type: "object", default: null },
            sourceHash: null,
          },
        ],
      },
    ];
    for (const doc of docs) {
      const copy = structuredClone(doc);
      const expected = canonicalForm(doc);
      const out = canonicalFormInPlace(copy);
      expect(out).toBe(copy);
      expect(JSON.stringify(out)).toBe(JSON.stringify(expected));
    }
    const text = '{"__proto__": {"x": null}, "y": null}';
    const own = JSON.parse(text) as Record<string, unknown>;
    expect(() => canonicalFormInPlace(own)).toThrow(TypeError);
    expect(JSON.stringify(own)).toBe(JSON.stringify(storedForm(JSON.parse(text))));
    expect(JSON.stringify(own)).toBe('{"__proto__":{}}');
    expect(Object.getPrototypeOf(own)).toBe(Object.prototype);
  });
});
