// Admission of an implementer's Plan against its task pack (docs/spec/runs.md step 2): the host acts only
// on an AdmittedPlan.
import { fail, ok, type Problem, type Result } from "../result.js";
import { suggestName } from "../text/did-you-mean.js";
import { renderArgv } from "./argv.js";
import { matchesAny } from "./glob.js";
import { type ParsedDiff, parseUnifiedDiff } from "./patch.js";
import { normaliseRelativePath } from "./relative-path.js";
import type { CommandProfile, TaskPack } from "./task-pack.js";

export type AdmittedStep =
  | {
      readonly kind: "observe-command";
      readonly id: string;
      readonly profile: CommandProfile;
      readonly args: Readonly<Record<string, unknown>>;
      readonly argv: readonly string[];
    }
  | { readonly kind: "observe-read"; readonly id: string; readonly paths: readonly string[] }
  | {
      readonly kind: "patch";
      readonly id: string;
      /** Normalised, inside the patch policy. */
      readonly path: string;
      readonly change:
        | { readonly kind: "diff"; readonly diff: string; readonly parsed: ParsedDiff }
        | { readonly kind: "content"; readonly content: string };
    }
  | {
      readonly kind: "command";
      readonly id: string;
      readonly profile: CommandProfile;
      readonly args: Readonly<Record<string, unknown>>;
      readonly argv: readonly string[];
    };

export interface AdmittedPlan {
  readonly hypothesis: string;
  readonly steps: readonly AdmittedStep[];
  readonly expectedChecks: readonly string[];
}

/** A step's effect class: observations may run before approval; the rest are mutations. */
export function stepEffect(step: AdmittedStep): "observation" | "mutation" {
  return step.kind === "observe-command" || step.kind === "observe-read"
    ? "observation"
    : "mutation";
}

const ACTIONS = new Set(["observe", "patch", "command"]);
const REGULAR_FILE_MODE = "100644";

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const encoder = new TextEncoder();

/**
 * Check a Plan payload against the pack. Every error names its step (`/steps/N/…`). Codes:
 * `plan/unknown-action-kind`; `plan/outside-profile` (unknown profile, wrong effect, invalid
 * arguments, an observe step with neither or both of `profile` and `read`, an unsafe read path);
 * `plan/first-step-not-observation` (also for a plan with no steps);
 * `workbench/patch-outside-policy` (the path is refused or outside `patchPolicy.allow`, the patch
 * is over `maxBytes`, not exactly one of `diff`/`content`, a malformed diff, a diff naming another
 * path, renaming, creating a symlink, changing a mode, or binary); `plan/duplicate-step-id`.
 * Each policy refusal carries `detail.reason`.
 */
export function checkPlan(plan: unknown, pack: TaskPack): Result<AdmittedPlan> {
  const problems: Problem[] = [];
  if (!isObject(plan) || typeof plan.hypothesis !== "string" || !Array.isArray(plan.steps)) {
    return fail([
      { code: "plan/outside-profile", path: "", message: "a plan has a hypothesis and steps" },
    ]);
  }
  const steps: AdmittedStep[] = [];
  const ids = new Set<string>();
  for (const [n, raw] of (plan.steps as unknown[]).entries()) {
    const at = `/steps/${n}`;
    const refuse = (code: string, field: string, message: string, reason?: string) =>
      problems.push({
        code,
        path: `${at}${field}`,
        message: `step ${n}: ${message}`,
        ...(reason === undefined ? {} : { detail: { reason } }),
      });
    if (!isObject(raw) || typeof raw.id !== "string" || typeof raw.action !== "string") {
      refuse("plan/unknown-action-kind", "", "a step has a string id and action");
      continue;
    }
    if (ids.has(raw.id)) refuse("plan/duplicate-step-id", "/id", `step id ${raw.id} repeats`);
    ids.add(raw.id);
    if (!ACTIONS.has(raw.action)) {
      refuse(
        "plan/unknown-action-kind",
        "/action",
        `unknown action kind ${JSON.stringify(raw.action)}`,
      );
      continue;
    }
    const step = admitStep(raw, pack, refuse);
    if (step !== undefined) steps.push(step);
  }
  const first = (plan.steps as unknown[])[0];
  if (first === undefined || !isObject(first) || first.action !== "observe") {
    problems.push({
      code: "plan/first-step-not-observation",
      path: first === undefined ? "/steps" : "/steps/0",
      message: "the first step of a plan is an observation",
    });
  }
  if (problems.length > 0) return fail(problems);
  const expected = Array.isArray(plan.expected_checks)
    ? (plan.expected_checks as unknown[]).filter((c): c is string => typeof c === "string")
    : [];
  return ok({ hypothesis: plan.hypothesis, steps, expectedChecks: expected });
}

