// The `definition` command group (placeholder until its issue lands).
import type { Command } from "commander";

export function registerDefinitionCommands(_program: Command): void {}
