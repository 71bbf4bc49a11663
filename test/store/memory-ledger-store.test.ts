// The in-memory store against the shared LedgerStore contract.
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { ledgerStoreContract } from "./ledger-store-contract.js";

ledgerStoreContract("memory", async () => ({ store: new MemoryLedgerStore() }));
