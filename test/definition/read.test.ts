// The strict reader: duplicate keys, unsafe integers, lone surrogates, malformed JSON, non-object root.
import { describe, expect, it } from "vitest";
import { readDefinition, readDocument } from "../../src/core/definition/read.js";
import { MAX_LOCATED } from "../../src/core/definition/source-positions.js";
import { listItemSpelling } from "../../src/core/definition/spellings.js";
import { validateDefinition } from "../../src/core/definition/validate.js";

function problems(text: string) {
  const r = readDefinition(text);
  return r.ok
    ? []
    : r.errors.map((e) => ({ code: e.code, path: e.path, line: e.line, column: e.column }));
}

describe("readDefinition", () => {
  it("reads a document losslessly into plain values", () => {
    const r = readDefinition('{"a":[1,-2.5e3,true,false,null,"x\\u00e9\\n"],"b":{},"c":[]}');
    expect(r).toEqual({
      ok: true,
      value: { a: [1, -2500, true, false, null, "xé\n"], b: {}, c: [] },
    });
  });

  it("refuses a duplicate key with its pointer, line and column", () => {
    expect(problems('{\n  "models": [\n    {"provider": "a", "provider": "b"}\n  ]\n}')).toEqual([
      { code: "definition/duplicate-key", path: "/models/0/provider", line: 3, column: 23 },
    ]);
  });

  it("escapes pointer tokens and counts columns in code points", () => {
    expect(problems('{"😀😀": 1, "a/b~": {"x": 1, "x": 2}}')).toEqual([
      { code: "definition/duplicate-key", path: "/a~1b~0/x", line: 1, column: 28 },
    ]);
  });

  it("refuses integers outside ±(2^53−1) anywhere, including exponent spellings", () => {
    expect(problems('{"extensions": {"x": [9007199254740991, -9007199254740991]}}')).toEqual([]);
    expect(
      problems(
        '{"extensions": {"x": [9007199254740992]}, "m": {"config": {"n": -9007199254740993}}, "e": 1e400, "f": 2E+20}',
      ).map((p) => [p.code, p.path]),
    ).toEqual([
      ["definition/unsafe-integer", "/extensions/x/0"],
      ["definition/unsafe-integer", "/m/config/n"],
      ["definition/unsafe-integer", "/e"],
      ["definition/unsafe-integer", "/f"],
    ]);
  });

  it("accepts non-integral and small numbers", () => {
    expect(problems('{"a": 1.5, "b": 1e-400, "c": -0, "d": 12345678901234.5}')).toEqual([]);
  });

  it("refuses lone surrogates in values and keys, raw or escaped, but accepts pairs", () => {
    expect(problems('{"a": "\\ud83d\\ude00", "b": "😀"}')).toEqual([]);
    expect(problems('{"a": "x\\ud800"}').map((p) => [p.code, p.path])).toEqual([
      ["definition/lone-surrogate", "/a"],
    ]);
    expect(problems('{"a": ["\\udc00y"]}').map((p) => [p.code, p.path])).toEqual([
      ["definition/lone-surrogate", "/a/0"],
    ]);
    expect(problems('{"k\\ud800": 1}').map((p) => [p.code, p.path])).toEqual([
      ["definition/lone-surrogate", "/k\ufffd"],
    ]);
    expect(problems('{"a": "\ud800"}').map((p) => p.code)).toEqual(["definition/lone-surrogate"]);
  });

  it("reports every strict-reading problem of a document at once", () => {
    expect(problems('{"a": 1, "a": 2, "b": 1e300, "c": "\\udfff"}').map((p) => p.code)).toEqual([
      "definition/duplicate-key",
      "definition/unsafe-integer",
      "definition/lone-surrogate",
    ]);
  });

  it.each([
    ["", 1, 1],
    ["{", 1, 2],
    ['{"a": 1,}', 1, 9],
    ['{"a" 1}', 1, 6],
    ["{'a': 1}", 1, 2],
    ['{"a": 01}', 1, 8],
    ['{"a": 1.}', 1, 9],
    ['{"a": -}', 1, 8],
    ['{"a": 1e}', 1, 9],
    ['{"a": tru}', 1, 7],
    ['{"a": NaN}', 1, 7],
    ['{"a": "\\x"}', 1, 8],
    ['{"a": "\\u12"}', 1, 8],
    ['{"a": "line\nbreak"}', 1, 12],
    ['{"a": "open', 1, 12],
    ['{"a": 1} {}', 1, 10],
    ['\ufeff{"a": 1}', 1, 1],
    ['{"a": [1 2]}', 1, 10],
  ])("refuses malformed JSON %j at line %i column %i", (text, line, column) => {
    const r = readDefinition(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ code: "definition/json", line, column });
  });

  it("gives the pointer of the value being read when the syntax breaks", () => {
    const r = readDefinition('{"models": [{"provider": x}]}');
    expect(r.ok ? undefined : r.errors[0]?.path).toBe("/models/0/provider");
  });

  it.each(["[]", "1", '"x"', "null", "true", " [ {} ] "])(
    "refuses the non-object root %j",
    (text) => {
      const r = readDefinition(text);
      expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([["definition/json", ""]]);
    },
  );

  it("refuses nesting deeper than its bound without overflowing the stack", () => {
    const deep = `{"a": ${"[".repeat(200_000)}${"]".repeat(200_000)}}`;
    const r = readDefinition(deep);
    expect(r.ok ? [] : r.errors.map((e) => e.code)).toEqual(["definition/json"]);
  });

  it("reports every duplicate of a long single-line document with its column", () => {
    const members = Array.from({ length: 100_000 }, (_, i) => `"k":${i}`);
    const r = readDefinition(`{"😀":1,${members.join(",")}}`);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(99_999);
    expect(r.errors[0]).toMatchObject({
      code: "definition/duplicate-key",
      path: "/k",
      line: 1,
      column: 14,
    });
    const lastAt = `{"😀":1,${members.slice(0, -1).join(",")},`.length - 1;
    expect(r.errors.at(-1)?.column).toBe(lastAt + 1);
  });

  it("keeps __proto__ as an ordinary key", () => {
    const r = readDefinition('{"extensions": {"__proto__": {"polluted": true}}}');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const ext = (r.value as { extensions: Record<string, unknown> }).extensions;
    expect(Object.keys(ext)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(ext)).toBe(Object.prototype);
  });

  it("is linear: a 5 MiB document with a million members parses", () => {
    const items = Array.from({ length: 100_000 }, (_, i) => `{"k${i}":"v\\n${i}","n":${i}}`);
    const text = `{"extensions":{"big":[${items.join(",")}]}}`;
    expect(text.length).toBeGreaterThan(3_000_000);
    const r = readDocument(text);
    expect(r.ok).toBe(true);
  });

  it("locates schema and rule errors in the author's text", () => {
    const text = [
      "{",
      '  "schema": "viper/agent-definition/v1",',
      '  "name": "x",',
      '  "framework": ["warrant"],',
      '  "models": [["scripted", 5]]',
      "}",
    ].join("\n");
    const r = validateDefinition(text);
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path, e.line, e.column])).toEqual([
      ["definition/schema", "/models/0/1", 5, 27],
    ]);
  });

  it("locates through escaped keys, nested arrays and strings holding brackets", () => {
    const text = [
      "{",
      '  "schema": "viper/agent-definition/v1", "name": "x", "description": "a } ] \\" [ {",',
      '  "framework": {"name": "w"},',
      '  "models": [{"provider": "p", "model": "m"}],',
      '  "extensions": {"z": [[1, {"q": "]"}], "}"]},',
      '  "tools": [{"name": "t", "description": "", "inputSchema": {}},',
      '            {"name": "t", "description": "", "inputSchema": {}}],',
      '  "b\\u0061d": 1',
      "}",
    ].join("\n");
    const r = validateDefinition(text);
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path, e.line, e.column])).toEqual([
      ["definition/schema", "/bad", 8, 3],
    ]);
    const fixed = text.replace(',\n  "b\\u0061d": 1', "");
    const f = validateDefinition(fixed);
    expect(f.ok ? [] : f.errors.map((e) => [e.code, e.path, e.line, e.column])).toEqual([
      ["definition/duplicate-name", "/tools/1/name", 7, 14],
    ]);
  });

  it("gives line and column to the first problems only, pointers to all", () => {
    const tools = Array.from({ length: 100 }, () => ({
      name: "same",
      description: "",
      inputSchema: {},
    }));
    const doc = {
      schema: "viper/agent-definition/v1",
      name: "x",
      framework: { name: "w" },
      models: [{ provider: "p", model: "m" }],
      tools,
    };
    const r = validateDefinition(JSON.stringify(doc, null, 1));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(99);
    expect(r.errors.filter((e) => e.line !== undefined)).toHaveLength(MAX_LOCATED);
    expect(r.errors.every((e) => e.path.startsWith("/tools/"))).toBe(true);
  });
});

