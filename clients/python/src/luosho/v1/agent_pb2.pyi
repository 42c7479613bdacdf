import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    ERROR_REASON_INTERNAL: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_ARGUMENT: _ClassVar[ErrorReason]
    ERROR_REASON_PAYLOAD_TOO_LARGE: _ClassVar[ErrorReason]
    ERROR_REASON_CHECKPOINT_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_APPROVAL_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_SESSION_EXISTS: _ClassVar[ErrorReason]
    ERROR_REASON_EVENTS_OUT_OF_RANGE: _ClassVar[ErrorReason]
    ERROR_REASON_TOOL_CALL_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_TOOL_CALL_NOT_PENDING: _ClassVar[ErrorReason]
    ERROR_REASON_SESSION_AWAITING_APPROVAL: _ClassVar[ErrorReason]
    ERROR_REASON_AGENT_DRIFT: _ClassVar[ErrorReason]
    ERROR_REASON_RESUME_TOOL_MISSING: _ClassVar[ErrorReason]
    ERROR_REASON_SESSION_BUSY: _ClassVar[ErrorReason]
    ERROR_REASON_LEASE_LOST: _ClassVar[ErrorReason]
    ERROR_REASON_PROVIDER_ERROR: _ClassVar[ErrorReason]
    ERROR_REASON_PROVIDER_REJECTED: _ClassVar[ErrorReason]
    ERROR_REASON_SHUTTING_DOWN: _ClassVar[ErrorReason]
    ERROR_REASON_TOO_MANY_RUNS: _ClassVar[ErrorReason]
    ERROR_REASON_DAEMON_OVERLOADED: _ClassVar[ErrorReason]
    ERROR_REASON_UNAUTHENTICATED: _ClassVar[ErrorReason]
    ERROR_REASON_STORE_UNAVAILABLE: _ClassVar[ErrorReason]
    ERROR_REASON_STORE_FULL: _ClassVar[ErrorReason]
    ERROR_REASON_INPUT_DEQUEUED: _ClassVar[ErrorReason]
    ERROR_REASON_REQUEST_ID_REUSED: _ClassVar[ErrorReason]
    ERROR_REASON_TOKEN_REQUIRED: _ClassVar[ErrorReason]
    ERROR_REASON_TOKEN_INVALID: _ClassVar[ErrorReason]
    ERROR_REASON_ROLE_NOT_ALLOWED: _ClassVar[ErrorReason]
    ERROR_REASON_AGENT_REQUIRED: _ClassVar[ErrorReason]
    ERROR_REASON_DUPLICATE_SUBAGENT_NAME: _ClassVar[ErrorReason]
    ERROR_REASON_DUPLICATE_TOOL_NAME: _ClassVar[ErrorReason]
    ERROR_REASON_IF_BUSY_UNSUPPORTED: _ClassVar[ErrorReason]
    ERROR_REASON_INPUT_REQUIRED: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_APPROVAL_ID: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_APPROVAL_TIMEOUT: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_DRIFT_POLICY: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_HISTORY_LIMIT: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_ID: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_IF_BUSY: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_JSON: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_MAX_STEPS: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_MCP_SERVERS: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_MESSAGE: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_MODEL: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_MODEL_SETTINGS: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_PAGE_SIZE: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_PAGE_TOKEN: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_REQUEST_ID: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_SCRIPT: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_SESSION_ID: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_STATUS: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_SUBAGENT: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_SUBAGENT_NAME: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_TOOL_CALL_ID: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_TOOL_CONCURRENCY: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_TOOL_NAME: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_TOOL_SCHEMA: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_TOOL_TIMEOUT: _ClassVar[ErrorReason]
    ERROR_REASON_MODEL_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_SUBAGENT_DEPTH_OVER_LIMIT: _ClassVar[ErrorReason]
    ERROR_REASON_SUBAGENT_DESCRIPTION_REQUIRED: _ClassVar[ErrorReason]
    ERROR_REASON_SUBAGENT_DESCRIPTION_TOO_LONG: _ClassVar[ErrorReason]
    ERROR_REASON_SUBAGENT_SPEC_TOO_LARGE: _ClassVar[ErrorReason]
    ERROR_REASON_SUBAGENT_TASK_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_TASK_TOOL_CLASH: _ClassVar[ErrorReason]
    ERROR_REASON_TOOL_RESULT_OUT_OF_ORDER: _ClassVar[ErrorReason]
    ERROR_REASON_TOO_MANY_SUBAGENTS: _ClassVar[ErrorReason]
    ERROR_REASON_UNKNOWN_MCP_SERVER: _ClassVar[ErrorReason]
    ERROR_REASON_UNKNOWN_PROVIDER: _ClassVar[ErrorReason]
    ERROR_REASON_UNKNOWN_TOOL_CALL: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_RETENTION: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_REQUEST: _ClassVar[ErrorReason]
    ERROR_REASON_UNSUPPORTED_MEDIA_TYPE: _ClassVar[ErrorReason]
    ERROR_REASON_NO_SUCH_ROUTE: _ClassVar[ErrorReason]
    ERROR_REASON_METHOD_NOT_ALLOWED: _ClassVar[ErrorReason]
    ERROR_REASON_HOST_NOT_ALLOWED: _ClassVar[ErrorReason]
    ERROR_REASON_CSRF_ORIGIN_MISMATCH: _ClassVar[ErrorReason]
    ERROR_REASON_CSRF_TOKEN_INVALID: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_LAST_EVENT_ID: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_KEEP_HISTORY: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_INCLUDE_CHECKPOINT: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_AFTER_SEQ: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_FOLLOW: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_NEWEST_FIRST: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_INCLUDE_TOTAL_SIZE: _ClassVar[ErrorReason]
    ERROR_REASON_RECONCILE_NOT_ASKED: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_RECONCILE_OUTCOME: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_LIMITS: _ClassVar[ErrorReason]
    ERROR_REASON_COST_LIMIT_WITHOUT_PRICE: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_COSTLIEST_FIRST: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_OUTPUT_SCHEMA: _ClassVar[ErrorReason]
    ERROR_REASON_ANSWER_REQUIRED: _ClassVar[ErrorReason]
    ERROR_REASON_ANSWER_NOT_ALLOWED: _ClassVar[ErrorReason]
    ERROR_REASON_SESSION_SLEEPING: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_SLEEPING: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_SLEEP_TOOL: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_FALLBACK_MODELS: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_REASONING: _ClassVar[ErrorReason]
    ERROR_REASON_CONTEXT_WINDOW_UNKNOWN: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_COMPACTION: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_SCHEDULE: _ClassVar[ErrorReason]
    ERROR_REASON_UNKNOWN_TIME_ZONE: _ClassVar[ErrorReason]
    ERROR_REASON_SCHEDULE_EXISTS: _ClassVar[ErrorReason]
    ERROR_REASON_SCHEDULE_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_SCHEDULES_UNSUPPORTED: _ClassVar[ErrorReason]
    ERROR_REASON_HOLDER_UNREACHABLE: _ClassVar[ErrorReason]

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROLE_UNSPECIFIED: _ClassVar[Role]
    ROLE_SYSTEM: _ClassVar[Role]
    ROLE_USER: _ClassVar[Role]
    ROLE_ASSISTANT: _ClassVar[Role]
    ROLE_TOOL: _ClassVar[Role]

class AgentDriftPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AGENT_DRIFT_POLICY_UNSPECIFIED: _ClassVar[AgentDriftPolicy]
    AGENT_DRIFT_POLICY_WARN: _ClassVar[AgentDriftPolicy]
    AGENT_DRIFT_POLICY_ERROR: _ClassVar[AgentDriftPolicy]
    AGENT_DRIFT_POLICY_IGNORE: _ClassVar[AgentDriftPolicy]

class CheckpointStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHECKPOINT_STATUS_UNSPECIFIED: _ClassVar[CheckpointStatus]
    CHECKPOINT_STATUS_IN_PROGRESS: _ClassVar[CheckpointStatus]
    CHECKPOINT_STATUS_AWAITING_APPROVAL: _ClassVar[CheckpointStatus]
    CHECKPOINT_STATUS_FINISHED: _ClassVar[CheckpointStatus]
    CHECKPOINT_STATUS_SLEEPING: _ClassVar[CheckpointStatus]

class FinishReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FINISH_REASON_UNSPECIFIED: _ClassVar[FinishReason]
    FINISH_REASON_STOP: _ClassVar[FinishReason]
    FINISH_REASON_MAX_STEPS: _ClassVar[FinishReason]
    FINISH_REASON_ABORTED: _ClassVar[FinishReason]
    FINISH_REASON_AWAITING_APPROVAL: _ClassVar[FinishReason]
    FINISH_REASON_BUDGET_EXCEEDED: _ClassVar[FinishReason]
    FINISH_REASON_DEADLINE_EXCEEDED: _ClassVar[FinishReason]
    FINISH_REASON_OUTPUT_INVALID: _ClassVar[FinishReason]
    FINISH_REASON_SLEEPING: _ClassVar[FinishReason]

class CompactionStrategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMPACTION_STRATEGY_UNSPECIFIED: _ClassVar[CompactionStrategy]
    COMPACTION_STRATEGY_PRUNE: _ClassVar[CompactionStrategy]
    COMPACTION_STRATEGY_SUMMARIZE: _ClassVar[CompactionStrategy]
    COMPACTION_STRATEGY_BOTH: _ClassVar[CompactionStrategy]

