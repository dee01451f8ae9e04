from agentcore.v1 import message_pb2 as _message_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

BUDGET_LIMIT_COST: BudgetLimit
BUDGET_LIMIT_INPUT_TOKENS: BudgetLimit
BUDGET_LIMIT_MODEL_REQUESTS: BudgetLimit
BUDGET_LIMIT_OUTPUT_TOKENS: BudgetLimit
BUDGET_LIMIT_TOOL_CALLS: BudgetLimit
BUDGET_LIMIT_UNSPECIFIED: BudgetLimit
BUDGET_LIMIT_WALL_TIME: BudgetLimit
DESCRIPTOR: _descriptor.FileDescriptor
ELICITATION_ACTION_ACCEPT: ElicitationAction
ELICITATION_ACTION_CANCEL: ElicitationAction
ELICITATION_ACTION_DECLINE: ElicitationAction
ELICITATION_ACTION_UNSPECIFIED: ElicitationAction
END_REASON_BUDGET: EndReason
END_REASON_NO_TOOL: EndReason
END_REASON_STEP_LIMIT: EndReason
END_REASON_TOOL_STOP: EndReason
END_REASON_UNSPECIFIED: EndReason
ERROR_KIND_ABORTED: ErrorKind
ERROR_KIND_AUTH: ErrorKind
ERROR_KIND_LIMIT: ErrorKind
ERROR_KIND_NETWORK: ErrorKind
ERROR_KIND_REQUEST: ErrorKind
ERROR_KIND_SERVER: ErrorKind
ERROR_KIND_TIMEOUT: ErrorKind
ERROR_KIND_UNKNOWN: ErrorKind
ERROR_KIND_UNSPECIFIED: ErrorKind
OUTPUT_STREAM_OUTPUT: OutputStream
OUTPUT_STREAM_STDERR: OutputStream
OUTPUT_STREAM_STDOUT: OutputStream
OUTPUT_STREAM_UNSPECIFIED: OutputStream
PERMISSION_OUTCOME_ALLOWED: PermissionOutcome
PERMISSION_OUTCOME_DENIED: PermissionOutcome
PERMISSION_OUTCOME_NOT_ANSWERED: PermissionOutcome
PERMISSION_OUTCOME_UNSPECIFIED: PermissionOutcome

class Budget(_message.Message):
    __slots__ = ["cost", "input_tokens", "model_requests", "output_tokens", "tool_calls", "wall_time"]
    COST_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MODEL_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    WALL_TIME_FIELD_NUMBER: _ClassVar[int]
    cost: float
    input_tokens: int
    model_requests: int
    output_tokens: int
    tool_calls: int
    wall_time: _duration_pb2.Duration
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., model_requests: _Optional[int] = ..., tool_calls: _Optional[int] = ..., wall_time: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., cost: _Optional[float] = ...) -> None: ...

class BudgetExceededEvent(_message.Message):
    __slots__ = ["budget_run_id", "limit", "max", "used"]
    BUDGET_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    USED_FIELD_NUMBER: _ClassVar[int]
    budget_run_id: str
    limit: BudgetLimit
    max: float
    used: float
    def __init__(self, limit: _Optional[_Union[BudgetLimit, str]] = ..., budget_run_id: _Optional[str] = ..., max: _Optional[float] = ..., used: _Optional[float] = ...) -> None: ...

