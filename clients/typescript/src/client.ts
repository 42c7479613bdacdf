// LuoshoClient: the client of a luoshod daemon; Run: one Execute/Resume/Resolve stream;
// Watch: one Watch stream. Both streams are async iterables of typed Events.
import { ChannelCredentials, Metadata, credentials, status as Status, type Client, type ClientOptions as GrpcClientOptions, type ClientReadableStream, type ServiceError } from "@grpc/grpc-js";
import {
  AgentDriftPolicy,
  AgentServiceClient,
  CancelRequest,
  type CancelResponse,
  CompareRequest,
  DeleteSessionRequest,
  type DeleteSessionResponse,
  CompactRequest,
  type CompactResponse,
  CompactionStrategy,
  CreateScheduleRequest,
  type CreateScheduleResponse,
  DeleteScheduleRequest,
  ListSchedulesRequest,
  type ListSchedulesResponse,
  PauseScheduleRequest,
  type PauseScheduleResponse,
  ResumeScheduleRequest,
  type ResumeScheduleResponse,
  type Schedule,
  ScheduleCatchUp,
  ScheduleOverlap,
  ScheduleSession,
  TriggerScheduleRequest,
  type TriggerScheduleResponse,
  DequeueInputRequest,
  type DequeueInputResponse,
  IfBusy,
  type QueuedInput,
  GetSessionRequest,
  type GetSessionResponse,
  HistoryRequest,
  type HistoryResponse,
  ListApprovalsRequest,
  type ListApprovalsResponse,
  ListSessionsRequest,
  type ListSessionsResponse,
  SubmitToolResultRequest,
  type SubmitToolResultResponse,
  type AgentSpec,
  type Approval,
  type BudgetExceeded,
  type Checkpoint,
  CheckpointStatus,
  type CompareResponse,
  type DeepPartial,
  type McpServerUse,
  ToolExecutor,
  type Event,
  ExecuteRequest,
  FinishReason,
  ForkRequest,
  type ForkResponse,
  type HistoryEntry,
  type Message,
  ResolveRequest,
  ResumeRequest,
  Role,
  type SessionSummary,
  SubmitOutcome,
  ReconcileOutcome,
  type SubAgentTag,
  type Usage,
  WatchRequest,
} from "./gen/luosho/v1/agent.js";
import { IncompleteRunError, ScheduleNotFoundError, ToolCallNotPendingError, UnavailableError, fromServiceError } from "./errors.js";
import { NO_RETRY, RetryPolicy, channelOptions, isProgress, newRequestId, refusedByAdmission, type Refusals, type RetryOptions } from "./retry.js";

// ---- agents, input, tools -------------------------------------------------------------

/** A tool the agent may call; the client runs it (tool.call → SubmitToolResult). */
export interface ToolDef {
  name: string;
  description?: string;
  /** A JSON Schema for the arguments (an object, sent as JSON). */
  inputSchema?: unknown;
  /** Pause the run for a human decision before the call runs. */
  needsApproval?: boolean;
  /**
   * A question to a person (R88), never run by the client: a call pauses the run like
   * needsApproval; `resolve(id, true, { answer })` answers it, the call's result being
   * {"answer": TEXT}.
   */
  question?: boolean;
  /**
   * A call of it handed out before with no recorded result is first put to the client as a
   * tool.reconcile (R77). Set for you on the tools given a reconcile function.
   */
  reconcile?: boolean;
}

/** The agent: model, instructions, tools and limits. */
export interface Agent {
  /** "provider:model", e.g. "scripted:demo", "openai:gpt-4o-mini". */
  model: string;
  instructions?: string;
  tools?: ToolDef[];
  maxSteps?: number;
  toolConcurrency?: number;
  onAgentDrift?: "warn" | "error" | "ignore";
  /** Provider settings (temperature, the scripted provider's "script", …), sent as JSON. */
  modelSettings?: unknown;
  toolTimeoutMs?: number;
  approvalTimeoutMs?: number;
  /** Daemon tools: MCP servers of the daemon's configuration, by name (or a full
   * McpServerUse: allowTools, timeoutMs, retry, toolOverrides). Their tools are called
   * "<server>__<tool>" and run by the daemon, never by `tools`. */
  mcpServers?: (string | DeepPartial<McpServerUse>)[];
  /** Sub-agents the lead hands tasks to through the daemon's `task` tool (docs/reference/rules.md
   * R55). Their tools run with the same `tools` as the lead's; a handler sees which
   * sub-agent asks in `ctx.subagent`. */
  subagents?: SubAgentDef[];
  /** How deep the tree of sub-agents may go (default 1); the top-level agent's only. */
  maxSubagentDepth?: number;
  /** A JSON Schema the run's final answer must be JSON valid against (docs/reference/rules.md
   * R83), as an object (sent as JSON) or JSON text; `RunResult.output` is the answer parsed. */
  outputSchema?: unknown;
  /** Models ("provider:model") that take a turn, in order, when the model fails with a
   * retryable error after its retries or its circuit is open (docs/reference/rules.md R82).
   * Each retry and switch is a `providerRetry` / `providerFallback` event. */
  fallbackModels?: string[];
  /** How much the model reasons (docs/reference/rules.md R84): an effort ("minimal", "low",
   * "medium", "high"), a token budget, or both. `RunResult.reasoning` is what it streamed. */
  reasoning?: { effort?: string; budgetTokens?: number };
  /** Compaction of a long transcript before a model call (docs/reference/rules.md R85). */
  compaction?: CompactionDef;
  /** The daemon's `sleep` tool (docs/reference/rules.md R86): its call ends the run with
   * finishReason "sleeping" until its time, when a daemon resumes the session (or earlier:
   * `resume(id, { wake: true })`). Lead agent only. */
  sleepTool?: boolean;
}

export type CompactionStrategyName = "prune" | "summarize" | "both";
const COMPACTION: Record<CompactionStrategyName, CompactionStrategy> = {
  prune: CompactionStrategy.COMPACTION_STRATEGY_PRUNE,
  summarize: CompactionStrategy.COMPACTION_STRATEGY_SUMMARIZE,
  both: CompactionStrategy.COMPACTION_STRATEGY_BOTH,
};

/**
 * When the request passes `threshold` of the model's context window (default 0.8; the window
 * is the daemon's configuration's), old tool results become a marker, then (strategy "both",
 * the default) the oldest turns one summary written by `model` (default: the agent's) with
 * `modelSettings`. The newest `protectTokens` stay.
 */
export interface CompactionDef {
  threshold?: number;
  protectTokens?: number;
  strategy?: CompactionStrategyName;
  model?: string;
  modelSettings?: unknown;
}

