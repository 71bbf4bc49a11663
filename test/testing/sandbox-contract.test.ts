// warrant/testing's fake sandbox meets the Sandbox port's contract.
import * as vitest from "vitest";
import { fakeSandbox, sandboxContract } from "../../src/testing.js";

sandboxContract("fake", async () => fakeSandbox(), vitest);
