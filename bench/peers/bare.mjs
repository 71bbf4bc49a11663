// Bare `node` start-up probe: prints the absolute time its first statement runs.
import { performance } from "node:perf_hooks";

process.stdout.write(
  `${JSON.stringify({ firstTurnAt: performance.timeOrigin + performance.now() })}\n`,
);
