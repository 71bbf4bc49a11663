// The ports: the interfaces the runtime works through and adapters implement, one file each, each
// with its version. docs/architecture.md#ports lists them with their implementations.
import { APPROVER_PORT_VERSION } from "./approver.js";
import { CHANGE_FEED_PORT_VERSION } from "./change-feed.js";
import { JOB_QUEUE_PORT_VERSION } from "./job-queue.js";
import { LEASES_PORT_VERSION } from "./leases.js";
import { LEDGER_STORE_PORT_VERSION } from "./ledger-store.js";
import { MODEL_SPECIFICATION_VERSION } from "./model-provider.js";
import { RANDOM_PORT_VERSION } from "./random.js";
import { SANDBOX_PORT_VERSION } from "./sandbox.js";
import { SIGNER_PORT_VERSION } from "./signer.js";
import { TIME_PORT_VERSION } from "./time.js";
import { TOOL_HOST_PORT_VERSION } from "./tool-host.js";

/** Every port's version, by port (test/ports.test.ts checks that each port file states one here). */
export const PORT_VERSIONS = {
  approver: APPROVER_PORT_VERSION,
  changeFeed: CHANGE_FEED_PORT_VERSION,
  jobQueue: JOB_QUEUE_PORT_VERSION,
  ledgerStore: LEDGER_STORE_PORT_VERSION,
  leases: LEASES_PORT_VERSION,
  modelProvider: MODEL_SPECIFICATION_VERSION,
  random: RANDOM_PORT_VERSION,
  sandbox: SANDBOX_PORT_VERSION,
  signer: SIGNER_PORT_VERSION,
  time: TIME_PORT_VERSION,
  toolHost: TOOL_HOST_PORT_VERSION,
} as const;
