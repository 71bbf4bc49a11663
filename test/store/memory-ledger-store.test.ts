// The in-memory store against the shared LedgerStore contract.
import * as vitest from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { ledgerStoreContract } from "../../src/testing.js";

ledgerStoreContract("memory", async () => ({ store: new MemoryLedgerStore() }), vitest);
