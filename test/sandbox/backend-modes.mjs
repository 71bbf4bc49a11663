// The sandboxes the host scripts run in their own processes (unprivileged-host.mjs,
// inherited-fds-host.mjs) go through: each backend in each layering, made from the build at `dist`
// with its temp folder `root/<backend>-<layers>`.
import { mkdirSync } from "node:fs";
import path from "node:path";

/** `[{backend, name, sandbox}]` for bwrap and unshare, each with the overlay and as a copy. */
export async function backendModes(dist, root) {
  const { createBwrapSandbox } = await import(
    path.join(dist, "src/adapters/sandbox/bwrap-sandbox.js")
  );
  const { createUnshareSandbox } = await import(
    path.join(dist, "src/adapters/sandbox/unshare-sandbox.js")
  );
  const made = [];
  for (const [backend, make] of [
    ["bwrap", createBwrapSandbox],
    ["unshare", createUnshareSandbox],
  ]) {
    for (const layers of ["overlay", "copy"]) {
      const name = `${backend}-${layers}`;
      const tempRoot = path.join(root, name);
      mkdirSync(tempRoot);
      made.push({ backend, name, sandbox: make({ tempRoot, layers }) });
    }
  }
  return made;
}
