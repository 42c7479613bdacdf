// @luosho/client: the TypeScript client of luoshod (durable AI-agent runs over gRPC).
export * from "./client.js";
export * from "./errors.js";
export * from "./retry.js";
export * as pb from "./gen/luosho/v1/agent.js";
export type { Event, Message, Checkpoint, Approval, BudgetExceeded, HistoryEntry, SessionSummary, ForkResponse, CompareResponse, ToolCall, Usage, Schedule, TriggerScheduleResponse, CompactResponse } from "./gen/luosho/v1/agent.js";
