// The `cid` command group (placeholder until its issue lands).
import type { Command } from "commander";

export function registerCidCommands(_program: Command): void {}
