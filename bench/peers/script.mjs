// The scripted agent loop shared by every system: which turn comes next, the `add` tool, timestamps
// of every model call, and the correctness checks a measurement must pass before it counts.
import { performance } from "node:perf_hooks";

export const TOOL_NAME = "add";
export const TOOL_DESCRIPTION = "Add two integers and return their sum.";
export const ARGUMENTS_JSON = '{"a":1,"b":2}';
export const PROMPT = "Call add repeatedly as instructed, then report the total.";

/** One loop of n model turns: n-1 tool calls to `add`, then a final answer. */
export class Script {
  constructor(n) {
    this.n = n;
    /**
     * performance.now() at the start of each model call of the current loop; the runner puts the
     * loop's end at index n, so step k lasts stamps[k+1] - stamps[k].
     */
    this.stamps = new Float64Array(n + 1);
    /** Absolute time (ms since the epoch) of the first model call in this process. */
    this.firstTurnAt = 0;
    this.reset();
  }

  reset() {
    this.calls = 0;
    this.toolCalls = 0;
    this.toolSum = 0;
  }

  /** Called by the model at each turn: the ordinal of a tool turn, or -1 for the final answer. */
  next() {
    const i = this.calls++;
    const now = performance.now();
    if (i < this.n) this.stamps[i] = now;
    if (this.firstTurnAt === 0) this.firstTurnAt = performance.timeOrigin + now;
    return i < this.n - 1 ? i : -1;
  }

  /** The `add` tool's body: every system's handler calls this with its validated arguments. */
  add(a, b) {
    this.toolCalls++;
    const sum = a + b;
    this.toolSum += sum;
    return sum;
  }

  /** The final answer the model gives once it has seen `seen`, the sum of the tool results it was sent. */
  finalText(seen) {
    return `total=${seen}`;
  }

  /** Problems with the loop just run (empty when it did exactly what was scripted). */
  check(answerText) {
    const want = 3 * (this.n - 1);
    const problems = [];
    if (this.calls !== this.n) problems.push(`model called ${this.calls} times, want ${this.n}`);
    if (this.toolCalls !== this.n - 1)
      problems.push(`add ran ${this.toolCalls} times, want ${this.n - 1}`);
    if (this.toolSum !== want) problems.push(`tool results sum to ${this.toolSum}, want ${want}`);
    if (answerText !== `total=${want}`)
      problems.push(`final answer ${JSON.stringify(answerText)}, want "total=${want}"`);
    return problems;
  }
}
