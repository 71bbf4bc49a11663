// `npm run build:types`: writes the TypeScript types of every schema in contracts/ (the seeds and
// ours) into src/core/contracts/types/, one module per schema, with json-schema-to-typescript.
// `--check` writes nothing: it lists the files that differ from what would be written and exits 1
// when there is any (test/contract-types.test.ts runs it); `--dir DIR` checks or writes DIR instead.
//
// What this adds to the generator, which reads draft-07 and knows nothing of the `$id`s here:
// - a `$ref` into another contract becomes an import of that contract's generated type, so each
//   wire type is declared once (`urn:warrant:finding:v1`, `operator-task-common.v1.schema.json#/…`);
// - draft 2020-12 `prefixItems` (with `items: false`) is read as the draft-07 tuple it means;
// - a schema that is only a set of `$defs` (the common schema) exports each of them by name;
// - bounds on array lengths are left to the validators: `[T, ...T[]]` for `minItems: 1` would make
//   every array built in code prove its length to the compiler.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CONTRACTS = path.join(root, "contracts");
const DEFAULT_OUT = path.join(root, "src/core/contracts/types");

/** Each contract's file (relative to contracts/) and the name of its root type. */
const CONTRACTS_TABLE = [
  ["agent-definition.v1.schema.json", "AgentDefinitionV1"],
  ["corpus-task-pack-loop.v1.schema.json", "CorpusTaskPackLoopV1"],
  ["model-turn.schema.json", "ModelTurnV1"],
  ["ledger-records.v1.json", undefined],
  ["operator-task-common.v1.schema.json", undefined],
  ["eval-set.v1.json", "EvalSetV1"],
  ["task-pack.v1.json", "TaskPackV1"],
  ["messages/dead-end.v1.json", "DeadEndV1"],
  ["messages/finding.v1.json", "FindingV1"],
  ["messages/plan.v1.json", "PlanV1"],
  ["messages/question.v1.json", "QuestionV1"],
  ["messages/result.v1.json", "ResultV1"],
  ["messages/verdict.v1.json", "VerdictV1"],
];

const OPTIONS = {
  bannerComment: "",
  // An object type lists the properties its schema names; an open map only where the schema names
  // none (see prepare).
  additionalProperties: false,
  ignoreMinAndMaxItems: true,
  unknownAny: true,
  style: { printWidth: 100, bracketSpacing: true, trailingComma: "all", semi: true },
};

/** The name of the root under which a schema of definitions only is compiled. */
const DEFS_ROOT = "ContractDefinitions";

/** `deliberationLimits` → `DeliberationLimits`: the generator's own name for a `$defs` key. */
const pascal = (key) =>
  key
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join("");

/** The output module of a contract: `messages/plan.v1.json` → `messages/plan.v1.ts`. */
const moduleOf = (file) => file.replace(/(\.schema)?\.json$/, ".ts");

function readSchema(file) {
  return JSON.parse(readFileSync(path.join(CONTRACTS, file), "utf8"));
}

/** Every contract file under contracts/ (so a new schema without a row in the table is an error). */
function contractFiles(dir = CONTRACTS, prefix = "") {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return contractFiles(path.join(dir, e.name), `${prefix}${e.name}/`);
    return e.name.endsWith(".json") ? [`${prefix}${e.name}`] : [];
  });
}

/**
 * Where an external `$ref` points: the contract file and the type it generates. The `$ref` is read
 * as the schemas' own validators read it: a `$id` of another contract, or (the loop seed's form) a
 * file name beside the referring schema.
 */
function externalTarget(ref, from, byId) {
  const [base, fragment = ""] = ref.split("#");
  const file =
    byId.get(base) ?? path.posix.normalize(path.posix.join(path.posix.dirname(from), base));
  const row = CONTRACTS_TABLE.find(([f]) => f === file);
  if (row === undefined) throw new Error(`${from}: $ref ${ref} names no contract`);
  if (fragment === "" || fragment === "/") {
    if (row[1] === undefined) throw new Error(`${from}: $ref ${ref} names a schema with no root`);
    return { file, type: row[1], schema: readSchema(file) };
  }
  const m = /^\/\$defs\/([^/]+)$/.exec(fragment);
  if (m === null) throw new Error(`${from}: $ref ${ref}: only roots and $defs entries are supported`);
  const schema = readSchema(file).$defs?.[m[1]];
  if (schema === undefined) throw new Error(`${from}: $ref ${ref} is dangling`);
  return { file, type: pascal(m[1]), schema };
}

/** Keywords beside an external `$ref` that do not constrain: kept as they are. */
const ANNOTATIONS = new Set(["description", "title", "$comment", "examples"]);

/**
 * The type of an external `$ref` with a `required` beside it (2020-12 applies both): the target's
 * type with those properties made required.
 */
function withRequired(target, required) {
  if (required === undefined) return target.type;
  const keys = Object.keys(target.schema.properties ?? {});
  if (keys.length > 0 && keys.every((k) => required.includes(k))) return `Required<${target.type}>`;
  return `${target.type} & Required<Pick<${target.type}, ${required.map((k) => JSON.stringify(k)).join(" | ")}>>`;
}

