// Reads config/app.json and refuses a configuration the service cannot start with.
import { readFileSync } from "node:fs";

const LEVELS = ["debug", "info", "warn", "error"];

export function loadConfig(file = new URL("../config/app.json", import.meta.url)) {
  const config = JSON.parse(readFileSync(file, "utf8"));
  const problems = [];
  if (!Number.isInteger(config.port) || config.port < 1024 || config.port > 65535)
    problems.push(`port must be an integer from 1024 to 65535, not ${JSON.stringify(config.port)}`);
  if (!LEVELS.includes(config.logLevel))
    problems.push(`logLevel must be one of ${LEVELS.join(", ")}, not ${JSON.stringify(config.logLevel)}`);
  if (typeof config.timeoutMs !== "number" || config.timeoutMs <= 0)
    problems.push(`timeoutMs must be a positive number, not ${JSON.stringify(config.timeoutMs)}`);
  if (problems.length > 0) throw new Error(`config/app.json: ${problems.join("; ")}`);
  return config;
}
