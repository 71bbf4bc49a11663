// How a traced CLI process ends: on SIGINT mid-drive it sends the open spans, marked interrupted,
// and exits 130; with a collector that cannot be reached the loop succeeds, one warning says so
// (without the headers), and the exporter's retries do not keep the process alive.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { demoPack, scripted } from "../e2e/cli-run.js";
import { cliPath, runCli } from "../helpers/cli.js";
import { startOtlpReceiver } from "./otlp-receiver.js";
import { NO_OTEL } from "./traced-cli.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-otel-exit-"));
  dirs.push(d);
  return d;
}

describe("a traced warrant run stopped by SIGINT", () => {
  it("ends its open spans as interrupted, sends them, and exits 130", async () => {
    const r = await startOtlpReceiver();
    try {
      const child = spawn(
        process.execPath,
        [
          cliPath,
          "run",
          demoPack,
          ...["implementer", "reviewer", "summarizer"].flatMap((role) => [
            "--model",
            scripted(role),
          ]),
        ],
        {
          cwd: tempDir(),
          env: {
            ...process.env,
            ...NO_OTEL,
            NO_COLOR: "1",
            OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
            OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          },
          stdio: ["pipe", "pipe", "pipe"],
        },
      );
      child.stdin.end();
      let stdout = "";
      const waiting = new Promise<void>((resolve) => {
        child.stdout.setEncoding("utf8").on("data", (d: string) => {
          stdout += d;
          if (stdout.includes("waiting: approval of fix-slugify")) resolve();
        });
      });
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.on("close", (code, signal) => resolve({ code, signal })),
      );
      const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      // No approval comes: the run waits for one (stdin is no terminal) until it is interrupted.
      await waiting;
      child.kill("SIGINT");
      const end = await exited;
      clearTimeout(killer);
      expect(end).toEqual({ code: 130, signal: null });
      const root = r.spans.find((s) => s.parentSpanId === "");
      expect(root?.name).toBe("invoke_workflow fix-failing-test");
      expect(root?.attributes["warrant.drive.status"]).toBe("interrupted");
      expect(root?.status.code).toBe(2);
      const runs = r.spans.filter((s) => s.name.startsWith("warrant.run "));
      const open = runs.find((s) => s.attributes["warrant.run.outcome"] === undefined);
      expect(open?.attributes["error.type"]).toBe("interrupted");
      expect(open?.events.map((e) => e.name)).toContain("warrant.approval.requested");
      // What had ended before the signal was sent too: the earlier passages and runs.
      expect(r.spans.filter((s) => s.name === "invoke_agent reviewer")).toHaveLength(3);
      expect(runs.filter((s) => s.attributes["warrant.run.outcome"] !== undefined)).toHaveLength(1);
    } finally {
      await r.close();
    }
  });
});

describe("warrant demo with a collector that cannot be reached", () => {
  it("succeeds, warns once without the headers, and does not wait out the exporter's retries", async () => {
    const gone = await startOtlpReceiver();
    const url = gone.url;
    await gone.close();
    const r = await runCli(["demo"], {
      cwd: tempDir(),
      // Retrying for two minutes would outlive the 45 s this test waits before killing it.
      timeoutMs: 45_000,
      env: {
        ...NO_OTEL,
        OTEL_EXPORTER_OTLP_ENDPOINT: url,
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Basic%20c2VjcmV0LWtleQ==",
        OTEL_EXPORTER_OTLP_TIMEOUT: "120000",
      },
    });
    expect(r.signal).toBeNull();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("loop stopped: succeeded");
    const warnings = r.stderr.split("\n").filter((l) => l.includes("telemetry"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(url);
    expect(r.stderr).not.toContain("c2VjcmV0LWtleQ");
  });
});
