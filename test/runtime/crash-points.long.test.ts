// Crash safety at every write the demo makes (about 45), before and after each lands.
import { crashPointSuite } from "./crash-points.js";

crashPointSuite(Array.from({ length: 48 }, (_, i) => i + 1));