function compactionValue(name: CompactionStrategyName | CompactionStrategy | undefined): CompactionStrategy {
  if (name === undefined) return CompactionStrategy.COMPACTION_STRATEGY_UNSPECIFIED;
  if (typeof name === "number") return name;
  return named(COMPACTION, name, "strategy");
}

/** The enum value of a name, or a TypeError naming the choices. */
function named<T>(table: Record<string, T>, name: string, what: string): T {
  if (!Object.hasOwn(table, name)) throw new TypeError(`${what} must be one of ${Object.keys(table).join(", ")}, got ${JSON.stringify(name)}`);
  return table[name]!;
}

/** A named sub-agent: the lead's model chooses it by `description`. */
export interface SubAgentDef {
  name: string;
  description: string;
  agent: Agent;
}

/** A tool.call the daemon runs itself (a tool of one of its MCP servers): the client never
 * hands it to the run's tools; its tool.result follows by itself. */
export function isDaemonCall(event: Event): boolean {
  return event.toolCall?.executor === ToolExecutor.TOOL_EXECUTOR_DAEMON;
}

const DRIFT: Record<NonNullable<Agent["onAgentDrift"]>, AgentDriftPolicy> = {
  warn: AgentDriftPolicy.AGENT_DRIFT_POLICY_WARN,
  error: AgentDriftPolicy.AGENT_DRIFT_POLICY_ERROR,
  ignore: AgentDriftPolicy.AGENT_DRIFT_POLICY_IGNORE,
};

/** Sets `reconcile` on the tools of `spec` (and of its sub-agents) that have a reconcile
 * function (R77): the flag goes with the function. */
function markReconciled(spec: DeepPartial<AgentSpec> | undefined, names: ReadonlySet<string>): void {
  if (!spec || names.size === 0) return;
  for (const tool of spec.tools ?? []) if (tool?.name && names.has(tool.name)) tool.reconcile = true;
  for (const sub of spec.subagents ?? []) markReconciled(sub?.agent, names);
}

/** The AgentSpec proto of an Agent (with `reconcile` set on the tools named in `reconcile`). */
function agentSpecFor(agent: Agent | undefined, reconcile: Reconcilers | undefined): DeepPartial<AgentSpec> | undefined {
  if (!agent) return undefined;
  const spec = agentSpec(agent);
  markReconciled(spec, new Set(Object.keys(reconcile ?? {})));
  return spec;
}

/** The AgentSpec proto of an Agent. */
export function agentSpec(agent: Agent): DeepPartial<AgentSpec> {
  return {
    model: agent.model,
    instructions: agent.instructions ?? "",
    tools: (agent.tools ?? []).map((t) => ({
      name: t.name,
      description: t.description ?? "",
      inputSchemaJson: t.inputSchema === undefined ? "" : JSON.stringify(t.inputSchema),
      needsApproval: t.needsApproval ?? false,
      reconcile: t.reconcile ?? false,
      question: t.question ?? false,
    })),
    maxSteps: agent.maxSteps,
    toolConcurrency: agent.toolConcurrency,
    onAgentDrift: agent.onAgentDrift ? DRIFT[agent.onAgentDrift] : AgentDriftPolicy.AGENT_DRIFT_POLICY_UNSPECIFIED,
    modelSettingsJson: agent.modelSettings === undefined ? "" : JSON.stringify(agent.modelSettings),
    toolTimeoutMs: agent.toolTimeoutMs,
    approvalTimeoutMs: agent.approvalTimeoutMs,
    mcpServers: (agent.mcpServers ?? []).map((s) => (typeof s === "string" ? { name: s } : s)),
    subagents: (agent.subagents ?? []).map((s) => ({ name: s.name, description: s.description, agent: agentSpec(s.agent) })),
    maxSubagentDepth: agent.maxSubagentDepth,
    outputSchemaJson:
      agent.outputSchema === undefined ? "" : typeof agent.outputSchema === "string" ? agent.outputSchema : JSON.stringify(agent.outputSchema),
    fallbackModels: agent.fallbackModels ?? [],
    reasoning: agent.reasoning ? { effort: agent.reasoning.effort ?? "", budgetTokens: agent.reasoning.budgetTokens } : undefined,
    compaction: agent.compaction
      ? {
          threshold: agent.compaction.threshold ?? 0,
          protectTokens: agent.compaction.protectTokens ?? 0,
          strategy: compactionValue(agent.compaction.strategy),
          model: agent.compaction.model ?? "",
          modelSettingsJson: agent.compaction.modelSettings === undefined ? "" : JSON.stringify(agent.compaction.modelSettings),
        }
      : undefined,
    sleepTool: agent.sleepTool ?? false,
  };
}

export type RoleName = "system" | "user" | "assistant" | "tool";
const ROLES: Record<RoleName, Role> = {
  system: Role.ROLE_SYSTEM,
  user: Role.ROLE_USER,
  assistant: Role.ROLE_ASSISTANT,
  tool: Role.ROLE_TOOL,
};

/** A message: the proto's fields, with role as a name or the enum. */
export type MessageInput = Omit<DeepPartial<Message>, "role"> & { role?: RoleName | Role };
/** A string (one user message), a message, or a list of messages. */
export type InputLike = string | MessageInput | MessageInput[] | undefined;

function messages(input: InputLike): DeepPartial<Message>[] {
  if (input === undefined) return [];
  if (typeof input === "string") return [{ role: Role.ROLE_USER, content: input }];
  return (Array.isArray(input) ? input : [input]).map((m) => ({
    ...m,
    role: typeof m.role === "string" ? ROLES[m.role] : (m.role ?? Role.ROLE_USER),
  }));
}

/** What a tool may want to know about the call it runs. */
export interface ToolContext {
  sessionId: string;
  /** Stable across re-runs of the same call: usable as an idempotency key. */
  toolCallId: string;
  toolName: string;
  step: number;
  /** How long the run waits for the result before recording a timeout. */
  timeoutMs: number;
  /** The sub-agent that asks (undefined: the lead); its calls' ids are qualified by their
   * path ("<lead call id>/<its call id>"). */
  subagent?: SubAgentTag;
  /** Which hand-out of the call this is (R77): 1 the first time, one more each time the same
   * call is handed out again after a daemon restart, a takeover or a resume. */
  attempt: number;
  /** How the call's tool.reconcile was answered when this hand-out follows one: "" (none),
   * "NOT_STARTED" or "UNKNOWN" (also when it went unanswered). */
  reconciled: "" | "NOT_STARTED" | "UNKNOWN";
  /** An earlier hand-out may have had its effect (reconciled "UNKNOWN"): check by
   * toolCallId before acting again. */
  mayHaveRun: boolean;
}