/** A copy of `schema` the generator reads as the validators do, and the imports it needs. */
function prepare(schema, from, byId) {
  const imports = new Map();
  const walk = (node) => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== "object") return node;
    if (typeof node.$ref === "string" && !node.$ref.startsWith("#")) {
      const target = externalTarget(node.$ref, from, byId);
      if (!imports.has(target.file)) imports.set(target.file, new Set());
      imports.get(target.file).add(target.type);
      const { $ref: _, required, ...rest } = node;
      const unsupported = Object.keys(rest).filter((k) => !ANNOTATIONS.has(k));
      if (unsupported.length > 0) {
        throw new Error(`${from}: $ref ${node.$ref} beside ${unsupported.join(", ")}: not supported`);
      }
      return { ...rest, tsType: withRequired(target, required) };
    }
    const out = {};
    for (const [k, v] of Object.entries(node)) out[k] = walk(v);
    const named = out.properties !== undefined || out.patternProperties !== undefined;
    if (out.type === "object" && !named && out.additionalProperties === undefined) {
      out.additionalProperties = true;
    }
    if (Array.isArray(out.prefixItems)) {
      const { prefixItems, items, ...rest } = out;
      return { ...rest, items: prefixItems, additionalItems: items ?? true };
    }
    return out;
  };
  return { schema: walk(schema), imports };
}

function importLines(imports, from) {
  const lines = [];
  for (const [file, types] of [...imports].sort(([a], [b]) => a.localeCompare(b))) {
    let spec = path.posix.relative(path.posix.dirname(from), moduleOf(file)).replace(/\.ts$/, ".js");
    if (!spec.startsWith(".")) spec = `./${spec}`;
    lines.push(`import type { ${[...types].sort().join(", ")} } from "${spec}";`);
  }
  return lines;
}

/** Every generated module: path (relative to the output folder) → text. */
export async function contractTypes() {
  const files = contractFiles().sort();
  const known = CONTRACTS_TABLE.map(([f]) => f).sort();
  if (JSON.stringify(files) !== JSON.stringify(known)) {
    throw new Error(`contracts/ holds ${files.join(", ")}; the table names ${known.join(", ")}`);
  }
  const byId = new Map(CONTRACTS_TABLE.map(([f]) => [readSchema(f).$id, f]));
  const out = new Map();
  for (const [file, rootName] of CONTRACTS_TABLE) {
    const { schema, imports } = prepare(readSchema(file), file, byId);
    const { $defs = {}, ...rootSchema } = schema;
    const parts = [];
    if (rootName === undefined) {
      // Only definitions: each is a type of its own, named by its key. They are compiled together
      // under a root that names them all (so one that refers to another is declared once), and that
      // root's own declaration is dropped.
      const properties = Object.fromEntries(
        Object.keys($defs).map((k) => [k, { $ref: `#/$defs/${k}` }]),
      );
      const all = { title: DEFS_ROOT, type: "object", properties, additionalProperties: false, $defs };
      const text = await compile(all, DEFS_ROOT, OPTIONS);
      const start = text.indexOf(`export interface ${DEFS_ROOT} {`);
      const end = text.indexOf("\n}\n", start);
      if (start < 0 || end < 0) throw new Error(`${file}: the definitions' root was not found`);
      parts.push(text.slice(0, start) + text.slice(end + 3));
    } else {
      parts.push(await compile({ ...rootSchema, title: rootName, $defs }, rootName, OPTIONS));
    }
    const header = [
      `// Generated by \`npm run build:types\` from contracts/${file}: do not edit.`,
      ...importLines(imports, file),
      "",
    ];
    out.set(moduleOf(file), `${header.join("\n")}\n${parts.join("\n").trim()}\n`);
  }
  return out;
}

/** Files under `dir` that differ from, lack, or are not among the generated ones. */
function staleFiles(dir, expected) {
  const present = new Set(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join("/")),
  );
  const stale = [];
  for (const [name, text] of expected) {
    if (!present.has(name)) stale.push(`${name} (missing)`);
    else if (readFileSync(path.join(dir, name), "utf8") !== text) stale.push(`${name} (differs)`);
  }
  for (const name of present) if (!expected.has(name)) stale.push(`${name} (not generated)`);
  return stale.sort();
}

async function main(argv) {
  const check = argv.includes("--check");
  const at = argv.indexOf("--dir");
  const dir = at >= 0 ? path.resolve(argv[at + 1]) : DEFAULT_OUT;
  const expected = await contractTypes();
  if (check) {
    const stale = staleFiles(dir, expected);
    if (stale.length > 0) {
      process.stderr.write(
        `build:types: stale (run \`npm run build:types\`):\n${stale.map((s) => `  ${s}\n`).join("")}`,
      );
      process.exitCode = 1;
    }
    return;
  }
  rmSync(dir, { recursive: true, force: true });
  for (const [name, text] of expected) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  process.stderr.write(`build:types: wrote ${[...expected.keys()].join(", ")}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv.slice(2));
