// A passage's events as spans: its `invoke_agent` span, each model call's `chat` span (kept open
// across an invalid turn for its repair) with usage and the metrics, and each tool call's
// `execute_tool` span.
import { type Attributes, SpanKind, trace } from "@opentelemetry/api";
import { inputMessages, outputMessages, systemInstructions } from "./genai-content.js";
import { EVENT, GEN_AI, GENERAL, OPERATION, SPAN, WARRANT } from "./names.js";
import {
  type EventHandlers,
  endChat,
  endPassage,
  fail,
  metricAttributes,
  passageOf,
  toolType,
} from "./tracing-state.js";

/** The passage family of events. */
export type PassageEventKind =
  | "passage-start"
  | "passage-end"
  | "model-call-start"
  | "model-call-end"
  | "repair"
  | "tool-call-start"
  | "tool-call-end";

export const passageHandlers: EventHandlers<PassageEventKind> = {
  "passage-start": (e, d, t) => {
    if (d === undefined) return;
    if (d.passage !== undefined) endPassage(d.passage, true);
    const span = t.child(d.ctx, SPAN.agent(e.role), {
      [GEN_AI.operationName]: OPERATION.agent,
      [GEN_AI.agentName]: e.role,
      [GEN_AI.agentId]: e.agentId,
      ...(e.agentVersion === undefined ? {} : { [GEN_AI.agentVersion]: e.agentVersion }),
      [WARRANT.role]: e.role,
      [WARRANT.passageRef]: e.passageRef,
      [WARRANT.passageRedone]: e.redone,
    });
    d.passage = {
      ref: e.passageRef,
      span,
      ctx: trace.setSpan(d.ctx, span),
      role: e.role,
      chat: undefined,
      tool: undefined,
    };
  },
  "passage-end": (e, d, t) => {
    const p = passageOf(d, e.passageRef);
    if (d === undefined || p === undefined) return;
    const span = p.span;
    if (e.outcome.ok) {
      span.setAttribute(WARRANT.messageType, e.outcome.type);
      if (e.outcome.refused !== undefined)
        span.setAttribute(WARRANT.planRefused, [...e.outcome.refused]);
    } else {
      // A failure's text can quote what the model said: content, so only when captured.
      fail(span, e.outcome.code, t.capture ? e.outcome.message : undefined);
    }
    const u = e.usage;
    if (u !== undefined) {
      span.setAttributes({
        [GEN_AI.inputTokens]: u.inputTokens,
        [GEN_AI.outputTokens]: u.outputTokens,
        [WARRANT.modelCalls]: u.modelCalls,
        [WARRANT.toolCalls]: u.toolCalls,
        [WARRANT.repairs]: u.repairs,
      });
      if (u.cachedInputTokens > 0) span.setAttribute(GEN_AI.cacheReadTokens, u.cachedInputTokens);
      if (u.reasoningTokens > 0) span.setAttribute(GEN_AI.reasoningTokens, u.reasoningTokens);
    }
    d.passage = undefined;
    endPassage(p, false);
  },
  "model-call-start": (e, d, t) => {
    const p = passageOf(d, e.passageRef);
    if (p === undefined) return;
    endChat(p);
    if (p.calls?.providerId !== e.provider) {
      const target = e.target;
      const span: Attributes = {
        [GEN_AI.operationName]: OPERATION.chat,
        [GEN_AI.providerName]: target.provider,
        [GEN_AI.requestModel]: target.model,
        ...(target.server === undefined
          ? {}
          : {
              [GENERAL.serverAddress]: target.server.address,
              [GENERAL.serverPort]: target.server.port,
            }),
      };
      p.calls = {
        providerId: e.provider,
        name: SPAN.chat(target.model),
        span,
        base: { ...span, [WARRANT.role]: p.role },
        metrics: new Map(),
      };
    }
    const span = t.child(p.ctx, p.calls.name, p.calls.span, SpanKind.CLIENT);
    if (t.capture && e.request !== undefined && span.isRecording()) {
      span.setAttribute(GEN_AI.systemInstructions, systemInstructions(e.request));
      span.setAttribute(GEN_AI.inputMessages, inputMessages(e.request));
    }
    p.chat = { span, awaitsRepair: false };
  },
  "model-call-end": (e, d, t) => {
    const p = passageOf(d, e.passageRef);
    const chat = p?.chat;
    if (p === undefined || chat === undefined) return;
    const span = chat.span;
    const meta = e.response;
    const finish = meta?.finishReason ?? e.stop;
    if (meta?.model != null) span.setAttribute(GEN_AI.responseModel, meta.model);
    if (meta?.id != null) span.setAttribute(GEN_AI.responseId, meta.id);
    if (finish !== undefined) span.setAttribute(GEN_AI.finishReasons, [finish]);
    const u = e.usage;
    if (u !== undefined) {
      span.setAttribute(GEN_AI.inputTokens, u.inputTokens);
      span.setAttribute(GEN_AI.outputTokens, u.outputTokens);
      if (u.cachedInputTokens > 0) span.setAttribute(GEN_AI.cacheReadTokens, u.cachedInputTokens);
      if (u.reasoningTokens > 0) span.setAttribute(GEN_AI.reasoningTokens, u.reasoningTokens);
    }
    if (e.valid === false) span.setAttribute(WARRANT.turnValid, false);
    if (e.error !== undefined) fail(span, e.error);
    if (t.capture && e.output !== undefined && span.isRecording())
      span.setAttribute(GEN_AI.outputMessages, outputMessages(e.output, finish));
    if (t.metrics !== undefined && p.calls !== undefined)
      t.metrics.modelCall(metricAttributes(p.calls, e.error, meta?.model), e.latencyMs, e.usage);
    // An invalid turn is followed at once by its repair (when one is left): the span takes
    // that event first.
    if (e.valid === false) chat.awaitsRepair = true;
    else endChat(p);
  },
  repair: (e, d, _t) => {
    const p = passageOf(d, e.passageRef);
    if (p === undefined) return;
    const attributes = { [WARRANT.repairCodes]: [...e.codes] };
    if (p.chat?.awaitsRepair === true) {
      p.chat.span.addEvent(EVENT.repair, attributes);
      endChat(p);
    } else p.span.addEvent(EVENT.repair, attributes);
  },
  "tool-call-start": (e, d, t) => {
    const p = passageOf(d, e.passageRef);
    if (p === undefined) return;
    endChat(p);
    p.tool?.end();
    p.tool = t.child(p.ctx, SPAN.tool(e.name), {
      [GEN_AI.operationName]: OPERATION.tool,
      [GEN_AI.toolName]: e.name,
      [GEN_AI.toolCallId]: e.callId,
      [GEN_AI.toolType]: toolType(e.tool),
      [WARRANT.toolKind]: e.tool,
      ...(t.capture && e.args !== undefined
        ? { [GEN_AI.toolArguments]: JSON.stringify(e.args) }
        : {}),
    });
  },
  "tool-call-end": (e, d, t) => {
    const p = passageOf(d, e.passageRef);
    const span = p?.tool;
    if (p === undefined || span === undefined) return;
    if (e.isError) fail(span, e.code ?? "tool_error");
    if (t.capture && e.result !== undefined) span.setAttribute(GEN_AI.toolResult, e.result);
    p.tool = undefined;
    span.end();
  },
};
