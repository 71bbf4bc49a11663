// Crash safety at chosen moments: the host "dies" at its Nth write to the ledger (just before it
// lands, or just after), then a fresh host resumes over the same ledger. A sample of the demo's
// writes here; crash-points.long.test.ts tries every one.
import { crashPointSuite } from "./crash-points.js";

crashPointSuite([3, 9, 17, 24, 31, 38]);
