// The `operator` command group (placeholder until its issue lands).
import type { Command } from "commander";

export function registerOperatorCommands(_program: Command): void {}
