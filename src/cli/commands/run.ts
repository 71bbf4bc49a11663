// The `run` command group (placeholder until its issue lands).
import type { Command } from "commander";

export function registerRunCommands(_program: Command): void {}
