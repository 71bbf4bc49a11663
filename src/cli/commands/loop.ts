// The `loop` command group (placeholder until its issue lands).
import type { Command } from "commander";

export function registerLoopCommands(_program: Command): void {}
