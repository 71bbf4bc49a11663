// What the sandbox will see, checked before a loop opens: each command profile's program is looked
// up inside a sandbox on the baseline (with the pack's dependencies and toolchains, the profile's
// own PATH), and no toolchain holds the store or the host key (bound into every environment, they
// would be readable by every command).
import { realpath } from "node:fs/promises";
import path from "node:path";
import { HOST_KEY_FILE, hostKeyDir, keyDir } from "../adapters/fs/host-key.js";
import type { Sandbox } from "../core/ports/sandbox.js";
import type { Problem } from "../core/result.js";
import { pointer } from "../core/result.js";
import { placeholderName } from "../core/taskpack/argv.js";
import { pathWithin } from "../core/taskpack/dependencies.js";
import type { LoadedPack } from "../runtime/task-pack.js";
import type { CheckProblem, PreflightCheck } from "./preflight-types.js";

/**
 * The toolchains that hold the store's file or the host key (`taskpack/toolchain-forbidden`, at
 * `/toolchains/N`): a SQLite store's file, the host's key folder, and a key file still kept beside a
 * store (or in `.warrant/`).
 */
export async function toolchainHoldings(
  pack: LoadedPack,
  storeUri: string,
  cwd: string = process.cwd(),
): Promise<Problem[]> {
  const real = (p: string) => realpath(p).catch(() => path.resolve(p));
  const guarded: [string, string][] = [
    ["the host's key folder", await real(keyDir())],
    ["the host key", await real(path.join(hostKeyDir(storeUri, cwd), HOST_KEY_FILE))],
  ];
  if (storeUri.startsWith("sqlite:"))
    guarded.push(["the store", await real(path.resolve(cwd, storeUri.slice("sqlite:".length)))]);
  const problems: Problem[] = [];
  for (const [i, tc] of pack.pack.toolchains.entries()) {
    const folder = await real(tc);
    for (const [what, file] of guarded) {
      if (!pathWithin(file, folder)) continue;
      problems.push({
        code: "taskpack/toolchain-forbidden",
        path: `/toolchains/${i}`,
        message: `the toolchain ${tc} holds ${what} (${file}): every command could read it`,
      });
      break;
    }
  }
  return problems;
}

// Exits 0 when the program is found as the command would find it (a path from the workspace, else
// the first PATH entry holding an executable file of that name), 1 when not.
const LOOKUP = `p=$1
case $p in */*) [ -f "$p" ] && [ -x "$p" ] && exit 0; exit 1;; esac
IFS=:
for d in $PATH; do
  [ -n "$d" ] || d=.
  [ -f "$d/$p" ] && [ -x "$d/$p" ] && exit 0
done
exit 1`;

/**
 * The `commands` check (run --check): every command profile's program looked up in one sandbox on
 * the baseline. `preflight/command-not-found` names the profile and the program;
 * `preflight/command-lookup` says the lookup itself could not run. A program given by a
 * placeholder (`{name}`) is the plan's to choose and is not looked up.
 */
export function commandCheck(sandbox: () => Promise<Sandbox | undefined>): PreflightCheck {
  return {
    name: "commands",
    async run({ pack }) {
      const profiles = [...pack.pack.commands.values()].filter(
        (p) => p.argv[0] !== undefined && placeholderName(p.argv[0]) === undefined,
      );
      const s = await sandbox();
      if (s === undefined)
        return {
          problems: [],
          notes: ["no containment backend here: the profiles' programs were not looked up"],
        };
      const baseline = await s.openBaseline(pack.baselineDir, {
        dependencies: pack.pack.dependencies,
      });
      const problems: CheckProblem[] = [];
      const notes: string[] = [];
      try {
        const env = await s.createEnvironment(baseline, {
          resources: pack.pack.resources,
          toolchains: pack.pack.toolchains,
        });
        try {
          for (const profile of profiles) {
            const program = profile.argv[0] as string;
            const at = `${pointer("commands", profile.name)}/argv/0`;
            const r = await env.exec(["/bin/sh", "-c", LOOKUP, "warrant-lookup", program], {
              timeoutMs: 30_000,
              maxOutputBytes: 4096,
              ...(profile.env === undefined ? {} : { env: profile.env }),
            });
            if (r.exitCode === 0) notes.push(`${profile.name}: ${program} found`);
            else if (r.exitCode === 1)
              problems.push({
                code: "preflight/command-not-found",
                path: at,
                message: `the command profile ${profile.name} runs ${program}, which the sandbox does not have ${
                  program.includes("/")
                    ? "in the workspace (an ignored folder such as node_modules or .venv is there only when the pack lists it in dependencies)"
                    : "on its PATH (a program installed outside the system folders is there only when the pack lists its folder in toolchains)"
                }`,
              });
            else
              problems.push({
                code: "preflight/command-lookup",
                path: at,
                message: `looking up ${program} for ${profile.name} in the sandbox failed (exit ${String(r.exitCode)}): ${r.stderr.trim().slice(0, 500)}`,
              });
          }
        } finally {
          await env.destroy();
        }
      } finally {
        await baseline.release();
      }
      return { problems, notes };
    },
  };
}
