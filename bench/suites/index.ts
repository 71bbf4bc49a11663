// The registry of benchmark suites, in the order they run.
import { cliSuite } from "./cli.js";
import { definitionSuite } from "./definition.js";
import { demoSuite } from "./demo.js";
import { dispatchSuite } from "./dispatch.js";
import { evalSuite } from "./eval.js";
import { inputSuite } from "./input.js";
import { loopSuite } from "./loop.js";
import { passageSuite } from "./passage.js";
import { peersSuite } from "./peers.js";
import { sandboxSuite } from "./sandbox.js";
import { storeSuite } from "./store.js";
import { telemetrySuite } from "./telemetry.js";
import { turnSuite } from "./turn.js";
import { workspaceSuite } from "./workspace.js";

export interface BenchSuite {
  readonly name: string;
  readonly run: () => Promise<Record<string, unknown>>;
}

export const suites: readonly BenchSuite[] = [
  definitionSuite,
  loopSuite,
  inputSuite,
  turnSuite,
  sandboxSuite,
  workspaceSuite,
  passageSuite,
  telemetrySuite,
  demoSuite,
  storeSuite,
  dispatchSuite,
  cliSuite,
  evalSuite,
  peersSuite,
];