class ChildRunEvent(_message.Message):
    __slots__ = ["agent_id", "depth", "event", "parent_run_id", "run_id", "tool_call_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    PARENT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    depth: int
    event: Event
    parent_run_id: str
    run_id: str
    tool_call_id: str
    def __init__(self, run_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., parent_run_id: _Optional[str] = ..., depth: _Optional[int] = ..., tool_call_id: _Optional[str] = ..., event: _Optional[_Union[Event, _Mapping]] = ...) -> None: ...

class CompactDeltaEvent(_message.Message):
    __slots__ = ["text"]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class CompactFinishedEvent(_message.Message):
    __slots__ = ["summary", "usage"]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    summary: str
    usage: _message_pb2.Usage
    def __init__(self, summary: _Optional[str] = ..., usage: _Optional[_Union[_message_pb2.Usage, _Mapping]] = ...) -> None: ...

class CompactStartedEvent(_message.Message):
    __slots__ = ["manual", "tokens"]
    MANUAL_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    manual: bool
    tokens: int
    def __init__(self, tokens: _Optional[int] = ..., manual: bool = ...) -> None: ...

class ElicitationRequestEvent(_message.Message):
    __slots__ = ["elicitation_id", "message", "requested_schema", "tool_call_id", "tool_name"]
    ELICITATION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    elicitation_id: str
    message: str
    requested_schema: _struct_pb2.Struct
    tool_call_id: str
    tool_name: str
    def __init__(self, elicitation_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., message: _Optional[str] = ..., requested_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ElicitationResultEvent(_message.Message):
    __slots__ = ["action", "elicitation_id", "timed_out"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ELICITATION_ID_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    action: ElicitationAction
    elicitation_id: str
    timed_out: bool
    def __init__(self, elicitation_id: _Optional[str] = ..., action: _Optional[_Union[ElicitationAction, str]] = ..., timed_out: bool = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ["attempt", "budget_exceeded", "child", "compact_delta", "compact_finished", "compact_started", "elicitation_request", "elicitation_result", "fallback", "model_delta", "model_request", "model_response", "permission_request", "result", "retry", "run_id", "run_resumed", "run_started", "seq", "step", "time", "tool_call", "tool_output", "tool_output_capped", "tool_result"]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    BUDGET_EXCEEDED_FIELD_NUMBER: _ClassVar[int]
    CHILD_FIELD_NUMBER: _ClassVar[int]
    COMPACT_DELTA_FIELD_NUMBER: _ClassVar[int]
    COMPACT_FINISHED_FIELD_NUMBER: _ClassVar[int]
    COMPACT_STARTED_FIELD_NUMBER: _ClassVar[int]
    ELICITATION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    ELICITATION_RESULT_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    MODEL_DELTA_FIELD_NUMBER: _ClassVar[int]
    MODEL_REQUEST_FIELD_NUMBER: _ClassVar[int]
    MODEL_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_RESUMED_FIELD_NUMBER: _ClassVar[int]
    RUN_STARTED_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    TOOL_OUTPUT_CAPPED_FIELD_NUMBER: _ClassVar[int]
    TOOL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    budget_exceeded: BudgetExceededEvent
    child: ChildRunEvent
    compact_delta: CompactDeltaEvent
    compact_finished: CompactFinishedEvent
    compact_started: CompactStartedEvent
    elicitation_request: ElicitationRequestEvent
    elicitation_result: ElicitationResultEvent
    fallback: FallbackEvent
    model_delta: ModelDeltaEvent
    model_request: ModelRequestEvent
    model_response: ModelResponseEvent
    permission_request: PermissionRequestEvent
    result: RunResultEvent
    retry: RetryEvent
    run_id: str
    run_resumed: RunResumedEvent
    run_started: RunStartedEvent
    seq: int
    step: StepEvent
    time: _timestamp_pb2.Timestamp
    tool_call: ToolCallEvent
    tool_output: ToolOutputEvent
    tool_output_capped: ToolOutputCappedEvent
    tool_result: ToolResultEvent
    def __init__(self, seq: _Optional[int] = ..., time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., run_id: _Optional[str] = ..., attempt: _Optional[int] = ..., run_started: _Optional[_Union[RunStartedEvent, _Mapping]] = ..., model_request: _Optional[_Union[ModelRequestEvent, _Mapping]] = ..., model_delta: _Optional[_Union[ModelDeltaEvent, _Mapping]] = ..., model_response: _Optional[_Union[ModelResponseEvent, _Mapping]] = ..., permission_request: _Optional[_Union[PermissionRequestEvent, _Mapping]] = ..., tool_call: _Optional[_Union[ToolCallEvent, _Mapping]] = ..., tool_output: _Optional[_Union[ToolOutputEvent, _Mapping]] = ..., tool_result: _Optional[_Union[ToolResultEvent, _Mapping]] = ..., step: _Optional[_Union[StepEvent, _Mapping]] = ..., retry: _Optional[_Union[RetryEvent, _Mapping]] = ..., compact_started: _Optional[_Union[CompactStartedEvent, _Mapping]] = ..., compact_delta: _Optional[_Union[CompactDeltaEvent, _Mapping]] = ..., compact_finished: _Optional[_Union[CompactFinishedEvent, _Mapping]] = ..., result: _Optional[_Union[RunResultEvent, _Mapping]] = ..., tool_output_capped: _Optional[_Union[ToolOutputCappedEvent, _Mapping]] = ..., run_resumed: _Optional[_Union[RunResumedEvent, _Mapping]] = ..., child: _Optional[_Union[ChildRunEvent, _Mapping]] = ..., budget_exceeded: _Optional[_Union[BudgetExceededEvent, _Mapping]] = ..., fallback: _Optional[_Union[FallbackEvent, _Mapping]] = ..., elicitation_request: _Optional[_Union[ElicitationRequestEvent, _Mapping]] = ..., elicitation_result: _Optional[_Union[ElicitationResultEvent, _Mapping]] = ...) -> None: ...

class FallbackEvent(_message.Message):
    __slots__ = ["index", "kind", "message", "status", "step", "to"]
    FROM_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    index: int
    kind: ErrorKind
    message: str
    status: int
    step: int
    to: ModelRef
    def __init__(self, step: _Optional[int] = ..., kind: _Optional[_Union[ErrorKind, str]] = ..., message: _Optional[str] = ..., status: _Optional[int] = ..., to: _Optional[_Union[ModelRef, _Mapping]] = ..., index: _Optional[int] = ..., **kwargs) -> None: ...

class ModelDeltaEvent(_message.Message):
    __slots__ = ["reasoning", "step", "text", "tool_call"]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    reasoning: str
    step: int
    text: str
    tool_call: ToolCallDelta
    def __init__(self, step: _Optional[int] = ..., text: _Optional[str] = ..., reasoning: _Optional[str] = ..., tool_call: _Optional[_Union[ToolCallDelta, _Mapping]] = ...) -> None: ...

class ModelRef(_message.Message):
    __slots__ = ["base_url_host", "model", "profile", "protocol"]
    BASE_URL_HOST_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    base_url_host: str
    model: str
    profile: str
    protocol: str
    def __init__(self, profile: _Optional[str] = ..., model: _Optional[str] = ..., protocol: _Optional[str] = ..., base_url_host: _Optional[str] = ...) -> None: ...

class ModelRequestEvent(_message.Message):
    __slots__ = ["message_count", "step", "token_estimate", "tools"]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    message_count: int
    step: int
    token_estimate: int
    tools: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, step: _Optional[int] = ..., message_count: _Optional[int] = ..., token_estimate: _Optional[int] = ..., tools: _Optional[_Iterable[str]] = ...) -> None: ...

class ModelResponseEvent(_message.Message):
    __slots__ = ["finish_reason", "reasoning", "step", "text", "tool_calls", "usage"]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    finish_reason: str
    reasoning: str
    step: int
    text: str
    tool_calls: _containers.RepeatedCompositeFieldContainer[_message_pb2.ToolCallPart]
    usage: _message_pb2.Usage
    def __init__(self, step: _Optional[int] = ..., text: _Optional[str] = ..., reasoning: _Optional[str] = ..., tool_calls: _Optional[_Iterable[_Union[_message_pb2.ToolCallPart, _Mapping]]] = ..., usage: _Optional[_Union[_message_pb2.Usage, _Mapping]] = ..., finish_reason: _Optional[str] = ...) -> None: ...

class PermissionDecision(_message.Message):
    __slots__ = ["outcome", "reason"]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    outcome: PermissionOutcome
    reason: str
    def __init__(self, outcome: _Optional[_Union[PermissionOutcome, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class PermissionRequestEvent(_message.Message):
    __slots__ = ["arguments", "rerun", "tool_call_id", "tool_name"]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    RERUN_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    arguments: str
    rerun: bool
    tool_call_id: str
    tool_name: str
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., arguments: _Optional[str] = ..., rerun: bool = ...) -> None: ...

class RetryEvent(_message.Message):
    __slots__ = ["attempt", "compact", "delay", "kind", "message", "status"]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    COMPACT_FIELD_NUMBER: _ClassVar[int]
    DELAY_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    compact: bool
    delay: _duration_pb2.Duration
    kind: ErrorKind
    message: str
    status: int
    def __init__(self, attempt: _Optional[int] = ..., kind: _Optional[_Union[ErrorKind, str]] = ..., message: _Optional[str] = ..., status: _Optional[int] = ..., delay: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., compact: bool = ...) -> None: ...

class RunResultEvent(_message.Message):
    __slots__ = ["output", "reason", "run_usage", "steps", "text", "tree_usage", "usage"]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_USAGE_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TREE_USAGE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    output: _struct_pb2.Value
    reason: EndReason
    run_usage: RunUsage
    steps: int
    text: str
    tree_usage: RunUsage
    usage: _message_pb2.Usage
    def __init__(self, text: _Optional[str] = ..., steps: _Optional[int] = ..., usage: _Optional[_Union[_message_pb2.Usage, _Mapping]] = ..., reason: _Optional[_Union[EndReason, str]] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., run_usage: _Optional[_Union[RunUsage, _Mapping]] = ..., tree_usage: _Optional[_Union[RunUsage, _Mapping]] = ...) -> None: ...

class RunResumedEvent(_message.Message):
    __slots__ = ["attempt", "replica", "reported_call_ids", "rerun_call_ids", "step"]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    REPLICA_FIELD_NUMBER: _ClassVar[int]
    REPORTED_CALL_IDS_FIELD_NUMBER: _ClassVar[int]
    RERUN_CALL_IDS_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    replica: str
    reported_call_ids: _containers.RepeatedScalarFieldContainer[str]
    rerun_call_ids: _containers.RepeatedScalarFieldContainer[str]
    step: int
    def __init__(self, attempt: _Optional[int] = ..., replica: _Optional[str] = ..., step: _Optional[int] = ..., rerun_call_ids: _Optional[_Iterable[str]] = ..., reported_call_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class RunStartedEvent(_message.Message):
    __slots__ = ["agent_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class RunUsage(_message.Message):
    __slots__ = ["child_runs", "cost", "input_tokens", "model_requests", "output_tokens", "tool_calls", "wall_time"]
    CHILD_RUNS_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MODEL_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    WALL_TIME_FIELD_NUMBER: _ClassVar[int]
    child_runs: int
    cost: float
    input_tokens: int
    model_requests: int
    output_tokens: int
    tool_calls: int
    wall_time: _duration_pb2.Duration
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., model_requests: _Optional[int] = ..., tool_calls: _Optional[int] = ..., wall_time: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., cost: _Optional[float] = ..., child_runs: _Optional[int] = ...) -> None: ...

class StepEvent(_message.Message):
    __slots__ = ["response", "step", "tool_results"]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULTS_FIELD_NUMBER: _ClassVar[int]
    response: ModelResponseEvent
    step: int
    tool_results: _containers.RepeatedCompositeFieldContainer[_message_pb2.ToolResultPart]
    def __init__(self, step: _Optional[int] = ..., response: _Optional[_Union[ModelResponseEvent, _Mapping]] = ..., tool_results: _Optional[_Iterable[_Union[_message_pb2.ToolResultPart, _Mapping]]] = ...) -> None: ...

class ToolCallDelta(_message.Message):
    __slots__ = ["arguments", "id", "index", "name"]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    arguments: str
    id: str
    index: int
    name: str
    def __init__(self, index: _Optional[int] = ..., id: _Optional[str] = ..., name: _Optional[str] = ..., arguments: _Optional[str] = ...) -> None: ...

class ToolCallEvent(_message.Message):
    __slots__ = ["arguments", "permission", "step", "tool_call_id", "tool_name"]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    arguments: str
    permission: PermissionDecision
    step: int
    tool_call_id: str
    tool_name: str
    def __init__(self, step: _Optional[int] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., arguments: _Optional[str] = ..., permission: _Optional[_Union[PermissionDecision, _Mapping]] = ...) -> None: ...

class ToolOutputCappedEvent(_message.Message):
    __slots__ = ["dropped_bytes", "dropped_chunks", "kept_bytes", "max_bytes", "stopped", "tool_call_id", "tool_name"]
    DROPPED_BYTES_FIELD_NUMBER: _ClassVar[int]
    DROPPED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    KEPT_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    STOPPED_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    dropped_bytes: int
    dropped_chunks: int
    kept_bytes: int
    max_bytes: int
    stopped: bool
    tool_call_id: str
    tool_name: str
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., max_bytes: _Optional[int] = ..., kept_bytes: _Optional[int] = ..., dropped_bytes: _Optional[int] = ..., dropped_chunks: _Optional[int] = ..., stopped: bool = ...) -> None: ...

class ToolOutputEvent(_message.Message):
    __slots__ = ["data", "stream", "tool_call_id", "tool_name"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    data: str
    stream: OutputStream
    tool_call_id: str
    tool_name: str
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., stream: _Optional[_Union[OutputStream, str]] = ..., data: _Optional[str] = ...) -> None: ...

class ToolResultEvent(_message.Message):
    __slots__ = ["duration", "error", "output", "step", "stop", "tool_call_id", "tool_name"]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    duration: _duration_pb2.Duration
    error: bool
    output: _message_pb2.ToolOutput
    step: int
    stop: bool
    tool_call_id: str
    tool_name: str
    def __init__(self, step: _Optional[int] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., output: _Optional[_Union[_message_pb2.ToolOutput, _Mapping]] = ..., error: bool = ..., stop: bool = ..., duration: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class BudgetLimit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ElicitationAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class PermissionOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class OutputStream(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ErrorKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class EndReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
