// The `loop` command group: `warrant loop simulate SCRIPT.json` runs a command script through the
// decider; `warrant loop check LOOP.json` checks a loop document, and `warrant loop check --store
// URI QUERY` and `warrant loop check BUNDLE.json` audit a stored or exported loop completely.

import type { Command } from "commander";
import { withMaxBytes } from "../io.js";
import type { CheckOpts } from "../loop-actions.js";

/** The loop commands' work, loaded when one runs (not when help lists them). */
const actions = () => import("../loop-actions.js");

export function registerLoopCommands(program: Command): void {
  const loop = program
    .command("loop")
    .description("simulate and check bounded experiment loops (corpus-task-pack-loop.v1)");
  withMaxBytes(loop.command("simulate"))
    .description("run a loop command script through the loop core (no model, no sandbox)")
    .argument("<script>", "SCRIPT.json (docs/spec/loop.md)")
    .option("--json", "machine output: {outcomes, loop}")
    .action(async (file: string, opts: { json?: boolean; maxBytes?: string }) =>
      (await actions()).simulateAction(file, opts),
    );
  withMaxBytes(loop.command("check"))
    .description(
      "check a loop document (schema, contiguous facts, every fact legal in order, projection " +
        "equal to the fold); with --store a stored loop, or an audit bundle (warrant export " +
        "--bundle): also its hash chain, signed heads, and every record and its signature",
    )
    .argument("<target>", "LOOP.json or BUNDLE.json, or the QUERY id with --store")
    .option("--now <time>", "check the state against this RFC 3339 instant")
    .option(
      "--store <uri>",
      "check the loop QUERY in this store (sqlite:PATH, postgres://…, memory:)",
    )
    .option(
      "--key <key>",
      "pin the host key: a public key (43 base64url characters) or a key file; the loop must " +
        "be signed by it",
    )
    .option(
      "--trusted-keys <file>",
      "pin the host key to one of the public keys in FILE, one a line (default: " +
        "$XDG_CONFIG_HOME/warrant/trusted-keys when it exists)",
    )
    .option("--require-pinned", "fail (audit/key-not-pinned) unless a trusted key pins the loop")
    .option(
      "--json",
      "machine output: {file | query, valid, state?, facts?, host/key?, keys?, records?, " +
        "signed-through?, acts/covered?, key/pinned?, key/pinned-by?, key/required?, errors}",
    )
    .action(async (target: string, opts: CheckOpts) => (await actions()).checkAction(target, opts));
  for (const c of loop.commands) c.exitOverride();
  loop.exitOverride();
}
