// `warrant serve` as a user starts it: the console URL with its token on the first stdout line, the
// API over a real socket (401 without the token), loopback by default and a warning for another
// host, usage errors for a bad port or token.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { startServe, stopServes } from "./serve-process.js";

const dirs: string[] = [];
afterAll(() => {
  stopServes();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-serve-"));
  dirs.push(d);
  return d;
}

describe("warrant serve", () => {
  it("prints the console URL first, binds loopback, and needs the token on every API call", async () => {
    const cwd = tempDir();
    const { url, stderr, child } = await startServe([], cwd);
    const m = /^http:\/\/127\.0\.0\.1:(\d+)\/#token=([A-Za-z0-9_-]{32})$/.exec(url);
    expect(m, url).not.toBeNull();
    const base = `http://127.0.0.1:${m?.[1]}`;
    const token = m?.[2] as string;
    const none = await fetch(`${base}/api/loops`);
    expect(none.status).toBe(401);
    expect(none.headers.get("set-cookie")).toBeNull();
    const ok = await fetch(`${base}/api/loops`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual([]);
    const foreign = await fetch(`${base}/api/loops/query:x/cancel`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, origin: "http://evil.example" },
      body: "{}",
    });
    expect(foreign.status).toBe(403);
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('data-testid="app"');
    expect(stderr()).not.toContain("not loopback");
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  });

  it("takes --token, and warns when bound to another host than loopback", async () => {
    const cwd = tempDir();
    const token = "given-token-abcdefghijklmnop";
    const { url, stderr, child } = await startServe(["--host", "0.0.0.0", "--token", token], cwd);
    expect(url).toMatch(new RegExp(`^http://0\\.0\\.0\\.0:\\d+/#token=${token}$`));
    await new Promise((r) => setTimeout(r, 100));
    expect(stderr()).toContain("not loopback");
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  });

  it("with --json, the first line is {url, host, port, store}", async () => {
    const cwd = tempDir();
    const { url: line, child } = await startServe(["--json", "--store", "memory:"], cwd);
    const info = JSON.parse(line) as { url: string; host: string; port: number; store: string };
    expect(info).toEqual({
      url: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${info.port}/#token=`)),
      host: "127.0.0.1",
      port: expect.any(Number),
      store: "memory:",
    });
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  });

  it("refuses a bad port or a short token as usage errors (exit 2)", async () => {
    const cwd = tempDir();
    const port = await runCli(["serve", "--port", "http"], { cwd });
    expect(port.code).toBe(2);
    expect(port.stderr).toContain("--port");
    const short = await runCli(["serve", "--token", "abc"], { cwd });
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("--token");
  });
});