describe("long arrays", () => {
  const many = <T>(n: number, f: (i: number) => T): T[] =>
    Array.from({ length: n }, (_, i) => f(i));

  it("read as JSON.parse reads them, counted past strings holding brackets, commas and quotes", () => {
    const items = many(9_000, (i) =>
      i % 4 === 0
        ? `s,]["\\${i}}{`
        : i % 4 === 1
          ? [i, { a: "]}", b: [1, 2, '"['] }, many(i % 3, () => [])]
          : i % 4 === 2
            ? { "k,]": many(5_000 * (i === 2 ? 1 : 0), (j) => j) }
            : -i / 8,
    );
    const doc = { list: items, after: [items.slice(0, 4_100), many(4_097, (j) => `${j}`)] };
    for (const text of [JSON.stringify(doc), JSON.stringify(doc, null, 2)]) {
      const r = readDefinition(text);
      expect(r.ok && r.value).toEqual(JSON.parse(text));
    }
  });

  it("report malformed text where a short array would", () => {
    const list = many(5_000, (i) => i).join(",");
    const at = (path: string, column: number, message: string) => ({
      code: "definition/json",
      path,
      line: 1,
      column,
      message: `malformed JSON: ${message}`,
    });
    const read = (text: string) => {
      const r = readDefinition(text);
      return r.ok ? [] : r.errors;
    };
    const end = list.length + 7;
    expect(read(`{"a":[${list},]}`)).toEqual([
      at("/a/5000", end + 1, 'unexpected "]"; expected a value'),
    ]);
    expect(read(`{"a":[${list}}`)).toEqual([at("/a", end, `unexpected "}"; expected ',' or ']'`)]);
    expect(read(`{"a":[${list}`)).toEqual([
      at("/a", end, "unexpected end of input; expected ',' or ']'"),
    ]);
    expect(read(`{"a":[${list},"x]`)).toEqual([at("/a/5000", end + 4, "unterminated string")]);
  });
});

