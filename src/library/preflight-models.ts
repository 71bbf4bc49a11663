// The preflight's model check: every role the pack names has a model URI that parses (its
// `--model`, else its agent definition's; one a definition cannot give is the definitions
// check's); `openai:` and `anthropic:` find their key in the environment (and a base URL there,
// when set, is well-formed); a `scripted:` file exists, is a regular file and parses (a bad line
// named by its number) and has an answer. Keys are looked at, never shown.
import { readScriptFile } from "../adapters/fs/script-file.js";
import { parseModelUri } from "../adapters/models/model-uri.js";
import { ROLES } from "../core/loop/types.js";
import { pointer } from "../core/result.js";
import type { CheckProblem, Env, PreflightCheck, PreflightSubject } from "./preflight-types.js";

const present = (v: string | undefined): v is string => v !== undefined && v !== "";

/** A base URL from the environment: http(s), no user-info, no query; undefined when it is fine. */
export function baseUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "does not parse as a URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "is not http or https";
  if (url.username !== "" || url.password !== "" || url.search !== "")
    return "carries user-info or a query (credentials belong in the key variable)";
  return undefined;
}

function envChecks(env: Env, key: string, base: string, who: string, at: string): CheckProblem[] {
  const problems: CheckProblem[] = [];
  if (!present(env[key])) {
    problems.push({
      code: "model/missing-key",
      path: at,
      message: `${who} needs ${key} in the environment`,
      usage: true,
    });
  }
  const baseUrl = env[base];
  const wrong = present(baseUrl) ? baseUrlProblem(baseUrl) : undefined;
  if (wrong !== undefined) {
    problems.push({ code: "model/uri", path: at, message: `${base} ${wrong}`, usage: true });
  }
  return problems;
}

function roleProblems(
  role: string,
  uri: string | undefined,
  env: Env,
  fromDefinition: boolean,
): CheckProblem[] {
  const at = pointer("models", role);
  // A definition's model that cannot be made is the definitions check's to say.
  if (uri === undefined && fromDefinition) return [];
  if (uri === undefined) {
    const message = `no model for ${role}: pass --model ${role}=URI`;
    return [{ code: "model/missing", path: at, message, usage: true }];
  }
  const parsed = parseModelUri(uri);
  if (!parsed.ok) {
    return parsed.errors.map((p) => ({
      ...p,
      path: at,
      message: `${role}: ${p.message}`,
      usage: true,
    }));
  }
  const u = parsed.value;
  switch (u.kind) {
    case "scripted": {
      const script = readScriptFile(u.path);
      if (!script.ok) {
        return script.errors.map((p) => ({
          ...p,
          path: at,
          message: `${role}: scripted model ${p.message}`,
          // A file that is not there is a usage error; one that is there and wrong is invalid.
          usage: p.detail?.reason !== "line" && p.detail?.reason !== "too-large",
        }));
      }
      if (script.value.length === 0) {
        const message = `${role}: scripted model ${u.path} has no answer: its first call would fail`;
        return [{ code: "model/script", path: at, message }];
      }
      return [];
    }
    case "openai":
      return envChecks(env, "OPENAI_API_KEY", "OPENAI_BASE_URL", `${role}'s openai:`, at);
    case "anthropic":
      return envChecks(env, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", `${role}'s anthropic:`, at);
    case "openai-compatible":
      // parseModelUri has checked the base URL; the key is optional for such a server.
      return [];
    default:
      return u satisfies never;
  }
}

export const MODEL_CHECK: PreflightCheck = {
  name: "models",
  async run(subject: PreflightSubject) {
    const { pack, models, env } = subject;
    const named = ROLES.filter((r) => pack.agents[r] !== undefined);
    const problems: CheckProblem[] = [];
    const notes: string[] = [];
    for (const role of named) {
      const found = roleProblems(role, models[role], env, subject.overrides !== undefined);
      problems.push(...found);
      // Only a URI that parsed is shown: one refused for carrying credentials never is.
      if (found.length === 0) notes.push(`${role}: ${models[role] ?? ""}`);
    }
    for (const role of Object.keys(models)) {
      if (!(named as readonly string[]).includes(role))
        notes.push(`${role}: the pack names no ${role}; its model is not used`);
    }
    const compatible = named.some((r) => models[r]?.startsWith("openai-compatible:") === true);
    if (compatible && present(env.OPENAI_API_KEY))
      notes.push("OPENAI_API_KEY is set: it is sent to the openai-compatible base URL");
    return { problems, notes };
  },
};
