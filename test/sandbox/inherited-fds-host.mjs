// Run by inherited-fds.test.ts with files open at descriptors 3, 9, 40 and 200 that it inherited:
// on each backend and layering, a contained command writes through each of them
// and says what each one is. Prints one JSON line: per backend and mode, the command's output.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { backendModes } from "./backend-modes.mjs";

const [dist, root, required] = process.argv.slice(2);
const { inheritableFds } = await import(path.join(dist, "src/adapters/sandbox/inherited-fds.js"));
const { probeSandbox } = await import(path.join(dist, "src/adapters/sandbox/detect-sandbox.js"));

const baseline = path.join(root, "baseline");
mkdirSync(baseline, { recursive: true });
writeFileSync(path.join(baseline, "a.txt"), "a\n");
const script = [
  "for n in 3 9 40 200; do",
  '  echo "leaked through $n" > /proc/self/fd/$n 2>/dev/null',
  '  echo "$n $(readlink /proc/self/fd/$n 2>/dev/null || echo closed)"',
  "done",
  "echo leaked through 9 >&9 2>/dev/null",
  "true",
].join("\n");
const out = { inheritable: inheritableFds() };
for (const { backend, name, sandbox } of await backendModes(dist, root)) {
  const failed = await probeSandbox(sandbox, 30_000);
  if (failed !== undefined && !required.split(",").includes(backend)) {
    out[name] = { skipped: failed };
    continue;
  }
  try {
    const env = await sandbox.createEnvironment(baseline);
    const r = await env.exec(["sh", "-c", script], { timeoutMs: 30_000, maxOutputBytes: 4096 });
    out[name] = { exit: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    await env.destroy();
  } catch (e) {
    out[name] = { error: String(e?.stack ?? e) };
  }
}
process.stdout.write(`${JSON.stringify(out)}\n`);
