// Applying an admitted patch step to an environment: read the current file, apply the diff (or take
// the full content), write or remove it — every file access confined to the workspace.

import type { Environment } from "../../core/ports/sandbox.js";
import { digestOfBytes } from "../../core/records/canonical.js";
import { fail, ok, type Problem, type Result } from "../../core/result.js";
import { applyParsedDiff } from "../../core/taskpack/patch.js";
import type { AdmittedStep } from "../../core/taskpack/plan-check.js";

export interface AppliedPatch {
  readonly path: string;
  /** `sha256:…` of the new bytes, or null when the diff removed the file. */
  readonly digest: string | null;
}

const encoder = new TextEncoder();

/**
 * Apply a patch step. Refusals: `workbench/patch-outside-policy` (the real path leaves the
 * workspace, whatever the plan check said), `patch/hunk-failed`, `patch/target-missing`,
 * `patch/target-exists`, `patch/not-utf8` (a diff against a file that is not UTF-8 text).
 * Every refusal's path is the step's (`/steps/N` is the caller's to add).
 */
export async function applyPatchStep(
  env: Environment,
  step: Extract<AdmittedStep, { kind: "patch" }>,
): Promise<Result<AppliedPatch>> {
  if (step.change.kind === "content") {
    const bytes = encoder.encode(step.change.content);
    const w = await env.writeFile(step.path, bytes);
    return w.ok ? ok({ path: step.path, digest: digestOfBytes(bytes) }) : w;
  }
  const current = await env.readFile(step.path);
  let original: string | null = null;
  if (current.ok) {
    try {
      original = new TextDecoder("utf-8", { fatal: true }).decode(current.value);
    } catch {
      return fail([
        { code: "patch/not-utf8", path: "", message: `${step.path} is not UTF-8 text` },
      ]);
    }
  } else if ((current.errors[0] as Problem).code !== "sandbox/not-found") {
    return current;
  }
  const applied = applyParsedDiff(original, step.change.parsed);
  if (!applied.ok) {
    return fail(applied.errors.map((e) => ({ ...e, message: `${step.path}: ${e.message}` })));
  }
  if (applied.value === null) {
    const r = await env.removeFile(step.path);
    return r.ok ? ok({ path: step.path, digest: null }) : r;
  }
  const bytes = encoder.encode(applied.value);
  const w = await env.writeFile(step.path, bytes);
  return w.ok ? ok({ path: step.path, digest: digestOfBytes(bytes) }) : w;
}
