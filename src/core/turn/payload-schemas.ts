// The message payload schemas (contracts/messages/*.v1.json), compiled once per process in one
// strict Ajv instance; the validators are immutable afterwards, so sharing them is safe.
import deadEnd from "../../../contracts/messages/dead-end.v1.json" with { type: "json" };
import finding from "../../../contracts/messages/finding.v1.json" with { type: "json" };
import plan from "../../../contracts/messages/plan.v1.json" with { type: "json" };
import question from "../../../contracts/messages/question.v1.json" with { type: "json" };
import result from "../../../contracts/messages/result.v1.json" with { type: "json" };
import verdict from "../../../contracts/messages/verdict.v1.json" with { type: "json" };
import { createAjv, type ValidateFunction } from "../contracts/ajv.js";
import { WarrantError } from "../result.js";
import type { MessageType } from "./types.js";

/** The payload schema of each message type, as data. */
export const PAYLOAD_SCHEMAS: Readonly<Record<MessageType, object>> = {
  Plan: plan,
  Question: question,
  Result: result,
  Verdict: verdict,
  Finding: finding,
  DeadEnd: deadEnd,
};

/** The `$id` of each payload schema (`urn:warrant:<name>:v1`). */
export const PAYLOAD_SCHEMA_IDS: Readonly<Record<MessageType, string>> = {
  Plan: plan.$id,
  Question: question.$id,
  Result: result.$id,
  Verdict: verdict.$id,
  Finding: finding.$id,
  DeadEnd: deadEnd.$id,
};

let cached: Readonly<Record<MessageType, ValidateFunction>> | undefined;

/** The payload validators, compiled once per process. */
export function payloadValidators(): Readonly<Record<MessageType, ValidateFunction>> {
  if (cached !== undefined) return cached;
  const ajv = createAjv();
  for (const schema of Object.values(PAYLOAD_SCHEMAS)) ajv.addSchema(schema);
  const get = (type: MessageType): ValidateFunction => {
    const v = ajv.getSchema(PAYLOAD_SCHEMA_IDS[type]);
    if (v === undefined)
      throw new WarrantError("internal/payload-schema", `payload schema ${type} did not compile`);
    return v;
  };
  cached = {
    Plan: get("Plan"),
    Question: get("Question"),
    Result: get("Result"),
    Verdict: get("Verdict"),
    Finding: get("Finding"),
    DeadEnd: get("DeadEnd"),
  };
  return cached;
}