type Refuse = (code: string, field: string, message: string, reason?: string) => void;

function admitStep(raw: Json, pack: TaskPack, refuse: Refuse): AdmittedStep | undefined {
  const id = raw.id as string;
  switch (raw.action) {
    case "observe": {
      const hasProfile = raw.profile !== undefined;
      const hasRead = raw.read !== undefined;
      if (hasProfile === hasRead) {
        refuse("plan/outside-profile", "", "an observe step has exactly one of profile and read");
        return undefined;
      }
      if (hasRead) return admitRead(id, raw.read, refuse);
      const run = admitCommand(raw, pack, "observation", refuse);
      return run === undefined ? undefined : { kind: "observe-command", id, ...run };
    }
    case "command": {
      const run = admitCommand(raw, pack, "mutation", refuse);
      return run === undefined ? undefined : { kind: "command", id, ...run };
    }
    case "patch":
      return admitPatch(raw, pack, refuse);
    default:
      return undefined;
  }
}

function admitRead(id: string, read: unknown, refuse: Refuse): AdmittedStep | undefined {
  if (!Array.isArray(read) || read.length === 0 || read.some((p) => typeof p !== "string")) {
    refuse("plan/outside-profile", "/read", "read is a non-empty array of paths");
    return undefined;
  }
  const paths: string[] = [];
  let bad = false;
  for (const [i, p] of (read as string[]).entries()) {
    const norm = normaliseRelativePath(p);
    if (norm.ok) paths.push(norm.value);
    else {
      bad = true;
      const e = norm.errors[0] as Problem;
      refuse("plan/outside-profile", `/read/${i}`, e.message, e.detail?.reason as string);
    }
  }
  return bad ? undefined : { kind: "observe-read", id, paths };
}

function admitCommand(
  raw: Json,
  pack: TaskPack,
  effect: "observation" | "mutation",
  refuse: Refuse,
):
  | { profile: CommandProfile; args: Readonly<Record<string, unknown>>; argv: readonly string[] }
  | undefined {
  if (typeof raw.profile !== "string") {
    refuse("plan/outside-profile", "/profile", `a ${raw.action} step names a command profile`);
    return undefined;
  }
  const profile = pack.commands.get(raw.profile);
  if (profile === undefined) {
    const known = [...pack.commands.keys()];
    refuse(
      "plan/outside-profile",
      "/profile",
      `no command profile named ${raw.profile}${suggestName(raw.profile, known)}`,
    );
    return undefined;
  }
  if (profile.effect !== effect) {
    refuse(
      "plan/outside-profile",
      "/profile",
      `profile ${raw.profile} is ${profile.effect === "mutation" ? "a mutation" : "an observation"}; a ${raw.action} step needs ${effect === "mutation" ? "a mutation" : "an observation"}`,
    );
    return undefined;
  }
  const args = raw.args === undefined ? {} : raw.args;
  const valid = profile.validateArgs(args);
  if (!valid.ok) {
    for (const e of valid.errors) refuse("plan/outside-profile", `/args${e.path}`, e.message);
    return undefined;
  }
  const argv = renderArgv(profile, valid.value);
  if (!argv.ok) {
    for (const e of argv.errors) refuse(e.code, e.path, e.message);
    return undefined;
  }
  return { profile, args: valid.value, argv: argv.value };
}

