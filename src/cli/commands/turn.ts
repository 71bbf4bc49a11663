// The `turn` command group (placeholder until its issue lands).
import type { Command } from "commander";

export function registerTurnCommands(_program: Command): void {}
