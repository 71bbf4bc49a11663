// What a contract suite needs of the test runner: vitest's functions, passed in
// (`import * as vitest from "vitest"; ledgerStoreContract("mine", factory, vitest)`), so that
// warrant/testing itself loads no test runner (vitest is an optional peer dependency, for its types).
import type * as Vitest from "vitest";

export type ContractTestApi = Pick<
  typeof Vitest,
  "describe" | "it" | "expect" | "beforeAll" | "afterAll" | "beforeEach" | "afterEach"
>;
