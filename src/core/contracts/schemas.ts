// The contract schemas, imported as data. The three seeds are byte-for-byte copies (a test pins them).
import agentDefinition from "../../../contracts/agent-definition.v1.schema.json" with {
  type: "json",
};
import loop from "../../../contracts/corpus-task-pack-loop.v1.schema.json" with { type: "json" };
import modelTurn from "../../../contracts/model-turn.schema.json" with { type: "json" };
import operatorTaskCommon from "../../../contracts/operator-task-common.v1.schema.json" with {
  type: "json",
};
import taskPack from "../../../contracts/task-pack.v1.json" with { type: "json" };

export const agentDefinitionSchema: object = agentDefinition;
export const loopSchema: object = loop;
export const modelTurnSchema: object = modelTurn;
export const operatorTaskCommonSchema: object = operatorTaskCommon;
export const taskPackSchema: object = taskPack;

/** The relative name by which the loop seed refers to the common schema. */
export const COMMON_SCHEMA_REF = "operator-task-common.v1.schema.json";
