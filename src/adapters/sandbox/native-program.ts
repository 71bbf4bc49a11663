// Where the package's small C programs lie once `npm run build` compiled them
// (scripts/build-native.mjs): dist/native beside the compiled code, or beside the sources.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The path of the built program `name` (warrant-seccomp, warrant-outer), when it was built. */
export function builtNativeProgram(name: string): string | undefined {
  for (const dir of ["../../../native/", "../../../dist/native/"]) {
    const p = fileURLToPath(new URL(`${dir}${name}`, import.meta.url));
    if (existsSync(p)) return p;
  }
  return undefined;
}