/** A reconcile answer (R77): the call happened; `result` (any JSON value) is its result. */
export class Done {
  constructor(readonly result: unknown, readonly isError = false) {}
}
/** A reconcile answer: the call never started; it is handed out again. */
export const NOT_STARTED = "NOT_STARTED";
/** A reconcile answer: the client cannot tell; it is handed out again with ctx.mayHaveRun. */
export const UNKNOWN = "UNKNOWN";
export type ReconcileAnswer = Done | typeof NOT_STARTED | typeof UNKNOWN;

/** A call handed out before whose fate the daemon does not know (a tool.reconcile event). */
export interface ReconcileCall {
  sessionId: string;
  /** The call's id: the same on every hand-out, the idempotency key to look it up by. */
  toolCallId: string;
  toolName: string;
  arguments: unknown;
  /** The attempt of the last hand-out (1: the first). */
  attempt: number;
  step: number;
  subagent?: SubAgentTag;
}

/**
 * Answers whether a call handed out before happened: Done(result) (recorded as its result,
 * the tool is not run again), NOT_STARTED or UNKNOWN (handed out again). One that throws,
 * and a tool without one, answer UNKNOWN.
 */
export type ReconcileFunction = (call: ReconcileCall) => ReconcileAnswer | Promise<ReconcileAnswer>;
/** Tool name → its reconcile function. */
export type Reconcilers = Record<string, ReconcileFunction>;