describe("list items written as arrays", () => {
  const head = '"schema":"viper/agent-definition/v1","name":"n","framework":{"name":"f"}';

  it("are made objects as they are read, where the rewriter would make them", () => {
    const text = `{${head},"models":[["p","m"],["p"],{"provider":"q","model":"n"}],"extensions":{"models":[["p","m"]]},"subAgents":[{"models":[["a","b"]],"tools":[["t","d",{}]]}]}`;
    const r = readDocument(text, { spelling: listItemSpelling });
    if (!r.ok) throw new Error("readable");
    const v = r.value.value as Record<string, unknown>;
    expect(v.models).toEqual([{ provider: "p", model: "m" }, ["p"], { provider: "q", model: "n" }]);
    expect(v.extensions).toEqual({ models: [["p", "m"]] });
    expect(v.subAgents).toEqual([
      {
        models: [{ provider: "a", model: "b" }],
        tools: [{ name: "t", description: "d", inputSchema: {} }],
      },
    ]);
    const plain = readDocument(text);
    expect(plain.ok && (plain.value.value as Record<string, unknown>).models).toEqual(
      JSON.parse(text).models,
    );
  });

  it("are located as written, in a long list and beyond the sub-agents' depth", () => {
    const models = Array.from({ length: 6_000 }, (_, i) => `["p","m${i}"]`);
    models[5_500] = '["p",""]';
    models[5_600] = '["p","m1"]';
    const text = `{\n${head},\n"models":[\n${models.join(",\n")}]}`;
    const r = validateDefinition(text);
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path, e.line, e.column])).toEqual([
      ["definition/blank", "/models/5500/1", 5504, 6],
      ["definition/duplicate-model", "/models/5600", 5604, 1],
    ]);
    let sub = `{"name":"x","framework":["f"],"models":[["p",""]]}`;
    for (let d = 0; d < 8; d++)
      sub = `{"name":"s${d}","framework":["f"],"models":[["p","m"]],"subAgents":[${sub}]}`;
    const deep = validateDefinition(`{${head},"models":[["p","m"]],"subAgents":[${sub}]}`);
    expect(
      deep.ok ? [] : deep.errors.map((e) => [e.code, e.path.replaceAll("/subAgents/0", "/s")]),
    ).toEqual([["definition/depth", "/s/s/s/s/s/s/s/s/s"]]);
  });
});