function admitPatch(raw: Json, pack: TaskPack, refuse: Refuse): AdmittedStep | undefined {
  const outside = (field: string, message: string, reason: string) => {
    refuse("workbench/patch-outside-policy", field, message, reason);
    return undefined;
  };
  if (typeof raw.path !== "string") return outside("/path", "a patch names a path", "path-missing");
  const norm = normaliseRelativePath(raw.path);
  if (!norm.ok) {
    const e = norm.errors[0] as Problem;
    return outside("/path", e.message, e.detail?.reason as string);
  }
  const path = norm.value;
  if (!matchesAny(pack.patchPolicy.allow, path)) {
    return outside("/path", `${path} is not allowed by the patch policy`, "not-allowed");
  }
  const dep = pack.dependencies.find((d) => path === d || path.startsWith(`${d}/`));
  if (dep !== undefined) {
    return outside(
      "/path",
      `${path} is inside the dependency folder ${dep}, which commands see as it is on the host: a patch there would never be a change`,
      "dependency",
    );
  }
  const hasDiff = typeof raw.diff === "string";
  const hasContent = typeof raw.content === "string";
  if (hasDiff === hasContent || (raw.diff !== undefined && !hasDiff)) {
    return outside("", "a patch has exactly one of diff and content", "diff-or-content");
  }
  const body = (hasDiff ? raw.diff : raw.content) as string;
  const field = hasDiff ? "/diff" : "/content";
  const bytes = encoder.encode(body).length;
  if (bytes > pack.patchPolicy.maxBytes) {
    return outside(
      field,
      `the patch is ${bytes} bytes; the policy allows ${pack.patchPolicy.maxBytes}`,
      "too-large",
    );
  }
  if (body.includes("\0")) return outside(field, "the patch contains NUL", "nul");
  if (hasContent)
    return {
      kind: "patch",
      id: raw.id as string,
      path,
      change: { kind: "content", content: body },
    };
  const parsed = parseUnifiedDiff(body);
  if (!parsed.ok) {
    const e = parsed.errors[0] as Problem;
    return outside("/diff", `malformed diff: ${e.message}`, "malformed-diff");
  }
  const d = parsed.value;
  const h = d.headers;
  if (h.newFileMode?.startsWith("120")) {
    return outside("/diff", "the diff creates a symlink", "symlink");
  }
  if (
    h.oldMode !== undefined ||
    h.newMode !== undefined ||
    (h.newFileMode !== undefined && h.newFileMode !== REGULAR_FILE_MODE) ||
    h.deletedFileMode?.startsWith("120")
  ) {
    return outside("/diff", "the diff changes a file mode", "mode-change");
  }
  if (h.renameOrCopy) return outside("/diff", "the diff renames or copies a file", "rename");
  if (h.binary) return outside("/diff", "the diff is binary", "binary");
  const named = [
    ...h.gitPaths.map((p) => p.replace(/^[ab]\//, "")),
    ...(d.oldPath === null ? [] : [d.oldPath]),
    ...(d.newPath === null ? [] : [d.newPath]),
  ];
  if (d.oldPath === null && d.newPath === null) {
    return outside("/diff", "the diff names no file", "malformed-diff");
  }
  for (const p of named) {
    const n = normaliseRelativePath(p);
    if (!n.ok || n.value !== path) {
      return outside("/diff", `the diff names ${p}, not the step's path ${path}`, "other-path");
    }
  }
  if (d.hunks.length === 0) return outside("/diff", "the diff has no hunks", "malformed-diff");
  return {
    kind: "patch",
    id: raw.id as string,
    path,
    change: { kind: "diff", diff: body, parsed: d },
  };
}