class McpRetryOn(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MCP_RETRY_ON_UNSPECIFIED: _ClassVar[McpRetryOn]
    MCP_RETRY_ON_TIMEOUT: _ClassVar[McpRetryOn]
    MCP_RETRY_ON_UNAVAILABLE: _ClassVar[McpRetryOn]
    MCP_RETRY_ON_TOOL_ERROR: _ClassVar[McpRetryOn]

class McpApproval(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MCP_APPROVAL_UNSPECIFIED: _ClassVar[McpApproval]
    MCP_APPROVAL_GATE: _ClassVar[McpApproval]
    MCP_APPROVAL_UNGATE: _ClassVar[McpApproval]

class ApprovalKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    APPROVAL_KIND_UNSPECIFIED: _ClassVar[ApprovalKind]
    APPROVAL_KIND_APPROVAL: _ClassVar[ApprovalKind]
    APPROVAL_KIND_QUESTION: _ClassVar[ApprovalKind]

class RunMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_MODE_UNSPECIFIED: _ClassVar[RunMode]
    RUN_MODE_NEW: _ClassVar[RunMode]
    RUN_MODE_CONTINUE: _ClassVar[RunMode]
    RUN_MODE_RESUME: _ClassVar[RunMode]

class ReconcileOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECONCILE_OUTCOME_UNSPECIFIED: _ClassVar[ReconcileOutcome]
    RECONCILE_OUTCOME_DONE: _ClassVar[ReconcileOutcome]
    RECONCILE_OUTCOME_NOT_STARTED: _ClassVar[ReconcileOutcome]
    RECONCILE_OUTCOME_UNKNOWN: _ClassVar[ReconcileOutcome]

class ToolExecutor(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOOL_EXECUTOR_UNSPECIFIED: _ClassVar[ToolExecutor]
    TOOL_EXECUTOR_CLIENT: _ClassVar[ToolExecutor]
    TOOL_EXECUTOR_DAEMON: _ClassVar[ToolExecutor]

class IfBusy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    IF_BUSY_UNSPECIFIED: _ClassVar[IfBusy]
    IF_BUSY_REJECT: _ClassVar[IfBusy]
    IF_BUSY_ENQUEUE: _ClassVar[IfBusy]
    IF_BUSY_INTERRUPT: _ClassVar[IfBusy]
    IF_BUSY_ROLLBACK: _ClassVar[IfBusy]

class SubmitOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUBMIT_OUTCOME_UNSPECIFIED: _ClassVar[SubmitOutcome]
    SUBMIT_OUTCOME_ACCEPTED: _ClassVar[SubmitOutcome]
    SUBMIT_OUTCOME_DUPLICATE: _ClassVar[SubmitOutcome]

class McpTransport(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MCP_TRANSPORT_UNSPECIFIED: _ClassVar[McpTransport]
    MCP_TRANSPORT_STDIO: _ClassVar[McpTransport]
    MCP_TRANSPORT_HTTP: _ClassVar[McpTransport]

class McpServerState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MCP_SERVER_STATE_UNSPECIFIED: _ClassVar[McpServerState]
    MCP_SERVER_STATE_NOT_STARTED: _ClassVar[McpServerState]
    MCP_SERVER_STATE_RUNNING: _ClassVar[McpServerState]
    MCP_SERVER_STATE_DOWN: _ClassVar[McpServerState]

class ScheduleOverlap(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCHEDULE_OVERLAP_UNSPECIFIED: _ClassVar[ScheduleOverlap]
    SCHEDULE_OVERLAP_SKIP: _ClassVar[ScheduleOverlap]
    SCHEDULE_OVERLAP_ENQUEUE: _ClassVar[ScheduleOverlap]
    SCHEDULE_OVERLAP_ALLOW: _ClassVar[ScheduleOverlap]

class ScheduleCatchUp(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCHEDULE_CATCH_UP_UNSPECIFIED: _ClassVar[ScheduleCatchUp]
    SCHEDULE_CATCH_UP_LATEST: _ClassVar[ScheduleCatchUp]
    SCHEDULE_CATCH_UP_ALL: _ClassVar[ScheduleCatchUp]
    SCHEDULE_CATCH_UP_NONE: _ClassVar[ScheduleCatchUp]

class ScheduleSession(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCHEDULE_SESSION_UNSPECIFIED: _ClassVar[ScheduleSession]
    SCHEDULE_SESSION_EACH_FIRE: _ClassVar[ScheduleSession]
    SCHEDULE_SESSION_ONE: _ClassVar[ScheduleSession]
ERROR_REASON_UNSPECIFIED: ErrorReason
ERROR_REASON_INTERNAL: ErrorReason
ERROR_REASON_INVALID_ARGUMENT: ErrorReason
ERROR_REASON_PAYLOAD_TOO_LARGE: ErrorReason
ERROR_REASON_CHECKPOINT_NOT_FOUND: ErrorReason
ERROR_REASON_APPROVAL_NOT_FOUND: ErrorReason
ERROR_REASON_SESSION_EXISTS: ErrorReason
ERROR_REASON_EVENTS_OUT_OF_RANGE: ErrorReason
ERROR_REASON_TOOL_CALL_NOT_FOUND: ErrorReason
ERROR_REASON_TOOL_CALL_NOT_PENDING: ErrorReason
ERROR_REASON_SESSION_AWAITING_APPROVAL: ErrorReason
ERROR_REASON_AGENT_DRIFT: ErrorReason
ERROR_REASON_RESUME_TOOL_MISSING: ErrorReason
ERROR_REASON_SESSION_BUSY: ErrorReason
ERROR_REASON_LEASE_LOST: ErrorReason
ERROR_REASON_PROVIDER_ERROR: ErrorReason
ERROR_REASON_PROVIDER_REJECTED: ErrorReason
ERROR_REASON_SHUTTING_DOWN: ErrorReason
ERROR_REASON_TOO_MANY_RUNS: ErrorReason
ERROR_REASON_DAEMON_OVERLOADED: ErrorReason
ERROR_REASON_UNAUTHENTICATED: ErrorReason
ERROR_REASON_STORE_UNAVAILABLE: ErrorReason
ERROR_REASON_STORE_FULL: ErrorReason
ERROR_REASON_INPUT_DEQUEUED: ErrorReason
ERROR_REASON_REQUEST_ID_REUSED: ErrorReason
ERROR_REASON_TOKEN_REQUIRED: ErrorReason
ERROR_REASON_TOKEN_INVALID: ErrorReason
ERROR_REASON_ROLE_NOT_ALLOWED: ErrorReason
ERROR_REASON_AGENT_REQUIRED: ErrorReason
ERROR_REASON_DUPLICATE_SUBAGENT_NAME: ErrorReason
ERROR_REASON_DUPLICATE_TOOL_NAME: ErrorReason
ERROR_REASON_IF_BUSY_UNSUPPORTED: ErrorReason
ERROR_REASON_INPUT_REQUIRED: ErrorReason
ERROR_REASON_INVALID_APPROVAL_ID: ErrorReason
ERROR_REASON_INVALID_APPROVAL_TIMEOUT: ErrorReason
ERROR_REASON_INVALID_DRIFT_POLICY: ErrorReason
ERROR_REASON_INVALID_HISTORY_LIMIT: ErrorReason
ERROR_REASON_INVALID_ID: ErrorReason
ERROR_REASON_INVALID_IF_BUSY: ErrorReason
ERROR_REASON_INVALID_JSON: ErrorReason
ERROR_REASON_INVALID_MAX_STEPS: ErrorReason
ERROR_REASON_INVALID_MCP_SERVERS: ErrorReason
ERROR_REASON_INVALID_MESSAGE: ErrorReason
ERROR_REASON_INVALID_MODEL: ErrorReason
ERROR_REASON_INVALID_MODEL_SETTINGS: ErrorReason
ERROR_REASON_INVALID_PAGE_SIZE: ErrorReason
ERROR_REASON_INVALID_PAGE_TOKEN: ErrorReason
ERROR_REASON_INVALID_REQUEST_ID: ErrorReason
ERROR_REASON_INVALID_SCRIPT: ErrorReason
ERROR_REASON_INVALID_SESSION_ID: ErrorReason
ERROR_REASON_INVALID_STATUS: ErrorReason
ERROR_REASON_INVALID_SUBAGENT: ErrorReason
ERROR_REASON_INVALID_SUBAGENT_NAME: ErrorReason
ERROR_REASON_INVALID_TOOL_CALL_ID: ErrorReason
ERROR_REASON_INVALID_TOOL_CONCURRENCY: ErrorReason
ERROR_REASON_INVALID_TOOL_NAME: ErrorReason
ERROR_REASON_INVALID_TOOL_SCHEMA: ErrorReason
ERROR_REASON_INVALID_TOOL_TIMEOUT: ErrorReason
ERROR_REASON_MODEL_NOT_FOUND: ErrorReason
ERROR_REASON_SUBAGENT_DEPTH_OVER_LIMIT: ErrorReason
ERROR_REASON_SUBAGENT_DESCRIPTION_REQUIRED: ErrorReason
ERROR_REASON_SUBAGENT_DESCRIPTION_TOO_LONG: ErrorReason
ERROR_REASON_SUBAGENT_SPEC_TOO_LARGE: ErrorReason
ERROR_REASON_SUBAGENT_TASK_NOT_FOUND: ErrorReason
ERROR_REASON_TASK_TOOL_CLASH: ErrorReason
ERROR_REASON_TOOL_RESULT_OUT_OF_ORDER: ErrorReason
ERROR_REASON_TOO_MANY_SUBAGENTS: ErrorReason
ERROR_REASON_UNKNOWN_MCP_SERVER: ErrorReason
ERROR_REASON_UNKNOWN_PROVIDER: ErrorReason
ERROR_REASON_UNKNOWN_TOOL_CALL: ErrorReason
ERROR_REASON_INVALID_RETENTION: ErrorReason
ERROR_REASON_INVALID_REQUEST: ErrorReason
ERROR_REASON_UNSUPPORTED_MEDIA_TYPE: ErrorReason
ERROR_REASON_NO_SUCH_ROUTE: ErrorReason
ERROR_REASON_METHOD_NOT_ALLOWED: ErrorReason
ERROR_REASON_HOST_NOT_ALLOWED: ErrorReason
ERROR_REASON_CSRF_ORIGIN_MISMATCH: ErrorReason
ERROR_REASON_CSRF_TOKEN_INVALID: ErrorReason
ERROR_REASON_INVALID_LAST_EVENT_ID: ErrorReason
ERROR_REASON_INVALID_KEEP_HISTORY: ErrorReason
ERROR_REASON_INVALID_INCLUDE_CHECKPOINT: ErrorReason
ERROR_REASON_INVALID_AFTER_SEQ: ErrorReason
ERROR_REASON_INVALID_FOLLOW: ErrorReason
ERROR_REASON_INVALID_NEWEST_FIRST: ErrorReason
ERROR_REASON_INVALID_INCLUDE_TOTAL_SIZE: ErrorReason
ERROR_REASON_RECONCILE_NOT_ASKED: ErrorReason
ERROR_REASON_INVALID_RECONCILE_OUTCOME: ErrorReason
ERROR_REASON_INVALID_LIMITS: ErrorReason
ERROR_REASON_COST_LIMIT_WITHOUT_PRICE: ErrorReason
ERROR_REASON_INVALID_COSTLIEST_FIRST: ErrorReason
ERROR_REASON_INVALID_OUTPUT_SCHEMA: ErrorReason
ERROR_REASON_ANSWER_REQUIRED: ErrorReason
ERROR_REASON_ANSWER_NOT_ALLOWED: ErrorReason
ERROR_REASON_SESSION_SLEEPING: ErrorReason
ERROR_REASON_NOT_SLEEPING: ErrorReason
ERROR_REASON_INVALID_SLEEP_TOOL: ErrorReason
ERROR_REASON_INVALID_FALLBACK_MODELS: ErrorReason
ERROR_REASON_INVALID_REASONING: ErrorReason
ERROR_REASON_CONTEXT_WINDOW_UNKNOWN: ErrorReason
ERROR_REASON_INVALID_COMPACTION: ErrorReason
ERROR_REASON_INVALID_SCHEDULE: ErrorReason
ERROR_REASON_UNKNOWN_TIME_ZONE: ErrorReason
ERROR_REASON_SCHEDULE_EXISTS: ErrorReason
ERROR_REASON_SCHEDULE_NOT_FOUND: ErrorReason
ERROR_REASON_SCHEDULES_UNSUPPORTED: ErrorReason
ERROR_REASON_HOLDER_UNREACHABLE: ErrorReason
ROLE_UNSPECIFIED: Role
ROLE_SYSTEM: Role
ROLE_USER: Role
ROLE_ASSISTANT: Role
ROLE_TOOL: Role
AGENT_DRIFT_POLICY_UNSPECIFIED: AgentDriftPolicy
AGENT_DRIFT_POLICY_WARN: AgentDriftPolicy
AGENT_DRIFT_POLICY_ERROR: AgentDriftPolicy
AGENT_DRIFT_POLICY_IGNORE: AgentDriftPolicy
CHECKPOINT_STATUS_UNSPECIFIED: CheckpointStatus
CHECKPOINT_STATUS_IN_PROGRESS: CheckpointStatus
CHECKPOINT_STATUS_AWAITING_APPROVAL: CheckpointStatus
CHECKPOINT_STATUS_FINISHED: CheckpointStatus
CHECKPOINT_STATUS_SLEEPING: CheckpointStatus
FINISH_REASON_UNSPECIFIED: FinishReason
FINISH_REASON_STOP: FinishReason
FINISH_REASON_MAX_STEPS: FinishReason
FINISH_REASON_ABORTED: FinishReason
FINISH_REASON_AWAITING_APPROVAL: FinishReason
FINISH_REASON_BUDGET_EXCEEDED: FinishReason
FINISH_REASON_DEADLINE_EXCEEDED: FinishReason
FINISH_REASON_OUTPUT_INVALID: FinishReason
FINISH_REASON_SLEEPING: FinishReason
COMPACTION_STRATEGY_UNSPECIFIED: CompactionStrategy
COMPACTION_STRATEGY_PRUNE: CompactionStrategy
COMPACTION_STRATEGY_SUMMARIZE: CompactionStrategy
COMPACTION_STRATEGY_BOTH: CompactionStrategy
MCP_RETRY_ON_UNSPECIFIED: McpRetryOn
MCP_RETRY_ON_TIMEOUT: McpRetryOn
MCP_RETRY_ON_UNAVAILABLE: McpRetryOn
MCP_RETRY_ON_TOOL_ERROR: McpRetryOn
MCP_APPROVAL_UNSPECIFIED: McpApproval
MCP_APPROVAL_GATE: McpApproval
MCP_APPROVAL_UNGATE: McpApproval
APPROVAL_KIND_UNSPECIFIED: ApprovalKind
APPROVAL_KIND_APPROVAL: ApprovalKind
APPROVAL_KIND_QUESTION: ApprovalKind
RUN_MODE_UNSPECIFIED: RunMode
RUN_MODE_NEW: RunMode
RUN_MODE_CONTINUE: RunMode
RUN_MODE_RESUME: RunMode
RECONCILE_OUTCOME_UNSPECIFIED: ReconcileOutcome
RECONCILE_OUTCOME_DONE: ReconcileOutcome
RECONCILE_OUTCOME_NOT_STARTED: ReconcileOutcome
RECONCILE_OUTCOME_UNKNOWN: ReconcileOutcome
TOOL_EXECUTOR_UNSPECIFIED: ToolExecutor
TOOL_EXECUTOR_CLIENT: ToolExecutor
TOOL_EXECUTOR_DAEMON: ToolExecutor
IF_BUSY_UNSPECIFIED: IfBusy
IF_BUSY_REJECT: IfBusy
IF_BUSY_ENQUEUE: IfBusy
IF_BUSY_INTERRUPT: IfBusy
IF_BUSY_ROLLBACK: IfBusy
SUBMIT_OUTCOME_UNSPECIFIED: SubmitOutcome
SUBMIT_OUTCOME_ACCEPTED: SubmitOutcome
SUBMIT_OUTCOME_DUPLICATE: SubmitOutcome
MCP_TRANSPORT_UNSPECIFIED: McpTransport
MCP_TRANSPORT_STDIO: McpTransport
MCP_TRANSPORT_HTTP: McpTransport
MCP_SERVER_STATE_UNSPECIFIED: McpServerState
MCP_SERVER_STATE_NOT_STARTED: McpServerState
MCP_SERVER_STATE_RUNNING: McpServerState
MCP_SERVER_STATE_DOWN: McpServerState
SCHEDULE_OVERLAP_UNSPECIFIED: ScheduleOverlap
SCHEDULE_OVERLAP_SKIP: ScheduleOverlap
SCHEDULE_OVERLAP_ENQUEUE: ScheduleOverlap
SCHEDULE_OVERLAP_ALLOW: ScheduleOverlap
SCHEDULE_CATCH_UP_UNSPECIFIED: ScheduleCatchUp
SCHEDULE_CATCH_UP_LATEST: ScheduleCatchUp
SCHEDULE_CATCH_UP_ALL: ScheduleCatchUp
SCHEDULE_CATCH_UP_NONE: ScheduleCatchUp
SCHEDULE_SESSION_UNSPECIFIED: ScheduleSession
SCHEDULE_SESSION_EACH_FIRE: ScheduleSession
SCHEDULE_SESSION_ONE: ScheduleSession

class ToolSpec(_message.Message):
    __slots__ = ("name", "description", "input_schema_json", "needs_approval", "reconcile", "question")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    NEEDS_APPROVAL_FIELD_NUMBER: _ClassVar[int]
    RECONCILE_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    input_schema_json: str
    needs_approval: bool
    reconcile: bool
    question: bool
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema_json: _Optional[str] = ..., needs_approval: _Optional[bool] = ..., reconcile: _Optional[bool] = ..., question: _Optional[bool] = ...) -> None: ...

class AgentSpec(_message.Message):
    __slots__ = ("model", "instructions", "tools", "max_steps", "tool_concurrency", "on_agent_drift", "model_settings_json", "tool_timeout_ms", "approval_timeout_ms", "mcp_servers", "subagents", "max_subagent_depth", "limits", "fallback_models", "output_schema_json", "reasoning", "compaction", "sleep_tool")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    ON_AGENT_DRIFT_FIELD_NUMBER: _ClassVar[int]
    MODEL_SETTINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    TOOL_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MCP_SERVERS_FIELD_NUMBER: _ClassVar[int]
    SUBAGENTS_FIELD_NUMBER: _ClassVar[int]
    MAX_SUBAGENT_DEPTH_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_MODELS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    SLEEP_TOOL_FIELD_NUMBER: _ClassVar[int]
    model: str
    instructions: str
    tools: _containers.RepeatedCompositeFieldContainer[ToolSpec]
    max_steps: int
    tool_concurrency: int
    on_agent_drift: AgentDriftPolicy
    model_settings_json: str
    tool_timeout_ms: int
    approval_timeout_ms: int
    mcp_servers: _containers.RepeatedCompositeFieldContainer[McpServerUse]
    subagents: _containers.RepeatedCompositeFieldContainer[SubAgent]
    max_subagent_depth: int
    limits: Limits
    fallback_models: _containers.RepeatedScalarFieldContainer[str]
    output_schema_json: str
    reasoning: Reasoning
    compaction: Compaction
    sleep_tool: bool
    def __init__(self, model: _Optional[str] = ..., instructions: _Optional[str] = ..., tools: _Optional[_Iterable[_Union[ToolSpec, _Mapping]]] = ..., max_steps: _Optional[int] = ..., tool_concurrency: _Optional[int] = ..., on_agent_drift: _Optional[_Union[AgentDriftPolicy, str]] = ..., model_settings_json: _Optional[str] = ..., tool_timeout_ms: _Optional[int] = ..., approval_timeout_ms: _Optional[int] = ..., mcp_servers: _Optional[_Iterable[_Union[McpServerUse, _Mapping]]] = ..., subagents: _Optional[_Iterable[_Union[SubAgent, _Mapping]]] = ..., max_subagent_depth: _Optional[int] = ..., limits: _Optional[_Union[Limits, _Mapping]] = ..., fallback_models: _Optional[_Iterable[str]] = ..., output_schema_json: _Optional[str] = ..., reasoning: _Optional[_Union[Reasoning, _Mapping]] = ..., compaction: _Optional[_Union[Compaction, _Mapping]] = ..., sleep_tool: _Optional[bool] = ...) -> None: ...

class Reasoning(_message.Message):
    __slots__ = ("effort", "budget_tokens")
    EFFORT_FIELD_NUMBER: _ClassVar[int]
    BUDGET_TOKENS_FIELD_NUMBER: _ClassVar[int]
    effort: str
    budget_tokens: int
    def __init__(self, effort: _Optional[str] = ..., budget_tokens: _Optional[int] = ...) -> None: ...

class Compaction(_message.Message):
    __slots__ = ("threshold", "protect_tokens", "strategy", "model", "model_settings_json")
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    PROTECT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    MODEL_SETTINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    threshold: float
    protect_tokens: int
    strategy: CompactionStrategy
    model: str
    model_settings_json: str
    def __init__(self, threshold: _Optional[float] = ..., protect_tokens: _Optional[int] = ..., strategy: _Optional[_Union[CompactionStrategy, str]] = ..., model: _Optional[str] = ..., model_settings_json: _Optional[str] = ...) -> None: ...

class CompactionState(_message.Message):
    __slots__ = ("pruned_before", "summarized_before", "summary", "version", "count")
    PRUNED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    pruned_before: int
    summarized_before: int
    summary: str
    version: int
    count: int
    def __init__(self, pruned_before: _Optional[int] = ..., summarized_before: _Optional[int] = ..., summary: _Optional[str] = ..., version: _Optional[int] = ..., count: _Optional[int] = ...) -> None: ...

class Limits(_message.Message):
    __slots__ = ("run", "session", "count_paused_time")
    RUN_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    COUNT_PAUSED_TIME_FIELD_NUMBER: _ClassVar[int]
    run: Budget
    session: Budget
    count_paused_time: bool
    def __init__(self, run: _Optional[_Union[Budget, _Mapping]] = ..., session: _Optional[_Union[Budget, _Mapping]] = ..., count_paused_time: _Optional[bool] = ...) -> None: ...

class Budget(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "total_tokens", "cost_usd", "model_calls", "wall_clock_ms")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALLS_FIELD_NUMBER: _ClassVar[int]
    WALL_CLOCK_MS_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    total_tokens: int
    cost_usd: float
    model_calls: int
    wall_clock_ms: int
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., total_tokens: _Optional[int] = ..., cost_usd: _Optional[float] = ..., model_calls: _Optional[int] = ..., wall_clock_ms: _Optional[int] = ...) -> None: ...

class SubAgent(_message.Message):
    __slots__ = ("name", "description", "agent")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    agent: AgentSpec
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., agent: _Optional[_Union[AgentSpec, _Mapping]] = ...) -> None: ...

class SubAgentTag(_message.Message):
    __slots__ = ("name", "depth", "path", "task_id")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    depth: int
    path: _containers.RepeatedScalarFieldContainer[str]
    task_id: str
    def __init__(self, name: _Optional[str] = ..., depth: _Optional[int] = ..., path: _Optional[_Iterable[str]] = ..., task_id: _Optional[str] = ...) -> None: ...

class McpServerUse(_message.Message):
    __slots__ = ("name", "allow_tools", "timeout_ms", "retry", "tool_overrides")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ALLOW_TOOLS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    TOOL_OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    name: str
    allow_tools: _containers.RepeatedScalarFieldContainer[str]
    timeout_ms: int
    retry: McpRetryPolicy
    tool_overrides: _containers.RepeatedCompositeFieldContainer[McpToolOverride]
    def __init__(self, name: _Optional[str] = ..., allow_tools: _Optional[_Iterable[str]] = ..., timeout_ms: _Optional[int] = ..., retry: _Optional[_Union[McpRetryPolicy, _Mapping]] = ..., tool_overrides: _Optional[_Iterable[_Union[McpToolOverride, _Mapping]]] = ...) -> None: ...

class McpRetryPolicy(_message.Message):
    __slots__ = ("attempts", "backoff_ms", "retry_on")
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    BACKOFF_MS_FIELD_NUMBER: _ClassVar[int]
    RETRY_ON_FIELD_NUMBER: _ClassVar[int]
    attempts: int
    backoff_ms: int
    retry_on: _containers.RepeatedScalarFieldContainer[McpRetryOn]
    def __init__(self, attempts: _Optional[int] = ..., backoff_ms: _Optional[int] = ..., retry_on: _Optional[_Iterable[_Union[McpRetryOn, str]]] = ...) -> None: ...

class McpToolOverride(_message.Message):
    __slots__ = ("tool", "approval", "timeout_ms", "retry")
    TOOL_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    tool: str
    approval: McpApproval
    timeout_ms: int
    retry: McpRetryPolicy
    def __init__(self, tool: _Optional[str] = ..., approval: _Optional[_Union[McpApproval, str]] = ..., timeout_ms: _Optional[int] = ..., retry: _Optional[_Union[McpRetryPolicy, _Mapping]] = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ("id", "name", "arguments_json")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    arguments_json: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments_json: _Optional[str] = ...) -> None: ...

class Message(_message.Message):
    __slots__ = ("role", "content", "tool_calls", "tool_call_id", "tool_name", "is_error", "model", "usage", "reasoning", "pinned")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    role: Role
    content: str
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    tool_call_id: str
    tool_name: str
    is_error: bool
    model: str
    usage: Usage
    reasoning: _containers.RepeatedCompositeFieldContainer[ReasoningBlock]
    pinned: bool
    def __init__(self, role: _Optional[_Union[Role, str]] = ..., content: _Optional[str] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., is_error: _Optional[bool] = ..., model: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., reasoning: _Optional[_Iterable[_Union[ReasoningBlock, _Mapping]]] = ..., pinned: _Optional[bool] = ...) -> None: ...

class ReasoningBlock(_message.Message):
    __slots__ = ("provider", "raw_json", "text")
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    RAW_JSON_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    provider: str
    raw_json: str
    text: str
    def __init__(self, provider: _Optional[str] = ..., raw_json: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ("prompt_tokens", "completion_tokens", "total_tokens", "model_calls", "cost_usd", "cached_input_tokens", "cache_write_tokens", "reasoning_tokens")
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALLS_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    CACHED_INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REASONING_TOKENS_FIELD_NUMBER: _ClassVar[int]
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    model_calls: int
    cost_usd: float
    cached_input_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    def __init__(self, prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ..., total_tokens: _Optional[int] = ..., model_calls: _Optional[int] = ..., cost_usd: _Optional[float] = ..., cached_input_tokens: _Optional[int] = ..., cache_write_tokens: _Optional[int] = ..., reasoning_tokens: _Optional[int] = ...) -> None: ...

class ToolCallRecord(_message.Message):
    __slots__ = ("call", "step", "result_json", "is_error", "attempts")
    CALL_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    call: ToolCall
    step: int
    result_json: str
    is_error: bool
    attempts: int
    def __init__(self, call: _Optional[_Union[ToolCall, _Mapping]] = ..., step: _Optional[int] = ..., result_json: _Optional[str] = ..., is_error: _Optional[bool] = ..., attempts: _Optional[int] = ...) -> None: ...

class AgentFingerprint(_message.Message):
    __slots__ = ("hash", "model", "tool_schema_hashes", "instructions_hash")
    class ToolSchemaHashesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    HASH_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TOOL_SCHEMA_HASHES_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_HASH_FIELD_NUMBER: _ClassVar[int]
    hash: str
    model: str
    tool_schema_hashes: _containers.ScalarMap[str, str]
    instructions_hash: str
    def __init__(self, hash: _Optional[str] = ..., model: _Optional[str] = ..., tool_schema_hashes: _Optional[_Mapping[str, str]] = ..., instructions_hash: _Optional[str] = ...) -> None: ...

class Checkpoint(_message.Message):
    __slots__ = ("session_id", "messages", "step_index", "usage", "business_state_json", "status", "approval_id", "finish_reason", "fingerprint", "tool_calls", "updated_at", "agent", "total_usage", "version", "run_id", "last_drift", "delegated_usage", "subagents", "early_results", "attempts", "tasks", "run_started_at", "run_paused_ms", "session_started_at", "session_paused_ms", "compaction", "wake_at", "sleep_call_id")
    class AttemptsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_ID_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_USAGE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LAST_DRIFT_FIELD_NUMBER: _ClassVar[int]
    DELEGATED_USAGE_FIELD_NUMBER: _ClassVar[int]
    SUBAGENTS_FIELD_NUMBER: _ClassVar[int]
    EARLY_RESULTS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    RUN_STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    RUN_PAUSED_MS_FIELD_NUMBER: _ClassVar[int]
    SESSION_STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    SESSION_PAUSED_MS_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    WAKE_AT_FIELD_NUMBER: _ClassVar[int]
    SLEEP_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    step_index: int
    usage: Usage
    business_state_json: str
    status: CheckpointStatus
    approval_id: str
    finish_reason: FinishReason
    fingerprint: AgentFingerprint
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCallRecord]
    updated_at: _timestamp_pb2.Timestamp
    agent: AgentSpec
    total_usage: Usage
    version: int
    run_id: str
    last_drift: AgentDrift
    delegated_usage: Usage
    subagents: _containers.RepeatedCompositeFieldContainer[SubAgentState]
    early_results: _containers.RepeatedCompositeFieldContainer[Message]
    attempts: _containers.ScalarMap[str, int]
    tasks: _containers.RepeatedCompositeFieldContainer[SubAgentState]
    run_started_at: _timestamp_pb2.Timestamp
    run_paused_ms: int
    session_started_at: _timestamp_pb2.Timestamp
    session_paused_ms: int
    compaction: CompactionState
    wake_at: _timestamp_pb2.Timestamp
    sleep_call_id: str
    def __init__(self, session_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., step_index: _Optional[int] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., business_state_json: _Optional[str] = ..., status: _Optional[_Union[CheckpointStatus, str]] = ..., approval_id: _Optional[str] = ..., finish_reason: _Optional[_Union[FinishReason, str]] = ..., fingerprint: _Optional[_Union[AgentFingerprint, _Mapping]] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCallRecord, _Mapping]]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., agent: _Optional[_Union[AgentSpec, _Mapping]] = ..., total_usage: _Optional[_Union[Usage, _Mapping]] = ..., version: _Optional[int] = ..., run_id: _Optional[str] = ..., last_drift: _Optional[_Union[AgentDrift, _Mapping]] = ..., delegated_usage: _Optional[_Union[Usage, _Mapping]] = ..., subagents: _Optional[_Iterable[_Union[SubAgentState, _Mapping]]] = ..., early_results: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., attempts: _Optional[_Mapping[str, int]] = ..., tasks: _Optional[_Iterable[_Union[SubAgentState, _Mapping]]] = ..., run_started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., run_paused_ms: _Optional[int] = ..., session_started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., session_paused_ms: _Optional[int] = ..., compaction: _Optional[_Union[CompactionState, _Mapping]] = ..., wake_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., sleep_call_id: _Optional[str] = ...) -> None: ...

class SubAgentState(_message.Message):
    __slots__ = ("call_id", "name", "depth", "path", "task_id", "messages", "step_index", "usage", "fingerprint")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    name: str
    depth: int
    path: _containers.RepeatedScalarFieldContainer[str]
    task_id: str
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    step_index: int
    usage: Usage
    fingerprint: AgentFingerprint
    def __init__(self, call_id: _Optional[str] = ..., name: _Optional[str] = ..., depth: _Optional[int] = ..., path: _Optional[_Iterable[str]] = ..., task_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., step_index: _Optional[int] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., fingerprint: _Optional[_Union[AgentFingerprint, _Mapping]] = ...) -> None: ...

class Approval(_message.Message):
    __slots__ = ("approval_id", "session_id", "tool_call", "remaining", "step", "fingerprint", "created_at", "expires_at", "subagent_path", "kind", "question")
    APPROVAL_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    SUBAGENT_PATH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    approval_id: str
    session_id: str
    tool_call: ToolCall
    remaining: _containers.RepeatedCompositeFieldContainer[ToolCall]
    step: int
    fingerprint: AgentFingerprint
    created_at: _timestamp_pb2.Timestamp
    expires_at: _timestamp_pb2.Timestamp
    subagent_path: _containers.RepeatedScalarFieldContainer[str]
    kind: ApprovalKind
    question: str
    def __init__(self, approval_id: _Optional[str] = ..., session_id: _Optional[str] = ..., tool_call: _Optional[_Union[ToolCall, _Mapping]] = ..., remaining: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ..., step: _Optional[int] = ..., fingerprint: _Optional[_Union[AgentFingerprint, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., subagent_path: _Optional[_Iterable[str]] = ..., kind: _Optional[_Union[ApprovalKind, str]] = ..., question: _Optional[str] = ...) -> None: ...

class HistoryEntry(_message.Message):
    __slots__ = ("step", "saved_at", "status", "version", "message_count", "checkpoint", "model", "usage", "total_usage", "chain", "compaction")
    STEP_FIELD_NUMBER: _ClassVar[int]
    SAVED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_USAGE_FIELD_NUMBER: _ClassVar[int]
    CHAIN_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    step: int
    saved_at: _timestamp_pb2.Timestamp
    status: CheckpointStatus
    version: int
    message_count: int
    checkpoint: Checkpoint
    model: str
    usage: Usage
    total_usage: Usage
    chain: str
    compaction: bool
    def __init__(self, step: _Optional[int] = ..., saved_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., status: _Optional[_Union[CheckpointStatus, str]] = ..., version: _Optional[int] = ..., message_count: _Optional[int] = ..., checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ..., model: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., total_usage: _Optional[_Union[Usage, _Mapping]] = ..., chain: _Optional[str] = ..., compaction: _Optional[bool] = ...) -> None: ...

class SessionSummary(_message.Message):
    __slots__ = ("session_id", "status", "finish_reason", "step_index", "message_count", "approval_id", "updated_at", "last_drift", "total_usage", "wake_at")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_ID_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_DRIFT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_USAGE_FIELD_NUMBER: _ClassVar[int]
    WAKE_AT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    status: CheckpointStatus
    finish_reason: FinishReason
    step_index: int
    message_count: int
    approval_id: str
    updated_at: _timestamp_pb2.Timestamp
    last_drift: AgentDrift
    total_usage: Usage
    wake_at: _timestamp_pb2.Timestamp
    def __init__(self, session_id: _Optional[str] = ..., status: _Optional[_Union[CheckpointStatus, str]] = ..., finish_reason: _Optional[_Union[FinishReason, str]] = ..., step_index: _Optional[int] = ..., message_count: _Optional[int] = ..., approval_id: _Optional[str] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_drift: _Optional[_Union[AgentDrift, _Mapping]] = ..., total_usage: _Optional[_Union[Usage, _Mapping]] = ..., wake_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("session_id", "run_id", "seq", "time", "type", "replayed", "run_start", "step_start", "model_turn", "tool_call", "tool_result", "step_done", "run_done", "agent_drift", "text_delta", "approval_requested", "tool_retry", "input_queued", "approval_resolved", "budget_exceeded", "tool_reconcile", "provider_retry", "provider_fallback", "reasoning_delta", "compaction_start", "compaction_done", "subagent")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    RUN_START_FIELD_NUMBER: _ClassVar[int]
    STEP_START_FIELD_NUMBER: _ClassVar[int]
    MODEL_TURN_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    STEP_DONE_FIELD_NUMBER: _ClassVar[int]
    RUN_DONE_FIELD_NUMBER: _ClassVar[int]
    AGENT_DRIFT_FIELD_NUMBER: _ClassVar[int]
    TEXT_DELTA_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    TOOL_RETRY_FIELD_NUMBER: _ClassVar[int]
    INPUT_QUEUED_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_RESOLVED_FIELD_NUMBER: _ClassVar[int]
    BUDGET_EXCEEDED_FIELD_NUMBER: _ClassVar[int]
    TOOL_RECONCILE_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_RETRY_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FALLBACK_FIELD_NUMBER: _ClassVar[int]
    REASONING_DELTA_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_START_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_DONE_FIELD_NUMBER: _ClassVar[int]
    SUBAGENT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    run_id: str
    seq: int
    time: _timestamp_pb2.Timestamp
    type: str
    replayed: bool
    run_start: RunStart
    step_start: StepStart
    model_turn: ModelTurn
    tool_call: ToolCallRequested
    tool_result: ToolResult
    step_done: StepDone
    run_done: RunDone
    agent_drift: AgentDrift
    text_delta: TextDelta
    approval_requested: ApprovalRequested
    tool_retry: ToolRetry
    input_queued: InputQueued
    approval_resolved: ApprovalResolved
    budget_exceeded: BudgetExceeded
    tool_reconcile: ToolReconcile
    provider_retry: ProviderRetry
    provider_fallback: ProviderFallback
    reasoning_delta: ReasoningDelta
    compaction_start: CompactionStart
    compaction_done: CompactionDone
    subagent: SubAgentTag
    def __init__(self, session_id: _Optional[str] = ..., run_id: _Optional[str] = ..., seq: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., type: _Optional[str] = ..., replayed: _Optional[bool] = ..., run_start: _Optional[_Union[RunStart, _Mapping]] = ..., step_start: _Optional[_Union[StepStart, _Mapping]] = ..., model_turn: _Optional[_Union[ModelTurn, _Mapping]] = ..., tool_call: _Optional[_Union[ToolCallRequested, _Mapping]] = ..., tool_result: _Optional[_Union[ToolResult, _Mapping]] = ..., step_done: _Optional[_Union[StepDone, _Mapping]] = ..., run_done: _Optional[_Union[RunDone, _Mapping]] = ..., agent_drift: _Optional[_Union[AgentDrift, _Mapping]] = ..., text_delta: _Optional[_Union[TextDelta, _Mapping]] = ..., approval_requested: _Optional[_Union[ApprovalRequested, _Mapping]] = ..., tool_retry: _Optional[_Union[ToolRetry, _Mapping]] = ..., input_queued: _Optional[_Union[InputQueued, _Mapping]] = ..., approval_resolved: _Optional[_Union[ApprovalResolved, _Mapping]] = ..., budget_exceeded: _Optional[_Union[BudgetExceeded, _Mapping]] = ..., tool_reconcile: _Optional[_Union[ToolReconcile, _Mapping]] = ..., provider_retry: _Optional[_Union[ProviderRetry, _Mapping]] = ..., provider_fallback: _Optional[_Union[ProviderFallback, _Mapping]] = ..., reasoning_delta: _Optional[_Union[ReasoningDelta, _Mapping]] = ..., compaction_start: _Optional[_Union[CompactionStart, _Mapping]] = ..., compaction_done: _Optional[_Union[CompactionDone, _Mapping]] = ..., subagent: _Optional[_Union[SubAgentTag, _Mapping]] = ...) -> None: ...

class RunStart(_message.Message):
    __slots__ = ("mode", "step_index", "fingerprint", "request_id")
    MODE_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    mode: RunMode
    step_index: int
    fingerprint: AgentFingerprint
    request_id: str
    def __init__(self, mode: _Optional[_Union[RunMode, str]] = ..., step_index: _Optional[int] = ..., fingerprint: _Optional[_Union[AgentFingerprint, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class ApprovalResolved(_message.Message):
    __slots__ = ("approval_id", "tool_call_id", "tool_name", "approved", "note", "decided_by", "expired", "answer")
    APPROVAL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    APPROVED_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    DECIDED_BY_FIELD_NUMBER: _ClassVar[int]
    EXPIRED_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    approval_id: str
    tool_call_id: str
    tool_name: str
    approved: bool
    note: str
    decided_by: str
    expired: bool
    answer: str
    def __init__(self, approval_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., approved: _Optional[bool] = ..., note: _Optional[str] = ..., decided_by: _Optional[str] = ..., expired: _Optional[bool] = ..., answer: _Optional[str] = ...) -> None: ...

class StepStart(_message.Message):
    __slots__ = ("step",)
    STEP_FIELD_NUMBER: _ClassVar[int]
    step: int
    def __init__(self, step: _Optional[int] = ...) -> None: ...

class ModelTurn(_message.Message):
    __slots__ = ("step", "message", "usage")
    STEP_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    step: int
    message: Message
    usage: Usage
    def __init__(self, step: _Optional[int] = ..., message: _Optional[_Union[Message, _Mapping]] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class ToolCallRequested(_message.Message):
    __slots__ = ("step", "call", "timeout_ms", "executor", "attempt", "reconciled")
    STEP_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    EXECUTOR_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    RECONCILED_FIELD_NUMBER: _ClassVar[int]
    step: int
    call: ToolCall
    timeout_ms: int
    executor: ToolExecutor
    attempt: int
    reconciled: ReconcileOutcome
    def __init__(self, step: _Optional[int] = ..., call: _Optional[_Union[ToolCall, _Mapping]] = ..., timeout_ms: _Optional[int] = ..., executor: _Optional[_Union[ToolExecutor, str]] = ..., attempt: _Optional[int] = ..., reconciled: _Optional[_Union[ReconcileOutcome, str]] = ...) -> None: ...

class ToolReconcile(_message.Message):
    __slots__ = ("step", "call", "attempt", "timeout_ms")
    STEP_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    step: int
    call: ToolCall
    attempt: int
    timeout_ms: int
    def __init__(self, step: _Optional[int] = ..., call: _Optional[_Union[ToolCall, _Mapping]] = ..., attempt: _Optional[int] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class ToolRetry(_message.Message):
    __slots__ = ("step", "tool_call_id", "tool_name", "attempt", "error", "delay_ms")
    STEP_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DELAY_MS_FIELD_NUMBER: _ClassVar[int]
    step: int
    tool_call_id: str
    tool_name: str
    attempt: int
    error: str
    delay_ms: int
    def __init__(self, step: _Optional[int] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., attempt: _Optional[int] = ..., error: _Optional[str] = ..., delay_ms: _Optional[int] = ...) -> None: ...

class ProviderRetry(_message.Message):
    __slots__ = ("step", "model", "attempt", "error", "delay_ms")
    STEP_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DELAY_MS_FIELD_NUMBER: _ClassVar[int]
    step: int
    model: str
    attempt: int
    error: str
    delay_ms: int
    def __init__(self, step: _Optional[int] = ..., model: _Optional[str] = ..., attempt: _Optional[int] = ..., error: _Optional[str] = ..., delay_ms: _Optional[int] = ...) -> None: ...

class ProviderFallback(_message.Message):
    __slots__ = ("step", "from_model", "to_model", "error", "reason", "error_type")
    STEP_FIELD_NUMBER: _ClassVar[int]
    FROM_MODEL_FIELD_NUMBER: _ClassVar[int]
    TO_MODEL_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ERROR_TYPE_FIELD_NUMBER: _ClassVar[int]
    step: int
    from_model: str
    to_model: str
    error: str
    reason: str
    error_type: str
    def __init__(self, step: _Optional[int] = ..., from_model: _Optional[str] = ..., to_model: _Optional[str] = ..., error: _Optional[str] = ..., reason: _Optional[str] = ..., error_type: _Optional[str] = ...) -> None: ...

class ToolResult(_message.Message):
    __slots__ = ("step", "tool_call_id", "tool_name", "result_json", "is_error")
    STEP_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    step: int
    tool_call_id: str
    tool_name: str
    result_json: str
    is_error: bool
    def __init__(self, step: _Optional[int] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., result_json: _Optional[str] = ..., is_error: _Optional[bool] = ...) -> None: ...

class StepDone(_message.Message):
    __slots__ = ("step",)
    STEP_FIELD_NUMBER: _ClassVar[int]
    step: int
    def __init__(self, step: _Optional[int] = ...) -> None: ...

class TextDelta(_message.Message):
    __slots__ = ("step", "text")
    STEP_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    step: int
    text: str
    def __init__(self, step: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class ReasoningDelta(_message.Message):
    __slots__ = ("step", "text")
    STEP_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    step: int
    text: str
    def __init__(self, step: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class AgentDrift(_message.Message):
    __slots__ = ("model_from", "model_to", "tools_added", "tools_removed", "tools_changed", "instructions_changed", "refused")
    MODEL_FROM_FIELD_NUMBER: _ClassVar[int]
    MODEL_TO_FIELD_NUMBER: _ClassVar[int]
    TOOLS_ADDED_FIELD_NUMBER: _ClassVar[int]
    TOOLS_REMOVED_FIELD_NUMBER: _ClassVar[int]
    TOOLS_CHANGED_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_CHANGED_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    model_from: str
    model_to: str
    tools_added: _containers.RepeatedScalarFieldContainer[str]
    tools_removed: _containers.RepeatedScalarFieldContainer[str]
    tools_changed: _containers.RepeatedScalarFieldContainer[str]
    instructions_changed: bool
    refused: bool
    def __init__(self, model_from: _Optional[str] = ..., model_to: _Optional[str] = ..., tools_added: _Optional[_Iterable[str]] = ..., tools_removed: _Optional[_Iterable[str]] = ..., tools_changed: _Optional[_Iterable[str]] = ..., instructions_changed: _Optional[bool] = ..., refused: _Optional[bool] = ...) -> None: ...

class ApprovalRequested(_message.Message):
    __slots__ = ("approval",)
    APPROVAL_FIELD_NUMBER: _ClassVar[int]
    approval: Approval
    def __init__(self, approval: _Optional[_Union[Approval, _Mapping]] = ...) -> None: ...

class BudgetExceeded(_message.Message):
    __slots__ = ("scope", "limit", "value", "used", "worst_case", "usage", "path")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    USED_FIELD_NUMBER: _ClassVar[int]
    WORST_CASE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    scope: str
    limit: str
    value: float
    used: float
    worst_case: float
    usage: Usage
    path: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, scope: _Optional[str] = ..., limit: _Optional[str] = ..., value: _Optional[float] = ..., used: _Optional[float] = ..., worst_case: _Optional[float] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., path: _Optional[_Iterable[str]] = ...) -> None: ...

class CompactionStart(_message.Message):
    __slots__ = ("step", "trigger", "tokens", "threshold_tokens")
    STEP_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_TOKENS_FIELD_NUMBER: _ClassVar[int]
    step: int
    trigger: str
    tokens: int
    threshold_tokens: int
    def __init__(self, step: _Optional[int] = ..., trigger: _Optional[str] = ..., tokens: _Optional[int] = ..., threshold_tokens: _Optional[int] = ...) -> None: ...

class CompactionDone(_message.Message):
    __slots__ = ("step", "trigger", "tokens_before", "tokens_after", "pruned", "summarized", "error", "summary_model", "usage")
    STEP_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    TOKENS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_AFTER_FIELD_NUMBER: _ClassVar[int]
    PRUNED_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_MODEL_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    step: int
    trigger: str
    tokens_before: int
    tokens_after: int
    pruned: int
    summarized: int
    error: str
    summary_model: str
    usage: Usage
    def __init__(self, step: _Optional[int] = ..., trigger: _Optional[str] = ..., tokens_before: _Optional[int] = ..., tokens_after: _Optional[int] = ..., pruned: _Optional[int] = ..., summarized: _Optional[int] = ..., error: _Optional[str] = ..., summary_model: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class RunDone(_message.Message):
    __slots__ = ("finish_reason", "status", "final_text", "step_index", "usage", "approval_id", "message_count", "output_json", "output_errors")
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    FINAL_TEXT_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_JSON_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_ERRORS_FIELD_NUMBER: _ClassVar[int]
    finish_reason: FinishReason
    status: CheckpointStatus
    final_text: str
    step_index: int
    usage: Usage
    approval_id: str
    message_count: int
    output_json: str
    output_errors: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, finish_reason: _Optional[_Union[FinishReason, str]] = ..., status: _Optional[_Union[CheckpointStatus, str]] = ..., final_text: _Optional[str] = ..., step_index: _Optional[int] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., approval_id: _Optional[str] = ..., message_count: _Optional[int] = ..., output_json: _Optional[str] = ..., output_errors: _Optional[_Iterable[str]] = ...) -> None: ...

class ExecuteRequest(_message.Message):
    __slots__ = ("session_id", "input", "agent", "business_state_json", "request_id", "history_limit", "if_busy", "retention_ms")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    HISTORY_LIMIT_FIELD_NUMBER: _ClassVar[int]
    IF_BUSY_FIELD_NUMBER: _ClassVar[int]
    RETENTION_MS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    input: _containers.RepeatedCompositeFieldContainer[Message]
    agent: AgentSpec
    business_state_json: str
    request_id: str
    history_limit: int
    if_busy: IfBusy
    retention_ms: int
    def __init__(self, session_id: _Optional[str] = ..., input: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., agent: _Optional[_Union[AgentSpec, _Mapping]] = ..., business_state_json: _Optional[str] = ..., request_id: _Optional[str] = ..., history_limit: _Optional[int] = ..., if_busy: _Optional[_Union[IfBusy, str]] = ..., retention_ms: _Optional[int] = ...) -> None: ...

class QueuedInput(_message.Message):
    __slots__ = ("request_id", "input", "if_busy", "position", "enqueued_at")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    IF_BUSY_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    ENQUEUED_AT_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    input: _containers.RepeatedCompositeFieldContainer[Message]
    if_busy: IfBusy
    position: int
    enqueued_at: _timestamp_pb2.Timestamp
    def __init__(self, request_id: _Optional[str] = ..., input: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., if_busy: _Optional[_Union[IfBusy, str]] = ..., position: _Optional[int] = ..., enqueued_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class InputQueued(_message.Message):
    __slots__ = ("request_id", "ahead")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    AHEAD_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    ahead: int
    def __init__(self, request_id: _Optional[str] = ..., ahead: _Optional[int] = ...) -> None: ...

class DequeueInputRequest(_message.Message):
    __slots__ = ("session_id", "request_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    request_id: str
    def __init__(self, session_id: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class DequeueInputResponse(_message.Message):
    __slots__ = ("removed",)
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    removed: bool
    def __init__(self, removed: _Optional[bool] = ...) -> None: ...

class ExecuteResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: Event
    def __init__(self, event: _Optional[_Union[Event, _Mapping]] = ...) -> None: ...

class ResumeRequest(_message.Message):
    __slots__ = ("session_id", "agent", "request_id", "wake")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    WAKE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    agent: AgentSpec
    request_id: str
    wake: bool
    def __init__(self, session_id: _Optional[str] = ..., agent: _Optional[_Union[AgentSpec, _Mapping]] = ..., request_id: _Optional[str] = ..., wake: _Optional[bool] = ...) -> None: ...

class ResumeResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: Event
    def __init__(self, event: _Optional[_Union[Event, _Mapping]] = ...) -> None: ...

class SubmitToolResultRequest(_message.Message):
    __slots__ = ("session_id", "tool_call_id", "result_json", "is_error", "reconcile")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    RECONCILE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    tool_call_id: str
    result_json: str
    is_error: bool
    reconcile: ReconcileOutcome
    def __init__(self, session_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., result_json: _Optional[str] = ..., is_error: _Optional[bool] = ..., reconcile: _Optional[_Union[ReconcileOutcome, str]] = ...) -> None: ...

class SubmitToolResultResponse(_message.Message):
    __slots__ = ("outcome", "attempt")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    outcome: SubmitOutcome
    attempt: int
    def __init__(self, outcome: _Optional[_Union[SubmitOutcome, str]] = ..., attempt: _Optional[int] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class CancelResponse(_message.Message):
    __slots__ = ("cancelled",)
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    cancelled: bool
    def __init__(self, cancelled: _Optional[bool] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("checkpoint", "queue", "last_model_failure", "usage_by_model")
    class UsageByModelEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Usage
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    LAST_MODEL_FAILURE_FIELD_NUMBER: _ClassVar[int]
    USAGE_BY_MODEL_FIELD_NUMBER: _ClassVar[int]
    checkpoint: Checkpoint
    queue: _containers.RepeatedCompositeFieldContainer[QueuedInput]
    last_model_failure: ModelFailure
    usage_by_model: _containers.MessageMap[str, Usage]
    def __init__(self, checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ..., queue: _Optional[_Iterable[_Union[QueuedInput, _Mapping]]] = ..., last_model_failure: _Optional[_Union[ModelFailure, _Mapping]] = ..., usage_by_model: _Optional[_Mapping[str, Usage]] = ...) -> None: ...

class ModelFailure(_message.Message):
    __slots__ = ("reason", "message", "metadata", "failed_at", "failures", "retry_not_before")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    FAILED_AT_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    RETRY_NOT_BEFORE_FIELD_NUMBER: _ClassVar[int]
    reason: str
    message: str
    metadata: _containers.ScalarMap[str, str]
    failed_at: _timestamp_pb2.Timestamp
    failures: int
    retry_not_before: _timestamp_pb2.Timestamp
    def __init__(self, reason: _Optional[str] = ..., message: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., failed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., failures: _Optional[int] = ..., retry_not_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "status", "session_id_prefix", "newest_first", "include_total_size", "costliest_first")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_PREFIX_FIELD_NUMBER: _ClassVar[int]
    NEWEST_FIRST_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    COSTLIEST_FIRST_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    status: CheckpointStatus
    session_id_prefix: str
    newest_first: bool
    include_total_size: bool
    costliest_first: bool
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., status: _Optional[_Union[CheckpointStatus, str]] = ..., session_id_prefix: _Optional[str] = ..., newest_first: _Optional[bool] = ..., include_total_size: _Optional[bool] = ..., costliest_first: _Optional[bool] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions", "next_page_token", "total_size")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[SessionSummary]
    next_page_token: str
    total_size: int
    def __init__(self, sessions: _Optional[_Iterable[_Union[SessionSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., total_size: _Optional[int] = ...) -> None: ...

class DeleteSessionRequest(_message.Message):
    __slots__ = ("session_id", "keep_history")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    KEEP_HISTORY_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    keep_history: bool
    def __init__(self, session_id: _Optional[str] = ..., keep_history: _Optional[bool] = ...) -> None: ...

class DeleteSessionResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class ResolveRequest(_message.Message):
    __slots__ = ("approval_id", "approved", "note", "agent", "request_id", "session_id", "detach_on_tool_call", "answer")
    APPROVAL_ID_FIELD_NUMBER: _ClassVar[int]
    APPROVED_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    DETACH_ON_TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    approval_id: str
    approved: bool
    note: str
    agent: AgentSpec
    request_id: str
    session_id: str
    detach_on_tool_call: bool
    answer: str
    def __init__(self, approval_id: _Optional[str] = ..., approved: _Optional[bool] = ..., note: _Optional[str] = ..., agent: _Optional[_Union[AgentSpec, _Mapping]] = ..., request_id: _Optional[str] = ..., session_id: _Optional[str] = ..., detach_on_tool_call: _Optional[bool] = ..., answer: _Optional[str] = ...) -> None: ...

class ResolveResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: Event
    def __init__(self, event: _Optional[_Union[Event, _Mapping]] = ...) -> None: ...

class ListApprovalsRequest(_message.Message):
    __slots__ = ("session_id", "page_size", "page_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    page_size: int
    page_token: str
    def __init__(self, session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListApprovalsResponse(_message.Message):
    __slots__ = ("approvals", "next_page_token")
    APPROVALS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    approvals: _containers.RepeatedCompositeFieldContainer[Approval]
    next_page_token: str
    def __init__(self, approvals: _Optional[_Iterable[_Union[Approval, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class HistoryRequest(_message.Message):
    __slots__ = ("session_id", "page_size", "page_token", "include_checkpoint")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    page_size: int
    page_token: str
    include_checkpoint: bool
    def __init__(self, session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., include_checkpoint: _Optional[bool] = ...) -> None: ...

class HistoryResponse(_message.Message):
    __slots__ = ("entries", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[HistoryEntry]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[HistoryEntry, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ForkPatch(_message.Message):
    __slots__ = ("replace_messages", "messages", "business_state_json", "tool_result", "append_input")
    REPLACE_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    APPEND_INPUT_FIELD_NUMBER: _ClassVar[int]
    replace_messages: bool
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    business_state_json: str
    tool_result: ToolResultPatch
    append_input: str
    def __init__(self, replace_messages: _Optional[bool] = ..., messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., business_state_json: _Optional[str] = ..., tool_result: _Optional[_Union[ToolResultPatch, _Mapping]] = ..., append_input: _Optional[str] = ...) -> None: ...

class ToolResultPatch(_message.Message):
    __slots__ = ("tool_call_id", "result_json", "is_error")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    result_json: str
    is_error: bool
    def __init__(self, tool_call_id: _Optional[str] = ..., result_json: _Optional[str] = ..., is_error: _Optional[bool] = ...) -> None: ...

class ForkRequest(_message.Message):
    __slots__ = ("session_id", "from_step", "new_session_id", "patch")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_STEP_FIELD_NUMBER: _ClassVar[int]
    NEW_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PATCH_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    from_step: int
    new_session_id: str
    patch: ForkPatch
    def __init__(self, session_id: _Optional[str] = ..., from_step: _Optional[int] = ..., new_session_id: _Optional[str] = ..., patch: _Optional[_Union[ForkPatch, _Mapping]] = ...) -> None: ...

class ForkResponse(_message.Message):
    __slots__ = ("session_id", "step", "checkpoint")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    step: int
    checkpoint: Checkpoint
    def __init__(self, session_id: _Optional[str] = ..., step: _Optional[int] = ..., checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ...) -> None: ...

class CompareRequest(_message.Message):
    __slots__ = ("session_id_a", "session_id_b")
    SESSION_ID_A_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_B_FIELD_NUMBER: _ClassVar[int]
    session_id_a: str
    session_id_b: str
    def __init__(self, session_id_a: _Optional[str] = ..., session_id_b: _Optional[str] = ...) -> None: ...

class TrajectoryStep(_message.Message):
    __slots__ = ("index", "text", "calls", "model", "usage")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    index: int
    text: str
    calls: _containers.RepeatedCompositeFieldContainer[TrajectoryCall]
    model: str
    usage: Usage
    def __init__(self, index: _Optional[int] = ..., text: _Optional[str] = ..., calls: _Optional[_Iterable[_Union[TrajectoryCall, _Mapping]]] = ..., model: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class TrajectoryCall(_message.Message):
    __slots__ = ("tool_call_id", "name", "arguments_json", "result_json", "is_error", "task_id", "task_steps")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_STEPS_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    name: str
    arguments_json: str
    result_json: str
    is_error: bool
    task_id: str
    task_steps: _containers.RepeatedCompositeFieldContainer[TrajectoryStep]
    def __init__(self, tool_call_id: _Optional[str] = ..., name: _Optional[str] = ..., arguments_json: _Optional[str] = ..., result_json: _Optional[str] = ..., is_error: _Optional[bool] = ..., task_id: _Optional[str] = ..., task_steps: _Optional[_Iterable[_Union[TrajectoryStep, _Mapping]]] = ...) -> None: ...

class ArgumentDrift(_message.Message):
    __slots__ = ("step", "tool", "arguments_json_a", "arguments_json_b")
    STEP_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_A_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_B_FIELD_NUMBER: _ClassVar[int]
    step: int
    tool: str
    arguments_json_a: str
    arguments_json_b: str
    def __init__(self, step: _Optional[int] = ..., tool: _Optional[str] = ..., arguments_json_a: _Optional[str] = ..., arguments_json_b: _Optional[str] = ...) -> None: ...

class TrajectoryDrift(_message.Message):
    __slots__ = ("tool_order_a", "tool_order_b", "tool_order_changed", "arguments", "steps_a", "steps_b", "finish_reason_a", "finish_reason_b")
    TOOL_ORDER_A_FIELD_NUMBER: _ClassVar[int]
    TOOL_ORDER_B_FIELD_NUMBER: _ClassVar[int]
    TOOL_ORDER_CHANGED_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    STEPS_A_FIELD_NUMBER: _ClassVar[int]
    STEPS_B_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_A_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_B_FIELD_NUMBER: _ClassVar[int]
    tool_order_a: _containers.RepeatedScalarFieldContainer[str]
    tool_order_b: _containers.RepeatedScalarFieldContainer[str]
    tool_order_changed: bool
    arguments: _containers.RepeatedCompositeFieldContainer[ArgumentDrift]
    steps_a: int
    steps_b: int
    finish_reason_a: FinishReason
    finish_reason_b: FinishReason
    def __init__(self, tool_order_a: _Optional[_Iterable[str]] = ..., tool_order_b: _Optional[_Iterable[str]] = ..., tool_order_changed: _Optional[bool] = ..., arguments: _Optional[_Iterable[_Union[ArgumentDrift, _Mapping]]] = ..., steps_a: _Optional[int] = ..., steps_b: _Optional[int] = ..., finish_reason_a: _Optional[_Union[FinishReason, str]] = ..., finish_reason_b: _Optional[_Union[FinishReason, str]] = ...) -> None: ...

class CompareResponse(_message.Message):
    __slots__ = ("a", "b", "diverged_at", "drift")
    A_FIELD_NUMBER: _ClassVar[int]
    B_FIELD_NUMBER: _ClassVar[int]
    DIVERGED_AT_FIELD_NUMBER: _ClassVar[int]
    DRIFT_FIELD_NUMBER: _ClassVar[int]
    a: _containers.RepeatedCompositeFieldContainer[TrajectoryStep]
    b: _containers.RepeatedCompositeFieldContainer[TrajectoryStep]
    diverged_at: int
    drift: TrajectoryDrift
    def __init__(self, a: _Optional[_Iterable[_Union[TrajectoryStep, _Mapping]]] = ..., b: _Optional[_Iterable[_Union[TrajectoryStep, _Mapping]]] = ..., diverged_at: _Optional[int] = ..., drift: _Optional[_Union[TrajectoryDrift, _Mapping]] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("session_id", "after_seq", "follow")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    FOLLOW_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    after_seq: int
    follow: bool
    def __init__(self, session_id: _Optional[str] = ..., after_seq: _Optional[int] = ..., follow: _Optional[bool] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: Event
    def __init__(self, event: _Optional[_Union[Event, _Mapping]] = ...) -> None: ...

class ListMcpServersRequest(_message.Message):
    __slots__ = ("refresh",)
    REFRESH_FIELD_NUMBER: _ClassVar[int]
    refresh: bool
    def __init__(self, refresh: _Optional[bool] = ...) -> None: ...

class ListMcpServersResponse(_message.Message):
    __slots__ = ("servers",)
    SERVERS_FIELD_NUMBER: _ClassVar[int]
    servers: _containers.RepeatedCompositeFieldContainer[McpServer]
    def __init__(self, servers: _Optional[_Iterable[_Union[McpServer, _Mapping]]] = ...) -> None: ...

class McpServer(_message.Message):
    __slots__ = ("name", "transport", "state", "starts", "last_error", "tools")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TRANSPORT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STARTS_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    name: str
    transport: McpTransport
    state: McpServerState
    starts: int
    last_error: str
    tools: _containers.RepeatedCompositeFieldContainer[McpTool]
    def __init__(self, name: _Optional[str] = ..., transport: _Optional[_Union[McpTransport, str]] = ..., state: _Optional[_Union[McpServerState, str]] = ..., starts: _Optional[int] = ..., last_error: _Optional[str] = ..., tools: _Optional[_Iterable[_Union[McpTool, _Mapping]]] = ...) -> None: ...

class McpTool(_message.Message):
    __slots__ = ("name", "description", "input_schema_json", "read_only_hint", "destructive_hint")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_HINT_FIELD_NUMBER: _ClassVar[int]
    DESTRUCTIVE_HINT_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    input_schema_json: str
    read_only_hint: bool
    destructive_hint: bool
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema_json: _Optional[str] = ..., read_only_hint: _Optional[bool] = ..., destructive_hint: _Optional[bool] = ...) -> None: ...

class CompactRequest(_message.Message):
    __slots__ = ("session_id", "strategy")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    strategy: CompactionStrategy
    def __init__(self, session_id: _Optional[str] = ..., strategy: _Optional[_Union[CompactionStrategy, str]] = ...) -> None: ...

class CompactResponse(_message.Message):
    __slots__ = ("compacted", "checkpoint")
    COMPACTED_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    compacted: bool
    checkpoint: Checkpoint
    def __init__(self, compacted: _Optional[bool] = ..., checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ...) -> None: ...

class ScheduleCron(_message.Message):
    __slots__ = ("expression", "time_zone")
    EXPRESSION_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    expression: str
    time_zone: str
    def __init__(self, expression: _Optional[str] = ..., time_zone: _Optional[str] = ...) -> None: ...

class ScheduleSpec(_message.Message):
    __slots__ = ("name", "cron", "interval_ms", "agent", "input", "overlap", "catch_up", "session")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CRON_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_MS_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OVERLAP_FIELD_NUMBER: _ClassVar[int]
    CATCH_UP_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    cron: ScheduleCron
    interval_ms: int
    agent: AgentSpec
    input: _containers.RepeatedCompositeFieldContainer[Message]
    overlap: ScheduleOverlap
    catch_up: ScheduleCatchUp
    session: ScheduleSession
    def __init__(self, name: _Optional[str] = ..., cron: _Optional[_Union[ScheduleCron, _Mapping]] = ..., interval_ms: _Optional[int] = ..., agent: _Optional[_Union[AgentSpec, _Mapping]] = ..., input: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., overlap: _Optional[_Union[ScheduleOverlap, str]] = ..., catch_up: _Optional[_Union[ScheduleCatchUp, str]] = ..., session: _Optional[_Union[ScheduleSession, str]] = ...) -> None: ...

class Schedule(_message.Message):
    __slots__ = ("spec", "paused", "next_fire", "last_fire", "last_session_id", "fired", "skipped", "created_at")
    SPEC_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    NEXT_FIRE_FIELD_NUMBER: _ClassVar[int]
    LAST_FIRE_FIELD_NUMBER: _ClassVar[int]
    LAST_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FIRED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    spec: ScheduleSpec
    paused: bool
    next_fire: _timestamp_pb2.Timestamp
    last_fire: _timestamp_pb2.Timestamp
    last_session_id: str
    fired: int
    skipped: int
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, spec: _Optional[_Union[ScheduleSpec, _Mapping]] = ..., paused: _Optional[bool] = ..., next_fire: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_fire: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_session_id: _Optional[str] = ..., fired: _Optional[int] = ..., skipped: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateScheduleRequest(_message.Message):
    __slots__ = ("spec",)
    SPEC_FIELD_NUMBER: _ClassVar[int]
    spec: ScheduleSpec
    def __init__(self, spec: _Optional[_Union[ScheduleSpec, _Mapping]] = ...) -> None: ...

class CreateScheduleResponse(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class ListSchedulesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListSchedulesResponse(_message.Message):
    __slots__ = ("schedules",)
    SCHEDULES_FIELD_NUMBER: _ClassVar[int]
    schedules: _containers.RepeatedCompositeFieldContainer[Schedule]
    def __init__(self, schedules: _Optional[_Iterable[_Union[Schedule, _Mapping]]] = ...) -> None: ...

class PauseScheduleRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class PauseScheduleResponse(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class ResumeScheduleRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ResumeScheduleResponse(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class DeleteScheduleRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteScheduleResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TriggerScheduleRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class TriggerScheduleResponse(_message.Message):
    __slots__ = ("session_id", "request_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    request_id: str
    def __init__(self, session_id: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...
