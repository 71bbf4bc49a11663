// Validation against the unchanged seed schema, with Ajv's errors turned into one problem per
// violation. Violations that a semantic rule owns are given that rule's code (a non-blank pattern or
// an empty string → `definition/blank`, a URL the pattern refuses → `definition/credential` or
// `definition/url` when the URL check explains it) or left to the rule that reports them more exactly
// (`maxLength` → the UTF-8 byte check of `definition/too-long`; duplicate betas →
// `definition/betas-order`).
import type { ErrorObject } from "../contracts/ajv-factory.js";
import { contractSources } from "../contracts/contract-sources.js";
import { validate as agentDefinitionSchema } from "../contracts/generated/agent-definition.js";
import { validateLinear } from "../contracts/linear-validation.js";
import type { Problem } from "../result.js";
import { checkUrl } from "./url-check.js";

/** The schema's "non-blank" pattern: a character that is not white space in Rust's sense. */
export const NON_BLANK_PATTERN =
  "[^\\u0009-\\u000D\\u0020\\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000]";

const BETAS_PATH = /\/settings\/betas$/;
const MCP_URL_PATH = /\/mcpServers\/[0-9]+\/url$/;

function valueAt(root: unknown, path: string): unknown {
  let cur = root;
  if (path === "") return cur;
  for (const raw of path.slice(1).split("/")) {
    const token = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[token];
  }
  return cur;
}

function schemaProblem(e: ErrorObject, path = e.instancePath, message?: string): Problem {
  return {
    code: "definition/schema",
    path,
    message: message ?? `${e.message ?? "is invalid"} (${e.keyword})`,
    detail: { keyword: e.keyword, schemaPath: e.schemaPath, params: e.params },
  };
}

function within(e: ErrorObject, c: ErrorObject): boolean {
  return e.instancePath === c.instancePath || e.instancePath.startsWith(`${c.instancePath}/`);
}

/**
 * One problem per violation: Ajv reports the failing branches of an anyOf/oneOf before the
 * combinator itself. A nullable struct (`anyOf: [struct, {type: null}]`) is reported by its struct
 * branch alone; any other combinator replaces its branches ("must be one of …" for a set of consts).
 */
function collapse(errors: readonly ErrorObject[]): ErrorObject[] {
  const dropped = new Set<number>();
  const renamed = new Map<number, string>();
  errors.forEach((c, ci) => {
    if (c.keyword !== "anyOf" && c.keyword !== "oneOf") return;
    const branches: number[] = [];
    for (let i = 0; i < ci; i++) {
      const e = errors[i] as ErrorObject;
      if (!dropped.has(i) && within(e, c)) branches.push(i);
    }
    const nullBranch = branches.find((i) => {
      const e = errors[i] as ErrorObject;
      return e.keyword === "type" && e.params.type === "null" && e.instancePath === c.instancePath;
    });
    if (c.keyword === "anyOf" && nullBranch !== undefined && branches.length > 1) {
      dropped.add(ci);
      dropped.add(nullBranch);
      return;
    }
    for (const i of branches) dropped.add(i);
    const consts = branches
      .map((i) => errors[i] as ErrorObject)
      .filter((e) => e.keyword === "const");
    if (consts.length > 0 && consts.length === branches.length) {
      renamed.set(
        ci,
        `must be one of ${consts.map((e) => JSON.stringify(e.params.allowedValue)).join(", ")}`,
      );
    }
  });
  const out: ErrorObject[] = [];
  errors.forEach((e, i) => {
    if (dropped.has(i)) return;
    const message = renamed.get(i);
    out.push(message === undefined ? e : { ...e, message });
  });
  return out;
}

/** Problems from the seed schema for a spelling-normalised definition (empty when it conforms). */
export function schemaProblems(def: unknown): Problem[] {
  const found = validateLinear(agentDefinitionSchema, contractSources().agentDefinition, def);
  if (found === null) return [];
  const problems: Problem[] = [];
  const seen = new Set<string>();
  const push = (p: Problem): void => {
    const key = `${p.code}\u0000${p.path}`;
    if (p.code !== "definition/schema" && seen.has(key)) return;
    seen.add(key);
    problems.push(p);
  };
  const errors = collapse(found);
  // A value of the wrong type is one violation, not also a failed enum or const at the same place.
  const mistyped = new Set(errors.filter((e) => e.keyword === "type").map((e) => e.instancePath));
  for (const e of errors) {
    if (e.keyword !== "type" && mistyped.has(e.instancePath)) continue;
    switch (e.keyword) {
      case "pattern":
        if (e.params.pattern === NON_BLANK_PATTERN) {
          push({
            code: "definition/blank",
            path: e.instancePath,
            message: "must contain a character that is not white space",
          });
          continue;
        }
        if (MCP_URL_PATH.test(e.instancePath)) {
          const value = valueAt(def, e.instancePath);
          const url = typeof value === "string" ? checkUrl(value, e.instancePath) : [];
          if (url.length > 0) {
            for (const p of url) push(p);
            continue;
          }
        }
        push(
          schemaProblem(e, e.instancePath, `must match the pattern ${String(e.params.pattern)}`),
        );
        continue;
      case "minLength":
        if (e.params.limit === 1) {
          push({ code: "definition/blank", path: e.instancePath, message: "must not be empty" });
          continue;
        }
        push(schemaProblem(e));
        continue;
      case "maxLength":
        // Reported by the UTF-8 byte check, which is never laxer than the character count.
        continue;
      case "uniqueItems":
        if (BETAS_PATH.test(e.instancePath)) continue;
        push(schemaProblem(e));
        continue;
      case "additionalProperties": {
        const name = String(e.params.additionalProperty);
        push(
          schemaProblem(
            e,
            `${e.instancePath}/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`,
            `unknown property ${JSON.stringify(name)}; remove it`,
          ),
        );
        continue;
      }
      case "required":
        push(
          schemaProblem(
            e,
            e.instancePath,
            `missing required property ${JSON.stringify(String(e.params.missingProperty))}`,
          ),
        );
        continue;
      case "enum":
        push(
          schemaProblem(
            e,
            e.instancePath,
            `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`,
          ),
        );
        continue;
      default:
        push(schemaProblem(e));
    }
  }
  return problems;
}
