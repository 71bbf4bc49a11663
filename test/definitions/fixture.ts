// Agent definitions written for a test: a folder holding a task pack (over the demo's workspace),
// its agent definitions, their skills and memory (CIDs computed from the files written) and scripted
// models; and chat completions a local wire server answers an openai-compatible definition with.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { onTestFinished } from "vitest";
import { collectionCidOfPath } from "../../src/adapters/fs/collection-files.js";
import { encodeToolName } from "../../src/core/turn/provider-schema.js";
import { repoRoot } from "../helpers/cli.js";
import type { WireReply } from "../models/wire-server.js";

export const DEMO = path.join(repoRoot, "examples/fix-failing-test");

export interface Written {
  readonly dir: string;
  /** The task pack's file. */
  readonly pack: string;
  readonly file: (rel: string) => string;
  write(rel: string, text: string): string;
  cid(rel: string): Promise<string>;
}

/** A fresh folder, removed with the test. */
export function folder(): Written {
  const dir = mkdtempSync(path.join(tmpdir(), "warrant-defs-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = (rel: string) => path.join(dir, rel);
  return {
    dir,
    pack: file("task-pack.json"),
    file,
    write(rel, text) {
      const p = file(rel);
      mkdirSync(path.dirname(p), { recursive: true });
      writeFileSync(p, text);
      return p;
    },
    cid: (rel) => collectionCidOfPath(file(rel)),
  };
}

export function definition(name: string, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    schema: "viper/agent-definition/v1",
    name,
    framework: { name: "warrant" },
    prompts: [{ role: "system", content: `You are ${name}.` }],
    ...extra,
  };
}

/** The demo's pack with its agents replaced and its fields extended, written into `w`. */
export function writePack(
  w: Written,
  agents: Record<string, string>,
  extra: Record<string, unknown> = {},
): string {
  const demo = JSON.parse(readFileSync(path.join(DEMO, "task-pack.json"), "utf8")) as object;
  const pack = { ...demo, workspace: path.join(DEMO, "workspace"), agents, ...extra };
  w.write("task-pack.json", JSON.stringify(pack, null, 2));
  return w.pack;
}

/** One turn, as the seed's ModelTurn. */
export type Turn = {
  readonly kind: "tool_calls" | "message";
  readonly summary: string;
  readonly tool_calls: readonly { readonly name: string; readonly arguments_json: string }[];
  readonly message: {
    readonly type: string;
    readonly payload_json: string;
    readonly paper_ref: null;
  } | null;
};

export function call(name: string, args: Record<string, unknown>): Turn {
  return {
    kind: "tool_calls",
    summary: `call ${name}`,
    tool_calls: [{ name, arguments_json: JSON.stringify(args) }],
    message: null,
  };
}

export function says(type: string, payload: unknown): Turn {
  return {
    kind: "message",
    summary: type,
    tool_calls: [],
    message: { type, payload_json: JSON.stringify(payload), paper_ref: null },
  };
}

/** A chat completion answering with `turn` in native tool-call form (a message is its type's tool). */
export function completion(turn: Turn, n: number): WireReply {
  const calls =
    turn.message === null
      ? turn.tool_calls.map((c, i) => ({
          id: `call_${n}_${i}`,
          type: "function",
          function: { name: encodeToolName(c.name), arguments: c.arguments_json },
        }))
      : [
          {
            id: `call_${n}_0`,
            type: "function",
            function: { name: turn.message.type, arguments: turn.message.payload_json },
          },
        ];
  return {
    status: 200,
    body: {
      id: `chatcmpl-${n}`,
      object: "chat.completion",
      created: 1_764_000_000 + n,
      model: "local-model",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: null, tool_calls: calls, refusal: null },
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    },
  };
}

/** Turns as a scripted model's JSONL file. */
export function jsonl(turns: readonly Turn[]): string {
  return `${turns.map((t) => JSON.stringify(t)).join("\n")}\n`;
}
