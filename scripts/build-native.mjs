// Compiles the seccomp loader the unshare backend runs commands under (native/seccomp-exec.c) into
// dist/native/warrant-seccomp with the system C compiler ($CC, else cc), when there is one. Nothing
// is downloaded. Without a compiler the build goes on: the unshare backend then has no filter to
// load and refuses to run (`sandbox/no-seccomp`) unless the weaker sandbox is allowed.
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "dist/native/warrant-seccomp");
mkdirSync(path.dirname(out), { recursive: true });
rmSync(out, { force: true });
const cc = process.env.CC || "cc";
const r = spawnSync(
  cc,
  ["-O2", "-Wall", "-Wextra", "-o", out, path.join(root, "native/seccomp-exec.c")],
  { stdio: ["ignore", "inherit", "inherit"] },
);
if (r.error !== undefined || r.status !== 0) {
  const why = r.error !== undefined ? r.error.message : `${cc} exited ${r.status}`;
  console.warn(
    `build-native: the seccomp loader was not built (${why}); the unshare backend will refuse to run without --allow-weaker-sandbox`,
  );
}
