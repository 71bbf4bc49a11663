// argv templates: whole-element `{name}` placeholders, never a shell.
import { fail, ok, type Result } from "../result.js";
import type { CommandProfile } from "./task-pack.js";

const PLACEHOLDER = /^\{([A-Za-z_][A-Za-z0-9_-]*)\}$/;

/** The argument a template element stands for, or undefined when the element is literal. */
export function placeholderName(element: string): string | undefined {
  return PLACEHOLDER.exec(element)?.[1];
}

/**
 * The argv of a profile for validated arguments. Only a whole element `{name}` is replaced (by the
 * string argument `name`); anything else, braces included, is passed literally. Refused with
 * `plan/outside-profile` when a placeholder's argument is missing or not a string.
 */
export function renderArgv(
  profile: CommandProfile,
  args: Readonly<Record<string, unknown>>,
): Result<readonly string[]> {
  const out: string[] = [];
  for (const element of profile.argv) {
    const name = placeholderName(element);
    if (name === undefined) {
      out.push(element);
      continue;
    }
    const value = args[name];
    if (typeof value !== "string") {
      return fail([
        {
          code: "plan/outside-profile",
          path: `/args/${name}`,
          message: `profile ${profile.name} needs the string argument ${name}`,
        },
      ]);
    }
    out.push(value);
  }
  return ok(out);
}
