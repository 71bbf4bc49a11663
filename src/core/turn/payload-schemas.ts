// The message payload schemas (contracts/messages/*.v1.json) and their validators, precompiled to
// standalone code (../contracts/generated/payloads.ts) by the strict contract profile.
import deadEnd from "../../../contracts/messages/dead-end.v1.json" with { type: "json" };
import finding from "../../../contracts/messages/finding.v1.json" with { type: "json" };
import plan from "../../../contracts/messages/plan.v1.json" with { type: "json" };
import question from "../../../contracts/messages/question.v1.json" with { type: "json" };
import result from "../../../contracts/messages/result.v1.json" with { type: "json" };
import verdict from "../../../contracts/messages/verdict.v1.json" with { type: "json" };
import type { Validator } from "../contracts/ajv-factory.js";
import * as generated from "../contracts/generated/payloads.js";
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

const VALIDATORS: Readonly<Record<MessageType, Validator>> = {
  Plan: generated.Plan,
  Question: generated.Question,
  Result: generated.Result,
  Verdict: generated.Verdict,
  Finding: generated.Finding,
  DeadEnd: generated.DeadEnd,
};

/** The payload validators, precompiled from the schemas above (never compiled in a process). */
export function payloadValidators(): Readonly<Record<MessageType, Validator>> {
  return VALIDATORS;
}
