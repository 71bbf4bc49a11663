// The ports are one folder, src/core/ports/, one file per port, each stating its version.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PORT_VERSIONS } from "../src/core/ports/index.js";

const dir = path.join(import.meta.dirname, "../src/core/ports");
const portFiles = readdirSync(dir).filter((f) => f.endsWith(".ts") && f !== "index.ts");

describe("the ports", () => {
  it("are one file each, and each file exports one version constant listed in PORT_VERSIONS", () => {
    expect(portFiles.length).toBe(Object.keys(PORT_VERSIONS).length);
    const listed = new Set<string>(Object.values(PORT_VERSIONS));
    for (const file of portFiles) {
      const text = readFileSync(path.join(dir, file), "utf8");
      const versions = [...text.matchAll(/export const ([A-Z_]+_VERSION) = "(v\d+)";/g)];
      expect(versions, file).toHaveLength(1);
      expect(listed.has(versions[0]?.[2] ?? ""), file).toBe(true);
    }
  });

  it("are declared nowhere else: one ModelProvider, one sandbox port, no second declaration of any port", () => {
    const names = [
      "LedgerStore",
      "ChangeFeed",
      "Leases",
      "Sandbox",
      "Environment",
      "ModelProvider",
      "ToolHost",
      "Clock",
      "Timers",
      "Time",
      "RecordSigner",
      "Approver",
      "JobQueue",
    ];
    const declared: string[] = [];
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith(".ts") && !p.startsWith(dir)) {
          const text = readFileSync(p, "utf8");
          for (const n of names)
            if (new RegExp(`export (interface|type) ${n}\\b`).test(text))
              declared.push(`${n} in ${p}`);
        }
      }
    };
    walk(path.join(import.meta.dirname, "../src"));
    expect(declared).toEqual([]);
  });
});
