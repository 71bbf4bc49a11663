// Compiles the small C programs of the sandbox backends into dist/native with the system C compiler
// ($CC, else cc), when there is one. Nothing is downloaded; without a compiler the build goes on:
// - native/seccomp-exec.c → warrant-seccomp, the seccomp loader the unshare backend runs commands
//   under: without it that backend refuses to run (`sandbox/no-seccomp`) unless the weaker sandbox
//   is allowed;
// - native/outer-exec.c → warrant-outer, what stands outside a bwrap sandbox in overlay mode:
//   without it the same steps run as a shell script (slower, the same behaviour).
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const programs = [
  {
    source: "native/seccomp-exec.c",
    out: "dist/native/warrant-seccomp",
    without: "the unshare backend will refuse to run without --allow-weaker-sandbox",
  },
  {
    source: "native/outer-exec.c",
    out: "dist/native/warrant-outer",
    without: "bwrap's overlay commands run their outer steps in /bin/sh instead",
  },
];
const cc = process.env.CC || "cc";
for (const p of programs) {
  const out = path.join(root, p.out);
  mkdirSync(path.dirname(out), { recursive: true });
  rmSync(out, { force: true });
  const r = spawnSync(cc, ["-O2", "-Wall", "-Wextra", "-o", out, path.join(root, p.source)], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (r.error !== undefined || r.status !== 0) {
    const why = r.error !== undefined ? r.error.message : `${cc} exited ${r.status}`;
    console.warn(`build-native: ${path.basename(p.out)} was not built (${why}); ${p.without}`);
  }
}
