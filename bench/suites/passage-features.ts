// The passage bench's workload with an agent definition's features on, run as a drive runs it
// (the agent passage runner): middleware (a call limit and a model fallback), a declared tool
// (`math.add`, bound to the host's tool of the same name under its own schema), a skill and a
// read-only memory (the example config-fixer's, read and verified once per runner) and a writable
// memory kept in the memory store (read at every passage's start). Only the model's turns differ
// from the bare workload: the same N − 1 `math.add` calls and a final Finding.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createDefinitionFiles } from "../../src/adapters/fs/definition-files.js";
import { loadPack } from "../../src/adapters/fs/pack-loader.js";
import { createScriptedModel } from "../../src/adapters/models/scripted-model.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import { type ToolHost, toolAnswer } from "../../src/core/ports/tool-host.js";
import { ok } from "../../src/core/result.js";
import { createAgentPassages } from "../../src/runtime/agent-passages.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import type { LoadedPack } from "../../src/runtime/task-pack.js";
import { ADD, script } from "./passage.js";

const QUERY = "query:bench";

/**
 * The package root, found from this file in `bench/` or `dist/bench/` (not through the CLI's
 * helper, whose module graph would count in the RSS measured).
 */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "package.json"))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error("the bench finds no package root");
    dir = up;
  }
  return dir;
}

/** The host's tools: the bare workload's `math.add`. */
const host: ToolHost = {
  specs: () => [ADD],
  call: async (_name, args) => toolAnswer(String((args.a as number) + (args.b as number))),
};

/** The example config-fixer with its sub-agent left out, a declared tool and room for N calls. */
function withFeatures(definition: Record<string, unknown>, turns: number): Record<string, unknown> {
  const { subAgents: _subAgents, ...rest } = definition;
  return {
    ...rest,
    middleware: [
      { name: "call-limit", config: { maxCalls: turns + 1 } },
      { name: "model-fallback", config: { model: { "@model": 1 } } },
    ],
    tools: [{ name: ADD.name, description: "Add two integers.", inputSchema: ADD.inputSchema }],
  };
}

/**
 * A runner of `turns`-turn passages with the features on: each call runs one passage (its
 * transcript record included, as the runner makes it) and checks it ended with the Finding.
 */
export async function featuresPassage(
  turns: number,
): Promise<(() => Promise<void>) & { readonly lastTranscript: () => string | undefined }> {
  const root = packageRoot();
  const loaded = await loadPack(path.join(root, "examples/fix-config/task-pack.json"));
  if (!loaded.ok) throw new Error("the fix-config pack does not load");
  const agent = loaded.value.agents.implementer;
  if (agent === undefined) throw new Error("the fix-config pack has no implementer");
  const pack: LoadedPack = {
    ...loaded.value,
    pack: { ...loaded.value.pack, passage: { maxTurns: turns, maxTokens: 1e12, repairs: 0 } },
    agents: {
      ...loaded.value.agents,
      implementer: {
        ...agent,
        definition: withFeatures(agent.definition as Record<string, unknown>, turns),
      },
    },
  };
  const answers = script(turns);
  const store = await openStore("memory:");
  const ledger = { store, loop: new LoopLedger(store, async () => {}), now: () => new Date(0) };
  const passages = createAgentPassages({
    models: {
      override: () => undefined,
      definition: () => createScriptedModel(answers as never),
    },
    tools: async () => ok(host),
    files: { files: createDefinitionFiles(), skillDirs: [] },
  });
  let n = 0;
  let last: string | undefined;
  const once = async () => {
    const out = await passages.run({
      query: QUERY,
      role: "implementer",
      agentId: agent.id,
      passageRef: `passage:bench-${n++}`,
      evidence: "Numbers 1 to N.",
      pack,
      priorCalls: 0,
      ledger,
    });
    if (!out.ok) throw new Error(`bench passage with features failed: ${out.code} ${out.message}`);
    if (out.modelCalls !== turns) throw new Error(`expected ${turns} model calls`);
    last = out.transcript?.text;
  };
  return Object.assign(once, { lastTranscript: () => last });
}
