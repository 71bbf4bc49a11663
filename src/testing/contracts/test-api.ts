// What a contract suite needs of the test runner: vitest's functions, passed in
// (`import * as vitest from "vitest"; ledgerStoreContract("mine", factory, vitest)`), so that
// warrant/testing itself loads no test runner (vitest is an optional peer dependency, for its types).
import type * as Vitest from "vitest";
import type { LedgerStore } from "../../core/ports/ledger-store.js";

export type ContractTestApi = Pick<
  typeof Vitest,
  "describe" | "it" | "expect" | "beforeAll" | "afterAll" | "beforeEach" | "afterEach"
>;

export interface ContractSubject {
  readonly store: LedgerStore;
  /** Open the same storage again (after `store` is closed); absent for a store with no storage. */
  readonly reopen?: () => Promise<LedgerStore>;
}

/** Fresh, empty stores, one per test. */
export type StoreFactory = () => Promise<ContractSubject>;
