// The names a command profile's `env` may not set: one that looks like a credential (a pack never
// carries secrets) and HOME (the environment's own).
import { CREDENTIAL_NAME } from "./ignore.js";

/** One problem per name of `env` a pack may not set, in order; `at` points at the profile. */
export function envNameProblems(
  env: Readonly<Record<string, unknown>>,
  at: string,
): { readonly code: string; readonly path: string; readonly message: string }[] {
  const out: { code: string; path: string; message: string }[] = [];
  for (const key of Object.keys(env)) {
    if (CREDENTIAL_NAME.test(key))
      out.push({
        code: "taskpack/env-secret",
        path: `${at}/env/${key}`,
        message: `${key} looks like a credential: a pack never carries secrets (pass none to commands)`,
      });
    else if (key === "HOME")
      out.push({
        code: "taskpack/env-reserved",
        path: `${at}/env/${key}`,
        message: "HOME is the environment's own",
      });
  }
  return out;
}
