// The `inspect` command group (placeholder until its issue lands).
import type { Command } from "commander";

export function registerInspectCommands(_program: Command): void {}