const RECONCILED: Partial<Record<ReconcileOutcome, ToolContext["reconciled"]>> = {
  [ReconcileOutcome.RECONCILE_OUTCOME_NOT_STARTED]: "NOT_STARTED",
  [ReconcileOutcome.RECONCILE_OUTCOME_UNKNOWN]: "UNKNOWN",
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ToolHandler = (args: any, ctx: ToolContext) => Promise<unknown>;
/** Tool name → async function; its return value is sent as JSON. */
export type Tools = Record<string, ToolHandler>;

interface ToolOutcome { resultJson: string; isError: boolean; reconcile?: ReconcileOutcome }

const UNKNOWN_OUTCOME: ToolOutcome = { resultJson: "", isError: false, reconcile: ReconcileOutcome.RECONCILE_OUTCOME_UNKNOWN };

/** Answers a tool.reconcile event with the tool's reconcile function (UNKNOWN without one, or when it throws). */
async function reconcileCall(reconcilers: Reconcilers, sessionId: string, event: Event): Promise<ToolOutcome> {
  const asked = event.toolReconcile!;
  const call = asked.call!;
  const fn = Object.hasOwn(reconcilers, call.name) ? reconcilers[call.name] : undefined;
  if (!fn) return UNKNOWN_OUTCOME;
  let args: unknown;
  try {
    args = call.argumentsJson ? JSON.parse(call.argumentsJson) : {};
  } catch {
    args = call.argumentsJson;
  }
  let answer: ReconcileAnswer;
  try {
    answer = await fn({ sessionId: event.sessionId || sessionId, toolCallId: call.id, toolName: call.name, arguments: args, attempt: asked.attempt, step: asked.step, subagent: event.subagent });
  } catch {
    return UNKNOWN_OUTCOME;
  }
  if (answer instanceof Done) {
    try {
      const json = JSON.stringify(answer.result);
      return { resultJson: json === undefined ? "null" : json, isError: answer.isError, reconcile: ReconcileOutcome.RECONCILE_OUTCOME_DONE };
    } catch (error) {
      return { ...errorOutcome(error), reconcile: ReconcileOutcome.RECONCILE_OUTCOME_DONE };
    }
  }
  if (answer === NOT_STARTED) return { resultJson: "", isError: false, reconcile: ReconcileOutcome.RECONCILE_OUTCOME_NOT_STARTED };
  return UNKNOWN_OUTCOME;
}

function errorOutcome(error: unknown): ToolOutcome {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : `Error: ${String(error)}`;
  return { resultJson: JSON.stringify({ error: text }), isError: true };
}

/** Runs a tool.call with its handler. Every failure becomes an error result the model reads. */
async function runTool(tools: Tools, sessionId: string, event: Event): Promise<ToolOutcome> {
  const requested = event.toolCall!;
  const call = requested.call!;
  const handler = Object.hasOwn(tools, call.name) ? tools[call.name] : undefined;
  if (!handler) return errorOutcome(Object.assign(new Error(`no tool named "${call.name}" was given to the client`), { name: "UnknownToolError" }));
  let args: unknown;
  try {
    args = call.argumentsJson ? JSON.parse(call.argumentsJson) : {};
  } catch (error) {
    return errorOutcome(error);
  }
  const ctx: ToolContext = {
    sessionId: event.sessionId || sessionId,
    toolCallId: call.id,
    toolName: call.name,
    step: requested.step,
    timeoutMs: requested.timeoutMs,
    subagent: event.subagent,
    attempt: requested.attempt,
    reconciled: RECONCILED[requested.reconciled] ?? "",
    mayHaveRun: requested.reconciled === ReconcileOutcome.RECONCILE_OUTCOME_UNKNOWN,
  };
  let value: unknown;
  try {
    value = await handler(args, ctx);
  } catch (error) {
    return errorOutcome(error);
  }
  try {
    const json = JSON.stringify(value);
    return { resultJson: json === undefined ? "null" : json, isError: false };
  } catch (error) {
    return errorOutcome(error);
  }
}

// ---- results ---------------------------------------------------------------------------

export type FinishReasonName = "" | "stop" | "max_steps" | "aborted" | "awaiting_approval" | "budget_exceeded" | "deadline_exceeded" | "output_invalid" | "sleeping";
export type StatusName = "" | "in_progress" | "awaiting_approval" | "finished" | "sleeping";

export function finishReasonName(value: FinishReason): FinishReasonName {
  const names: Partial<Record<FinishReason, FinishReasonName>> = {
    [FinishReason.FINISH_REASON_STOP]: "stop",
    [FinishReason.FINISH_REASON_MAX_STEPS]: "max_steps",
    [FinishReason.FINISH_REASON_ABORTED]: "aborted",
    [FinishReason.FINISH_REASON_AWAITING_APPROVAL]: "awaiting_approval",
    [FinishReason.FINISH_REASON_BUDGET_EXCEEDED]: "budget_exceeded",
    [FinishReason.FINISH_REASON_DEADLINE_EXCEEDED]: "deadline_exceeded",
    [FinishReason.FINISH_REASON_OUTPUT_INVALID]: "output_invalid",
    [FinishReason.FINISH_REASON_SLEEPING]: "sleeping",
  };
  return names[value] ?? "";
}

export function statusName(value: CheckpointStatus): StatusName {
  const names: Partial<Record<CheckpointStatus, StatusName>> = {
    [CheckpointStatus.CHECKPOINT_STATUS_IN_PROGRESS]: "in_progress",
    [CheckpointStatus.CHECKPOINT_STATUS_AWAITING_APPROVAL]: "awaiting_approval",
    [CheckpointStatus.CHECKPOINT_STATUS_FINISHED]: "finished",
    [CheckpointStatus.CHECKPOINT_STATUS_SLEEPING]: "sleeping",
  };
  return names[value] ?? "";
}

const STATUS_VALUES: Record<Exclude<StatusName, "">, CheckpointStatus> = {
  in_progress: CheckpointStatus.CHECKPOINT_STATUS_IN_PROGRESS,
  awaiting_approval: CheckpointStatus.CHECKPOINT_STATUS_AWAITING_APPROVAL,
  finished: CheckpointStatus.CHECKPOINT_STATUS_FINISHED,
  sleeping: CheckpointStatus.CHECKPOINT_STATUS_SLEEPING,
};

/**
 * A provider.retry event (R82): `attempt` (1 = the first) of a call of `model` failed with
 * `error`, and the provider tries again after `delayMs`. `subagent`: the path of the
 * sub-agent whose call it was (empty: the lead).
 */
export interface ProviderRetry {
  step: number;
  model: string;
  attempt: number;
  error: string;
  delayMs: number;
  subagent: string[];
}

/**
 * A provider.fallback event (R82): `fromModel` failed with `error` (its `reason` and the
 * provider's `errorType`, "circuit_open" when it was skipped) and `toModel` took the same
 * turn. `subagent`: as for ProviderRetry.
 */
export interface ProviderFallback {
  step: number;
  fromModel: string;
  toModel: string;
  error: string;
  reason: string;
  errorType: string;
  subagent: string[];
}

function providerRetries(events: Event[]): ProviderRetry[] {
  return events.flatMap((e) => {
    const r = e.providerRetry;
    return r ? [{ step: r.step, model: r.model, attempt: r.attempt, error: r.error, delayMs: Number(r.delayMs), subagent: [...(e.subagent?.path ?? [])] }] : [];
  });
}

function providerFallbacks(events: Event[]): ProviderFallback[] {
  return events.flatMap((e) => {
    const f = e.providerFallback;
    return f ? [{ step: f.step, fromModel: f.fromModel, toModel: f.toModel, error: f.error, reason: f.reason, errorType: f.errorType, subagent: [...(e.subagent?.path ?? [])] }] : [];
  });
}

/** The outcome of one Execute, Resume or Resolve stream, read from its run.done event. */
export interface RunResult {
  sessionId: string;
  /** False only for a Resume of a session with nothing left to run. */
  ran: boolean;
  finishReason: FinishReasonName;
  status: StatusName;
  finalText: string;
  stepIndex: number;
  usage: Usage;
  approvalId: string;
  /** The pending approval (gated call, remaining calls) when the run paused on one. */
  approval?: Approval;
  messageCount: number;
  runId: string;
  /** Every event the stream delivered, in order (run.done last). */
  events: Event[];
  /** Streams it took: 1 unless the client retried (R75). */
  attempts: number;
  /**
   * What tripped when a limit stopped the run (finishReason "budget_exceeded" or
   * "deadline_exceeded"): the run's budget.exceeded event — scope, limit, value, used,
   * worstCase, usage, path.
   */
  budgetExceeded?: BudgetExceeded;
  /** The run's provider.retry events, in order (R82): the lead's and its sub-agents'. */
  retries: ProviderRetry[];
  /** The run's provider.fallback events, in order (R82): each turn a fallback model took. */
  fallbacks: ProviderFallback[];
  /** With an agent's outputSchema (R83): the answer parsed when it was valid (finishReason
   * "stop"); undefined otherwise. Narrow it to your type after checking it. */
  output?: unknown;
  /** The answer as canonical JSON text ("" without one). */
  outputJson: string;
  /** Why the answer was not valid (finishReason "output_invalid"). */
  outputErrors: string[];
  /** The model's readable reasoning as it streamed (the run's reasoning.delta events, R84),
   * joined; never part of finalText. Each turn keeps its blocks (Message.reasoning). */
  reasoning: string;
}

function buildResult(sessionId: string, events: Event[], emptyMeansFinished: boolean, attempts: number): RunResult {
  const usage0: Usage = {
    promptTokens: 0, completionTokens: 0, totalTokens: 0, modelCalls: 0, costUsd: 0,
    cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0,
  };
  if (events.length === 0 && emptyMeansFinished) {
    return { sessionId, ran: false, finishReason: "", status: "finished", finalText: "", stepIndex: 0, usage: usage0, approvalId: "", messageCount: 0, runId: "", events, attempts, retries: [], fallbacks: [], outputJson: "", outputErrors: [], reasoning: "" };
  }
  const last = [...events].reverse().find((e) => e.runDone);
  if (!last) {
    throw new IncompleteRunError(2, "INCOMPLETE_RUN", `the stream of session "${sessionId}" ended without a run.done event (${events.length} events received)`, { session_id: sessionId, events: String(events.length) });
  }
  const done = last.runDone!;
  const requested = [...events].reverse().find((e) => e.approvalRequested)?.approvalRequested?.approval;
  const tripped = [...events].reverse().find((e) => e.budgetExceeded)?.budgetExceeded;
  return {
    sessionId: last.sessionId || sessionId,
    ran: true,
    finishReason: finishReasonName(done.finishReason),
    status: statusName(done.status),
    finalText: done.finalText,
    stepIndex: done.stepIndex,
    usage: { ...usage0, ...done.usage },
    approvalId: done.approvalId,
    approval: done.approvalId && requested?.approvalId === done.approvalId ? requested : undefined,
    messageCount: done.messageCount,
    runId: last.runId,
    events,
    attempts,
    ...(tripped ? { budgetExceeded: tripped } : {}),
    retries: providerRetries(events),
    fallbacks: providerFallbacks(events),
    output: done.outputJson ? (JSON.parse(done.outputJson) as unknown) : undefined,
    outputJson: done.outputJson,
    outputErrors: [...done.outputErrors],
    reasoning: events.map((e) => e.reasoningDelta?.text ?? "").join(""),
  };
}

// ---- streams ---------------------------------------------------------------------------

type EventStream = ClientReadableStream<{ event?: Event | undefined }>;
type Submit = (sessionId: string, toolCallId: string, outcome: ToolOutcome) => Promise<unknown>;

/**
 * One run's event stream: `for await (const event of run)` and/or `await run.result()`.
 *
 * The RPC starts on first iteration (or result()). Every tool.call event is answered while
 * the stream is read: its handler runs at once (calls handed out together run
 * concurrently) and the result goes back with SubmitToolResult. Breaking out of the loop
 * (or close()) cancels the stream, which the daemon treats like a crashed caller: the run
 * stops at the next step boundary and can be resumed.
 *
 * `requestId` is the call's idempotency key, the same on every attempt: a stream that fails
 * with UNAVAILABLE (or a transport failure before its first event) is sent again after a
 * backoff (or the failure's retry_after_s, when longer), as the client's retry policy says,
 * once the channel is READY again (the retry waits for it at most maxBackoffMs), and the
 * daemon applies the request once: the retry resumes the run or replays it. Events already
 * delivered are not delivered again, replayed tool.calls are not answered, and a call's
 * tool runs once per run object (a call asked again after a retry gets the result already
 * computed). The policy's maxAttempts bounds the attempts in a row that deliver no new
 * model.turn or tool.result; then the last failure is thrown, typed (a
 * ProviderRejectedError at once: it is never retried). `attempts` counts the streams opened.
 */
export class Run implements AsyncIterable<Event> {
  /** The run's session; for a resolve run "" until the first event names it. */
  sessionId: string;
  /** The events received so far. */
  readonly events: Event[] = [];
  /** Streams opened so far (1 unless the client retried). */
  attempts = 0;
  private call?: EventStream;
  private seen = 0; // the highest seq delivered: a retry skips what came before
  private readonly outcomes = new Map<string, Promise<ToolOutcome>>();
  private readonly pending = new Set<Promise<void>>();
  private failure?: unknown;
  private finished?: RunResult;
  private closed = false;
  private wake?: () => void;
  private readonly stream: AsyncGenerator<Event, void, undefined>;

  constructor(
    sessionId: string,
    /** The call's idempotency key, sent unchanged on every attempt. */
    readonly requestId: string,
    private readonly start: (run: Run) => EventStream,
    private readonly submit: Submit,
    private readonly tools: Tools,
    private readonly emptyMeansFinished: boolean,
    private readonly retry: RetryPolicy = NO_RETRY,
    /** Settles when the channel is READY (connecting it) or at the deadline, whichever is first. */
    private readonly ready?: (deadline: Date) => Promise<void>,
    private readonly reconcilers: Reconcilers = {},
  ) {
    this.sessionId = sessionId;
    this.stream = this.read();
  }

  [Symbol.asyncIterator](): AsyncGenerator<Event, void, undefined> {
    return this.stream;
  }

  /** Reads what is left of the stream (answering tool calls) and returns the result. */
  async result(): Promise<RunResult> {
    for await (const _ of this.stream) {
      // every event is kept in this.events
    }
    if (!this.finished) throw new Error("the run has no result: it failed or was closed");
    return this.finished;
  }

  /** Stops reading: cancels the stream (and any retry waiting for its backoff). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    this.call?.cancel();
    this.wake?.();
    await this.stream.return(undefined);
  }

  private async *read(): AsyncGenerator<Event, void, undefined> {
    let fruitless = 0; // attempts in a row that made no progress (no new model.turn or tool.result)
    const refusals: Refusals = { count: 0, since: 0 }; // attempts the daemon's admission refused
    for (;;) {
      this.attempts += 1;
      fruitless += 1;
      let got = 0;
      let failed = false;
      let failure: unknown;
      let ended = false;
      const call = (this.call = this.start(this));
      try {
        for await (const response of call as AsyncIterable<{ event?: Event }>) {
          got += 1;
          const event = response.event;
          if (!event) continue;
          if (event.seq > 0 && event.seq <= this.seen) continue; // delivered by an earlier attempt
          this.seen = Math.max(this.seen, event.seq);
          if (isProgress(event)) fruitless = 0; // the run got further: the count starts again
          this.events.push(event);
          if (!this.sessionId) this.sessionId = event.sessionId; // a resolve run learns its session here
          // A replayed tool.call already has its result: it is history, not a request.
          // A daemon tool's call (an MCP tool) is the daemon's to run, never the app's.
          if (event.type === "tool.call" && event.toolCall?.call && !event.replayed && !isDaemonCall(event)) this.spawn(event);
          // A call handed out before whose fate the daemon asks about (R77).
          if (event.type === "tool.reconcile" && event.toolReconcile?.call && !event.replayed) this.spawn(event);
          yield event;
        }
        ended = true;
      } catch (error) {
        ended = true;
        failed = true;
        failure = error;
      } finally {
        if (!ended) call.cancel(); // the caller stopped reading
      }
      if (this.failure !== undefined) throw this.failure;
      if (!failed) break;
      const error = fromServiceError(failure);
      const row = Math.max(1, fruitless);
      if (this.closed) throw error;
      let waitMs: number | undefined;
      if (refusedByAdmission(error, got)) {
        // Refused before it started: come back when told, not counted in the row.
        waitMs = this.retry.overloadWaitMs(error, refusals);
        fruitless -= 1;
      } else if (this.retry.shouldRetry(error, row, got)) {
        waitMs = this.retry.waitMs(error, row); // backoff, or retry_after_s when longer
      }
      if (waitMs === undefined) throw error;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
      if (this.closed) throw error;
      // A channel in TRANSIENT_FAILURE fails every call at once until its reconnect backoff
      // ends: the next attempt waits for it to be READY (at most maxBackoffMs), so that it is
      // not burnt while the daemon is already back.
      if (this.ready) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          void this.ready!(new Date(Date.now() + this.retry.maxBackoffMs)).then(resolve);
        });
        this.wake = undefined;
        if (this.closed) throw error;
      }
    }
    await Promise.all(this.pending);
    if (this.failure !== undefined) throw this.failure;
    this.finished = buildResult(this.sessionId, this.events, this.emptyMeansFinished, this.attempts);
  }

  private spawn(event: Event): void {
    let callId: string;
    let answer: Promise<ToolOutcome>;
    if (event.type === "tool.reconcile") {
      callId = event.toolReconcile!.call!.id;
      const ran = this.outcomes.get(callId);
      // The tool ran in this run object: that is the call's result, DONE.
      answer = ran
        ? ran.then((o) => ({ ...o, reconcile: ReconcileOutcome.RECONCILE_OUTCOME_DONE }))
        : reconcileCall(this.reconcilers, this.sessionId, event);
    } else {
      callId = event.toolCall!.call!.id;
      let outcome = this.outcomes.get(callId);
      if (!outcome) {
        // The tool runs once; a call asked again (after a retry) gets the same result.
        outcome = runTool(this.tools, this.sessionId, event);
        this.outcomes.set(callId, outcome);
      }
      answer = outcome;
    }
    const task = (async () => {
      const result = await answer;
      try {
        await this.submit(event.sessionId || this.sessionId, callId, result);
      } catch (error) {
        // The daemon went away with the run: the stream fails too, and its retry asks for
        // this call again. Without retries this is the run's failure.
        const gone = error instanceof UnavailableError || error instanceof ToolCallNotPendingError;
        if (!gone || this.retry.maxAttempts === 1) throw error;
      }
    })().catch((error: unknown) => {
      // The run would wait for this result until its timeout: fail fast instead.
      if (this.failure === undefined) {
        this.failure = error;
        this.call?.cancel();
      }
    });
    this.pending.add(task);
    void task.finally(() => this.pending.delete(task));
  }
}

/**
 * One Watch stream: `for await (const event of watch)`. It ends when the session's current
 * run ends; with follow it goes on across runs until close(). lastSeq is where to resume.
 */
export class Watch implements AsyncIterable<Event> {
  lastSeq: number;
  private call?: EventStream;
  private closed = false;

  constructor(readonly sessionId: string, afterSeq: number, private readonly start: () => EventStream) {
    this.lastSeq = afterSeq;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Event, void, undefined> {
    const call = (this.call = this.start());
    try {
      for await (const response of call as AsyncIterable<{ event?: Event }>) {
        if (!response.event) continue;
        this.lastSeq = Math.max(this.lastSeq, response.event.seq);
        yield response.event;
      }
    } catch (error) {
      if (this.closed) return;
      throw fromServiceError(error);
    } finally {
      call.cancel();
    }
  }

  /** Stops watching (also from another task: the loop then just ends). Idempotent. */
  close(): void {
    this.closed = true;
    this.call?.cancel();
  }
}

// ---- the client ------------------------------------------------------------------------

export interface ClientOptions {
  /** Default: insecure (plaintext), as the daemon listens on localhost. */
  credentials?: ChannelCredentials;
  /** Sent with every call, e.g. {authorization: "Bearer …"}. */
  metadata?: Record<string, string>;
  /**
   * How runs (execute, resume, resolve) retry a stream the daemon or the network broke (see
   * Run): a RetryPolicy or its options; `new RetryPolicy()` by default; false, null or
   * NO_RETRY for one attempt only.
   */
  retry?: RetryPolicy | RetryOptions | false | null;
  /** More grpc-js client options (channel options, interceptors), over the client's own. */
  grpcOptions?: Partial<GrpcClientOptions>;
}

export interface ExecuteOptions {
  agent?: Agent;
  tools?: Tools;
  /** Tool name → reconcile function (R77); the tools named get `reconcile` set in the agent sent. */
  reconcile?: Reconcilers;
  /** Any JSON value; left out, the stored one is kept; null is JSON null. */
  businessState?: unknown;
  /** The call's idempotency key (a new UUIDv7 when left out), the same on every retry. */
  requestId?: string;
  historyLimit?: number;
  /**
   * What to do when the session is busy (docs/reference/rules.md R68): "reject" (the default:
   * SessionBusyError), "enqueue" (the input waits in the session's queue, then runs; the
   * first event is input.queued), "interrupt" (the current run is aborted, the input runs
   * next) or "rollback" (as interrupt, after the session went back to its checkpoint from
   * before the aborted run).
   */
  ifBusy?: IfBusyName;
  /** Milliseconds the daemon keeps the session once finished (0: forever). */
  retentionMs?: number;
}

export type IfBusyName = "reject" | "enqueue" | "interrupt" | "rollback";
const IF_BUSY: Record<IfBusyName, IfBusy> = {
  reject: IfBusy.IF_BUSY_REJECT,
  enqueue: IfBusy.IF_BUSY_ENQUEUE,
  interrupt: IfBusy.IF_BUSY_INTERRUPT,
  rollback: IfBusy.IF_BUSY_ROLLBACK,
};

/** When a schedule fires and what happens to its fires (see LuoshoClient.createSchedule). */
export interface ScheduleOptions {
  cron?: string;
  timeZone?: string;
  intervalMs?: number;
  overlap?: "skip" | "enqueue" | "allow";
  catchUp?: "latest" | "all" | "none";
  session?: "each_fire" | "one";
}
const OVERLAP: Record<NonNullable<ScheduleOptions["overlap"]>, ScheduleOverlap> = {
  skip: ScheduleOverlap.SCHEDULE_OVERLAP_SKIP,
  enqueue: ScheduleOverlap.SCHEDULE_OVERLAP_ENQUEUE,
  allow: ScheduleOverlap.SCHEDULE_OVERLAP_ALLOW,
};
const CATCH_UP: Record<NonNullable<ScheduleOptions["catchUp"]>, ScheduleCatchUp> = {
  latest: ScheduleCatchUp.SCHEDULE_CATCH_UP_LATEST,
  all: ScheduleCatchUp.SCHEDULE_CATCH_UP_ALL,
  none: ScheduleCatchUp.SCHEDULE_CATCH_UP_NONE,
};
const SCHEDULE_SESSION: Record<NonNullable<ScheduleOptions["session"]>, ScheduleSession> = {
  each_fire: ScheduleSession.SCHEDULE_SESSION_EACH_FIRE,
  one: ScheduleSession.SCHEDULE_SESSION_ONE,
};

export interface ForkOptions {
  newSessionId?: string;
  /** Replace the transcript with these messages. */
  messages?: MessageInput[];
  businessState?: unknown;
  toolResult?: { toolCallId: string; result: unknown; isError?: boolean };
  appendInput?: string;
}

/** The client of a luoshod daemon. `target` is "host:port" or "unix:/path/to.sock". */
export class LuoshoClient {
  readonly stub: AgentServiceClient;
  /** How runs retry (NO_RETRY when retries are off). */
  readonly retry: RetryPolicy;
  private readonly metadata: Metadata;

  constructor(target: string, options: ClientOptions = {}) {
    const retry = options.retry === undefined ? new RetryPolicy() : options.retry || NO_RETRY;
    this.retry = retry instanceof RetryPolicy ? retry : new RetryPolicy(retry);
    this.stub = new AgentServiceClient(target, options.credentials ?? credentials.createInsecure(), {
      ...channelOptions(this.retry),
      ...options.grpcOptions,
    });
    this.metadata = new Metadata();
    for (const [key, value] of Object.entries(options.metadata ?? {})) this.metadata.set(key, value);
  }

  /** Closes the channel. */
  close(): void {
    (this.stub as Client).close();
  }

  /** Start, continue or resume the run of sessionId (the Execute RPC). */
  execute(sessionId: string, input: InputLike, options: ExecuteOptions = {}): Run {
    const request = ExecuteRequest.fromPartial({
      sessionId,
      input: messages(input),
      agent: agentSpecFor(options.agent, options.reconcile),
      businessStateJson: "businessState" in options ? JSON.stringify(options.businessState ?? null) : undefined,
      requestId: options.requestId || newRequestId(),
      historyLimit: options.historyLimit,
      ifBusy: ifBusyValue(options.ifBusy),
      retentionMs: options.retentionMs,
    });
    return this.run(sessionId, request.requestId, () => this.stub.execute(request, this.metadata), options.tools, false, options.reconcile);
  }

  /**
   * Finish an interrupted run (the Resume RPC); no agent means the saved one. `wake` wakes a
   * sleeping session now (R86); without it, a sleeping session is a SessionSleepingError,
   * and with it a session that is not sleeping a NotSleepingError.
   */
  resume(sessionId: string, options: { agent?: Agent; tools?: Tools; reconcile?: Reconcilers; requestId?: string; wake?: boolean } = {}): Run {
    const request = ResumeRequest.fromPartial({
      sessionId,
      agent: agentSpecFor(options.agent, options.reconcile),
      requestId: options.requestId || newRequestId(),
      wake: options.wake ?? false,
    });
    return this.run(sessionId, request.requestId, () => this.stub.resume(request, this.metadata), options.tools, true, options.reconcile);
  }

  /**
   * Decide a pending approval and continue its run (the Resolve RPC). `sessionId` (the
   * approval's session) lets a retry be recognised even when the first attempt's stream
   * broke before its first event, after the approval was claimed. `answer` answers a
   * question (an approval of kind QUESTION, R88): it becomes the call's result.
   */
  resolve(approvalId: string, approved: boolean, options: { note?: string; answer?: string; agent?: Agent; tools?: Tools; reconcile?: Reconcilers; requestId?: string; sessionId?: string } = {}): Run {
    const request = ResolveRequest.fromPartial({
      approvalId,
      approved,
      answer: options.answer ?? "",
      note: options.note ?? "",
      agent: agentSpecFor(options.agent, options.reconcile),
      requestId: options.requestId || newRequestId(),
      sessionId: options.sessionId ?? "",
    });
    return this.run(options.sessionId ?? "", request.requestId, (run) => {
      if (!request.sessionId && run.sessionId) request.sessionId = run.sessionId; // learnt from an earlier attempt's events
      return this.stub.resolve(request, this.metadata);
    }, options.tools, false, options.reconcile);
  }

  /** The session's events with seq > afterSeq, then live ones (see Watch). */
  watch(sessionId: string, afterSeq = 0, options: { follow?: boolean } = {}): Watch {
    const request = WatchRequest.fromPartial({ sessionId, afterSeq, follow: options.follow ?? false });
    return new Watch(sessionId, afterSeq, () => this.stub.watch(request, this.metadata));
  }

  /** Answer a tool call by hand; result is JSON-encoded. "accepted" or "duplicate". */
  async submitToolResult(sessionId: string, toolCallId: string, result: unknown, options: { isError?: boolean } = {}): Promise<"accepted" | "duplicate" | ""> {
    const json = JSON.stringify(result);
    return this.submitOutcome(sessionId, toolCallId, { resultJson: json === undefined ? "null" : json, isError: options.isError ?? false });
  }

  /** Abort the session's running run; false when none was active in this daemon. */
  async cancel(sessionId: string): Promise<boolean> {
    return (await this.unary<CancelResponse>((cb) => this.stub.cancel(CancelRequest.fromPartial({ sessionId }), this.metadata, cb))).cancelled;
  }

  /** The inputs queued on the session (ifBusy), in the order they will run. */
  async queue(sessionId: string): Promise<QueuedInput[]> {
    return (await this.unary<GetSessionResponse>((cb) => this.stub.getSession(GetSessionRequest.fromPartial({ sessionId }), this.metadata, cb))).queue;
  }

  /** Remove a queued input; false when the session queues none of that request id. */
  async dequeueInput(sessionId: string, requestId: string): Promise<boolean> {
    return (await this.unary<DequeueInputResponse>((cb) => this.stub.dequeueInput(DequeueInputRequest.fromPartial({ sessionId, requestId }), this.metadata, cb))).removed;
  }

  /** The session's latest checkpoint. */
  async getSession(sessionId: string): Promise<Checkpoint> {
    return (await this.unary<GetSessionResponse>((cb) => this.stub.getSession(GetSessionRequest.fromPartial({ sessionId }), this.metadata, cb))).checkpoint!;
  }

  /** Every session (optionally of one status), following the pages. */
  async *listSessions(status?: Exclude<StatusName, "">, pageSize = 100): AsyncGenerator<SessionSummary> {
    const st = status ? STATUS_VALUES[status] : CheckpointStatus.CHECKPOINT_STATUS_UNSPECIFIED;
    let pageToken = "";
    do {
      const page = await this.unary<ListSessionsResponse>((cb) => this.stub.listSessions(ListSessionsRequest.fromPartial({ status: st, pageSize, pageToken }), this.metadata, cb));
      yield* page.sessions;
      pageToken = page.nextPageToken;
    } while (pageToken);
  }

  /** Delete a session's checkpoint; false when there was none. */
  async deleteSession(sessionId: string, options: { keepHistory?: boolean } = {}): Promise<boolean> {
    return (await this.unary<DeleteSessionResponse>((cb) => this.stub.deleteSession(DeleteSessionRequest.fromPartial({ sessionId, keepHistory: options.keepHistory ?? false }), this.metadata, cb))).deleted;
  }

  /** Compact the session's transcript by hand (R85): strategy "prune", "summarize" or
   * "both" (or the enum); the agent's unless given. `compacted` is false when nothing
   * outside the protected tail was left to compact; SessionBusyError while a run holds it. */
  async compact(sessionId: string, options: { strategy?: CompactionStrategyName | CompactionStrategy } = {}): Promise<CompactResponse> {
    return await this.unary<CompactResponse>((cb) => this.stub.compact(CompactRequest.fromPartial({ sessionId, strategy: compactionValue(options.strategy) }), this.metadata, cb));
  }

  // ---- schedules (R87) ----

  /**
   * A new schedule: the daemon runs `agent` with `input` at each fire, by `cron` in
   * `timeZone` (IANA, default UTC) or every `intervalMs` (exactly one of the two). `overlap`
   * "skip" (default), "enqueue" or "allow"; `catchUp` "latest" (default), "all" or "none";
   * `session` "each_fire" (default: schedule:NAME:FIRE) or "one" (schedule:NAME). Throws
   * InvalidArgumentError (INVALID_SCHEDULE, UNKNOWN_TIME_ZONE) or ScheduleExistsError.
   */
  async createSchedule(name: string, agent: Agent, input: InputLike, options: ScheduleOptions): Promise<Schedule> {
    if (Boolean(options.cron) === Boolean(options.intervalMs)) throw new TypeError("a schedule needs either cron or intervalMs");
    const request = CreateScheduleRequest.fromPartial({
      spec: {
        name,
        agent: agentSpec(agent),
        input: messages(input),
        ...(options.cron ? { cron: { expression: options.cron, timeZone: options.timeZone ?? "" } } : { intervalMs: options.intervalMs }),
        overlap: options.overlap === undefined ? ScheduleOverlap.SCHEDULE_OVERLAP_UNSPECIFIED : named(OVERLAP, options.overlap, "overlap"),
        catchUp: options.catchUp === undefined ? ScheduleCatchUp.SCHEDULE_CATCH_UP_UNSPECIFIED : named(CATCH_UP, options.catchUp, "catchUp"),
        session: options.session === undefined ? ScheduleSession.SCHEDULE_SESSION_UNSPECIFIED : named(SCHEDULE_SESSION, options.session, "session"),
      },
    });
    return (await this.unary<CreateScheduleResponse>((cb) => this.stub.createSchedule(request, this.metadata, cb))).schedule!;
  }

  /** Every schedule, ordered by name. */
  async listSchedules(): Promise<Schedule[]> {
    return (await this.unary<ListSchedulesResponse>((cb) => this.stub.listSchedules(ListSchedulesRequest.fromPartial({}), this.metadata, cb))).schedules;
  }

  /** The schedule of that name; ScheduleNotFoundError when there is none. */
  async getSchedule(name: string): Promise<Schedule> {
    const found = (await this.listSchedules()).find((s) => s.spec?.name === name);
    if (!found) throw new ScheduleNotFoundError(Status.NOT_FOUND, "SCHEDULE_NOT_FOUND", `no schedule is named ${JSON.stringify(name)}`, { schedule: name });
    return found;
  }

  /** Stop the schedule's fires until resumeSchedule (fires due meanwhile do not run). */
  async pauseSchedule(name: string): Promise<Schedule> {
    return (await this.unary<PauseScheduleResponse>((cb) => this.stub.pauseSchedule(PauseScheduleRequest.fromPartial({ name }), this.metadata, cb))).schedule!;
  }

  /** Let a paused schedule fire again, from its next time after now. */
  async resumeSchedule(name: string): Promise<Schedule> {
    return (await this.unary<ResumeScheduleResponse>((cb) => this.stub.resumeSchedule(ResumeScheduleRequest.fromPartial({ name }), this.metadata, cb))).schedule!;
  }

  /** Delete the schedule (the runs it started go on); ScheduleNotFoundError if none. */
  async deleteSchedule(name: string): Promise<void> {
    await this.unary<unknown>((cb) => this.stub.deleteSchedule(DeleteScheduleRequest.fromPartial({ name }), this.metadata, cb));
  }

  /** Fire the schedule once now: the fire's session and request id (follow it with watch). */
  async triggerSchedule(name: string): Promise<TriggerScheduleResponse> {
    return await this.unary<TriggerScheduleResponse>((cb) => this.stub.triggerSchedule(TriggerScheduleRequest.fromPartial({ name }), this.metadata, cb));
  }

  /** Pending approvals (of one session, or all), oldest first, every page. */
  async *listApprovals(sessionId = "", pageSize = 100): AsyncGenerator<Approval> {
    let pageToken = "";
    do {
      const page = await this.unary<ListApprovalsResponse>((cb) => this.stub.listApprovals(ListApprovalsRequest.fromPartial({ sessionId, pageSize, pageToken }), this.metadata, cb));
      yield* page.approvals;
      pageToken = page.nextPageToken;
    } while (pageToken);
  }

  /** The session's saved checkpoints, newest first, every page. */
  async *history(sessionId: string, options: { includeCheckpoint?: boolean; pageSize?: number } = {}): AsyncGenerator<HistoryEntry> {
    let pageToken = "";
    do {
      const request = HistoryRequest.fromPartial({
        sessionId,
        includeCheckpoint: options.includeCheckpoint ?? false,
        pageSize: options.pageSize ?? 50,
        pageToken,
      });
      const page = await this.unary<HistoryResponse>((cb) => this.stub.history(request, this.metadata, cb));
      yield* page.entries;
      pageToken = page.nextPageToken;
    } while (pageToken);
  }

  /** A new in-progress session from step fromStep of another's history, with a patch. */
  async fork(sessionId: string, fromStep: number, options: ForkOptions = {}): Promise<ForkResponse> {
    const request = ForkRequest.fromPartial({
      sessionId,
      fromStep,
      newSessionId: options.newSessionId ?? "",
      patch: {
        replaceMessages: options.messages !== undefined,
        messages: messages(options.messages ?? []),
        businessStateJson: "businessState" in options ? JSON.stringify(options.businessState ?? null) : undefined,
        toolResult: options.toolResult
          ? { toolCallId: options.toolResult.toolCallId, resultJson: JSON.stringify(options.toolResult.result ?? null), isError: options.toolResult.isError ?? false }
          : undefined,
        appendInput: options.appendInput ?? "",
      },
    });
    return this.unary<ForkResponse>((cb) => this.stub.fork(request, this.metadata, cb));
  }

  /** Two sessions' trajectories side by side. */
  async compare(sessionIdA: string, sessionIdB: string): Promise<CompareResponse> {
    return this.unary<CompareResponse>((cb) => this.stub.compare(CompareRequest.fromPartial({ sessionIdA, sessionIdB }), this.metadata, cb));
  }

  private run(sessionId: string, requestId: string, start: (run: Run) => EventStream, tools: Tools | undefined, emptyMeansFinished: boolean, reconcile?: Reconcilers): Run {
    return new Run(sessionId, requestId, start, (s, id, outcome) => this.submitOutcome(s, id, outcome), tools ?? {}, emptyMeansFinished, this.retry,
      (deadline) => new Promise<void>((resolve) => (this.stub as Client).waitForReady(deadline, () => resolve())), reconcile ?? {});
  }

  private async submitOutcome(sessionId: string, toolCallId: string, outcome: ToolOutcome): Promise<"accepted" | "duplicate" | ""> {
    const response = await this.unary<SubmitToolResultResponse>((cb) => this.stub.submitToolResult(SubmitToolResultRequest.fromPartial({ sessionId, toolCallId, ...outcome }), this.metadata, cb));
    return response.outcome === SubmitOutcome.SUBMIT_OUTCOME_ACCEPTED ? "accepted" : response.outcome === SubmitOutcome.SUBMIT_OUTCOME_DUPLICATE ? "duplicate" : "";
  }

  private unary<Res>(invoke: (callback: (error: ServiceError | null, response: Res) => void) => unknown): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      invoke((error, response) => {
        if (error) reject(fromServiceError(error));
        else resolve(response);
      });
    });
  }
}

function ifBusyValue(name: IfBusyName | undefined): IfBusy {
  if (name === undefined) return IfBusy.IF_BUSY_UNSPECIFIED;
  const value = IF_BUSY[name];
  if (value === undefined) throw new TypeError(`ifBusy must be one of ${Object.keys(IF_BUSY).join(", ")}, got ${JSON.stringify(name)}`);
  return value;
}
