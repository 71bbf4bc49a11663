// Run by unprivileged.test.ts as an unprivileged user (the host side without root): makes an
// environment on each backend, leaves hostile shapes in it, and prints what every host operation
// answered as one JSON line.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { backendModes } from "./backend-modes.mjs";

const [dist, root] = process.argv.slice(2);

const baseline = path.join(root, "baseline");
mkdirSync(path.join(baseline, "src"), { recursive: true });
mkdirSync(path.join(baseline, "test"), { recursive: true });
writeFileSync(path.join(baseline, "src/a.js"), "a\n");
writeFileSync(path.join(baseline, "test/t.js"), "t\n");
const limits = { timeoutMs: 30_000, maxOutputBytes: 4096 };
const out = {};
for (const { name, sandbox } of await backendModes(dist, root)) {
  const report = { uid: process.getuid() };
  try {
    report.mode = await sandbox.environmentMode();
    const env = await sandbox.createEnvironment(baseline);
    const made = await env.exec(
      [
        "sh",
        "-c",
        "mkfifo src/pipe && mkdir -p src/locked/in && echo s > src/locked/in/f && chmod 000 src/locked/in src/locked && rm -r test && id -u",
      ],
      limits,
    );
    report.exec = [made.exitCode, made.stdout.trim(), made.stderr.trim()];
    const pipe = await env.readFile("src/pipe");
    report.pipe = pipe.ok ? "read" : pipe.errors[0].code;
    const w = await env.writeFile("test/new.js", new TextEncoder().encode("n\n"));
    report.write = w.ok;
    const seen = await env.exec(["sh", "-c", "ls test"], limits);
    report.seen = seen.stdout.trim();
    const c = await env.changes();
    report.changes = {
      added: c.added.map((x) => x.path),
      deleted: c.deleted.map((x) => x.path),
      findings: c.findings.map((f) => f.code),
    };
    report.destroy = await env.destroy();
  } catch (e) {
    report.error = String(e?.stack ?? e);
  }
  out[name] = report;
}
process.stdout.write(`${JSON.stringify(out)}\n`);
