// `node bench/peers/self-check.mjs`: proves the correctness checks bite (a wrong count or a wrong
// sum is refused) and that every system passes them at small N. Exits 1 on any failure.
import { Script } from "./script.mjs";

const failures = [];
const expect = (what, ok) => {
  process.stderr.write(`${ok ? "ok  " : "FAIL"} ${what}\n`);
  if (!ok) failures.push(what);
};

/** Simulates a loop: `calls` model calls, `adds` tool runs; returns the check's problems. */
function simulate(n, { calls = n, adds = n - 1, answer = `total=${3 * (n - 1)}` } = {}) {
  const s = new Script(n);
  for (let i = 0; i < calls; i++) s.next();
  for (let i = 0; i < adds; i++) s.add(1, 2);
  return s.check(answer);
}

expect("a loop run as scripted passes", simulate(5).length === 0);
expect("one model call too many is refused", simulate(5, { calls: 6 }).length > 0);
expect("one model call too few is refused", simulate(5, { calls: 4 }).length > 0);
expect("a missing tool run is refused", simulate(5, { adds: 3 }).length > 0);
expect(
  "a final answer that missed a tool result is refused",
  simulate(5, { answer: "total=9" }).length > 0,
);
expect("a final answer without the total is refused", simulate(5, { answer: "done" }).length > 0);
{
  const s = new Script(4);
  expect("turns 0..n-2 call the tool", [s.next(), s.next(), s.next()].join() === "0,1,2");
  expect("turn n-1 is the final answer", s.next() === -1);
}

// The same switches run.mjs gives its children (set before the frameworks are imported).
Object.assign(process.env, {
  LANGCHAIN_TRACING_V2: "false",
  LANGSMITH_TRACING: "false",
  OPENAI_AGENTS_DISABLE_TRACING: "1",
  OTEL_SDK_DISABLED: "true",
});
const systems = ["warrant", "openai-agents", "ai", "langgraph"];
for (const name of systems) {
  const mod = await import(`./systems/${name}.mjs`);
  for (const store of name === "warrant" ? ["memory", "sqlite"] : [undefined]) {
    for (const n of [1, 2, 10]) {
      const script = new Script(n);
      const system = await mod.create(script, { store });
      try {
        for (let loop = 0; loop < 2; loop++) {
          script.reset();
          const problems = script.check(await system.runLoop(loop));
          expect(
            `${name}${store ? ` (${store})` : ""} n=${n} loop ${loop}: ${problems.join("; ") || "checks pass"}`,
            problems.length === 0,
          );
        }
      } catch (e) {
        expect(`${name} n=${n}: ${e.message}`, false);
      } finally {
        await system.close();
      }
    }
  }
}
process.stderr.write(
  `${failures.length === 0 ? "all checks pass" : `${failures.length} failed`}\n`,
);
process.exitCode = failures.length === 0 ? 0 : 1;
