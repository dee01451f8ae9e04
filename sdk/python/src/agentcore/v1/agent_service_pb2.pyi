from agentcore.v1 import config_pb2 as _config_pb2
from agentcore.v1 import connection_pb2 as _connection_pb2
from agentcore.v1 import event_pb2 as _event_pb2
from agentcore.v1 import message_pb2 as _message_pb2
from agentcore.v1 import run_pb2 as _run_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

AGENT_STATE_IDLE: AgentState
AGENT_STATE_RUNNING: AgentState
AGENT_STATE_UNSPECIFIED: AgentState
BUSY_POLICY_QUEUE: BusyPolicy
BUSY_POLICY_REJECT: BusyPolicy
BUSY_POLICY_REPLACE: BusyPolicy
BUSY_POLICY_UNSPECIFIED: BusyPolicy
DESCRIPTOR: _descriptor.FileDescriptor
PERMISSION_MODE_ALLOW_ALL: PermissionMode
PERMISSION_MODE_ASK_ALL: PermissionMode
PERMISSION_MODE_ASK_LISTED: PermissionMode
PERMISSION_MODE_UNSPECIFIED: PermissionMode
RENDER_LABELS_ENGLISH: RenderLabels
RENDER_LABELS_ORIGINAL: RenderLabels
RENDER_LABELS_UNSPECIFIED: RenderLabels

class Agent(_message.Message):
    __slots__ = ["agent_tools", "api_key_required", "budget", "config", "create_time", "effective_model", "has_api_key", "history_length", "id", "run_id", "skills", "state", "tools", "update_time", "usage"]
    AGENT_TOOLS_FIELD_NUMBER: _ClassVar[int]
    API_KEY_REQUIRED_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_MODEL_FIELD_NUMBER: _ClassVar[int]
    HAS_API_KEY_FIELD_NUMBER: _ClassVar[int]
    HISTORY_LENGTH_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    agent_tools: _containers.RepeatedCompositeFieldContainer[AgentTool]
    api_key_required: bool
    budget: _event_pb2.Budget
    config: _config_pb2.AgentConfig
    create_time: _timestamp_pb2.Timestamp
    effective_model: EffectiveModel
    has_api_key: bool
    history_length: int
    id: str
    run_id: str
    skills: SkillSelection
    state: AgentState
    tools: ToolSelection
    update_time: _timestamp_pb2.Timestamp
    usage: _message_pb2.Usage
    def __init__(self, id: _Optional[str] = ..., config: _Optional[_Union[_config_pb2.AgentConfig, _Mapping]] = ..., tools: _Optional[_Union[ToolSelection, _Mapping]] = ..., skills: _Optional[_Union[SkillSelection, _Mapping]] = ..., state: _Optional[_Union[AgentState, str]] = ..., run_id: _Optional[str] = ..., history_length: _Optional[int] = ..., usage: _Optional[_Union[_message_pb2.Usage, _Mapping]] = ..., has_api_key: bool = ..., create_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., api_key_required: bool = ..., effective_model: _Optional[_Union[EffectiveModel, _Mapping]] = ..., agent_tools: _Optional[_Iterable[_Union[AgentTool, _Mapping]]] = ..., budget: _Optional[_Union[_event_pb2.Budget, _Mapping]] = ...) -> None: ...

class AgentTool(_message.Message):
    __slots__ = ["agent_id", "busy_policy", "description", "input_schema", "name"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BUSY_POLICY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    busy_policy: BusyPolicy
    description: str
    input_schema: _struct_pb2.Struct
    name: str
    def __init__(self, agent_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., busy_policy: _Optional[_Union[BusyPolicy, str]] = ...) -> None: ...

class AttachRequest(_message.Message):
    __slots__ = ["after_seq", "agent_id", "attempt", "run_id"]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    after_seq: int
    agent_id: str
    attempt: int
    run_id: str
    def __init__(self, run_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., after_seq: _Optional[int] = ..., attempt: _Optional[int] = ...) -> None: ...

class AttachResponse(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...

class CompactRequest(_message.Message):
    __slots__ = ["agent_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class CompactResponse(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...

class CreateAgentRequest(_message.Message):
    __slots__ = ["agent", "agent_id", "history"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    agent_id: str
    history: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    def __init__(self, agent_id: _Optional[str] = ..., agent: _Optional[_Union[Agent, _Mapping]] = ..., history: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ...) -> None: ...

class CreateAgentResponse(_message.Message):
    __slots__ = ["agent"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ...) -> None: ...

class DeleteAgentRequest(_message.Message):
    __slots__ = ["agent_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class DeleteAgentResponse(_message.Message):
    __slots__ = ["stopped_run"]
    STOPPED_RUN_FIELD_NUMBER: _ClassVar[int]
    stopped_run: bool
    def __init__(self, stopped_run: bool = ...) -> None: ...

class DirectToolResult(_message.Message):
    __slots__ = ["duration", "error", "output", "stop"]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    duration: _duration_pb2.Duration
    error: bool
    output: _message_pb2.ToolOutput
    stop: bool
    def __init__(self, output: _Optional[_Union[_message_pb2.ToolOutput, _Mapping]] = ..., error: bool = ..., stop: bool = ..., duration: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class EffectiveModel(_message.Message):
    __slots__ = ["base_url_host", "follows_default", "model", "profile", "protocol"]
    BASE_URL_HOST_FIELD_NUMBER: _ClassVar[int]
    FOLLOWS_DEFAULT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    base_url_host: str
    follows_default: bool
    model: str
    profile: str
    protocol: _config_pb2.Protocol
    def __init__(self, profile: _Optional[str] = ..., follows_default: bool = ..., model: _Optional[str] = ..., protocol: _Optional[_Union[_config_pb2.Protocol, str]] = ..., base_url_host: _Optional[str] = ...) -> None: ...

class ExecuteToolRequest(_message.Message):
    __slots__ = ["input", "limit", "name"]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    input: _struct_pb2.Struct
    limit: int
    name: str
    def __init__(self, name: _Optional[str] = ..., input: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class ExecuteToolResponse(_message.Message):
    __slots__ = ["output", "result"]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    output: ToolOutputChunk
    result: DirectToolResult
    def __init__(self, output: _Optional[_Union[ToolOutputChunk, _Mapping]] = ..., result: _Optional[_Union[DirectToolResult, _Mapping]] = ...) -> None: ...

class GetAgentRequest(_message.Message):
    __slots__ = ["agent_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class GetAgentResponse(_message.Message):
    __slots__ = ["agent"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ...) -> None: ...

class GetHistoryRequest(_message.Message):
    __slots__ = ["agent_id", "include_rendered", "include_turns", "page_size", "page_token", "render_labels"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RENDERED_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TURNS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RENDER_LABELS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    include_rendered: bool
    include_turns: bool
    page_size: int
    page_token: str
    render_labels: RenderLabels
    def __init__(self, agent_id: _Optional[str] = ..., include_turns: bool = ..., include_rendered: bool = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., render_labels: _Optional[_Union[RenderLabels, str]] = ...) -> None: ...

class GetHistoryResponse(_message.Message):
    __slots__ = ["history_length", "messages", "next_page_token", "rendered", "start_index", "turns"]
    HISTORY_LENGTH_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RENDERED_FIELD_NUMBER: _ClassVar[int]
    START_INDEX_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    history_length: int
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    next_page_token: str
    rendered: str
    start_index: int
    turns: _containers.RepeatedCompositeFieldContainer[Turn]
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., turns: _Optional[_Iterable[_Union[Turn, _Mapping]]] = ..., rendered: _Optional[str] = ..., next_page_token: _Optional[str] = ..., start_index: _Optional[int] = ..., history_length: _Optional[int] = ...) -> None: ...

class GetRunRequest(_message.Message):
    __slots__ = ["run_id"]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class GetRunResponse(_message.Message):
    __slots__ = ["run"]
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: _run_pb2.Run
    def __init__(self, run: _Optional[_Union[_run_pb2.Run, _Mapping]] = ...) -> None: ...

class HistoryReplacement(_message.Message):
    __slots__ = ["messages"]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ...) -> None: ...

class ListAgentsRequest(_message.Message):
    __slots__ = ["page_size", "page_token"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAgentsResponse(_message.Message):
    __slots__ = ["agents", "next_page_token"]
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[Agent]
    next_page_token: str
    def __init__(self, agents: _Optional[_Iterable[_Union[Agent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListRunsRequest(_message.Message):
    __slots__ = ["agent_id", "page_size", "page_token", "root_run_id", "state"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ROOT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    page_size: int
    page_token: str
    root_run_id: str
    state: _run_pb2.RunState
    def __init__(self, agent_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., state: _Optional[_Union[_run_pb2.RunState, str]] = ..., root_run_id: _Optional[str] = ...) -> None: ...

class ListRunsResponse(_message.Message):
    __slots__ = ["next_page_token", "runs"]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    next_page_token: str
    runs: _containers.RepeatedCompositeFieldContainer[_run_pb2.Run]
    def __init__(self, runs: _Optional[_Iterable[_Union[_run_pb2.Run, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListToolsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListToolsResponse(_message.Message):
    __slots__ = ["limits_mechanism", "skills", "tools"]
    LIMITS_MECHANISM_FIELD_NUMBER: _ClassVar[int]
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    limits_mechanism: str
    skills: _containers.RepeatedCompositeFieldContainer[SkillInfo]
    tools: _containers.RepeatedCompositeFieldContainer[ToolInfo]
    def __init__(self, tools: _Optional[_Iterable[_Union[ToolInfo, _Mapping]]] = ..., skills: _Optional[_Iterable[_Union[SkillInfo, _Mapping]]] = ..., limits_mechanism: _Optional[str] = ...) -> None: ...

class PermissionReply(_message.Message):
    __slots__ = ["allow", "reason", "run_id", "tool_call_id"]
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    allow: bool
    reason: str
    run_id: str
    tool_call_id: str
    def __init__(self, tool_call_id: _Optional[str] = ..., allow: bool = ..., reason: _Optional[str] = ..., run_id: _Optional[str] = ...) -> None: ...

class PreviewContextRequest(_message.Message):
    __slots__ = ["agent_id", "input"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    input: _containers.RepeatedCompositeFieldContainer[_message_pb2.Part]
    def __init__(self, agent_id: _Optional[str] = ..., input: _Optional[_Iterable[_Union[_message_pb2.Part, _Mapping]]] = ...) -> None: ...

class PreviewContextResponse(_message.Message):
    __slots__ = ["history_tokens", "max_tokens", "messages", "system", "tokens", "would_compact"]
    HISTORY_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    WOULD_COMPACT_FIELD_NUMBER: _ClassVar[int]
    history_tokens: int
    max_tokens: int
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    system: str
    tokens: int
    would_compact: bool
    def __init__(self, system: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., tokens: _Optional[int] = ..., max_tokens: _Optional[int] = ..., would_compact: bool = ..., history_tokens: _Optional[int] = ...) -> None: ...

class ReloadToolsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ReloadToolsResponse(_message.Message):
    __slots__ = ["skills", "tools"]
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    skills: int
    tools: int
    def __init__(self, tools: _Optional[int] = ..., skills: _Optional[int] = ...) -> None: ...

class RespondElicitationRequest(_message.Message):
    __slots__ = ["action", "content", "elicitation_id", "run_id"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ELICITATION_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    action: _event_pb2.ElicitationAction
    content: _struct_pb2.Struct
    elicitation_id: str
    run_id: str
    def __init__(self, run_id: _Optional[str] = ..., elicitation_id: _Optional[str] = ..., action: _Optional[_Union[_event_pb2.ElicitationAction, str]] = ..., content: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class RespondElicitationResponse(_message.Message):
    __slots__ = ["content"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    content: _struct_pb2.Struct
    def __init__(self, content: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class RespondPermissionRequest(_message.Message):
    __slots__ = ["allow", "reason", "run_id", "tool_call_id"]
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    allow: bool
    reason: str
    run_id: str
    tool_call_id: str
    def __init__(self, run_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., allow: bool = ..., reason: _Optional[str] = ...) -> None: ...

class RespondPermissionResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class SendRequest(_message.Message):
    __slots__ = ["permission", "start", "stop"]
    PERMISSION_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    permission: PermissionReply
    start: StartRun
    stop: StopRun
    def __init__(self, start: _Optional[_Union[StartRun, _Mapping]] = ..., permission: _Optional[_Union[PermissionReply, _Mapping]] = ..., stop: _Optional[_Union[StopRun, _Mapping]] = ...) -> None: ...

class SendResponse(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...

class SetHistoryRequest(_message.Message):
    __slots__ = ["agent_id", "messages"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    def __init__(self, agent_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ...) -> None: ...

class SetHistoryResponse(_message.Message):
    __slots__ = ["history_length"]
    HISTORY_LENGTH_FIELD_NUMBER: _ClassVar[int]
    history_length: int
    def __init__(self, history_length: _Optional[int] = ...) -> None: ...

class SkillInfo(_message.Message):
    __slots__ = ["description", "name", "source"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    description: str
    name: str
    source: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class SkillSelection(_message.Message):
    __slots__ = ["all", "names"]
    ALL_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    all: bool
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, all: bool = ..., names: _Optional[_Iterable[str]] = ...) -> None: ...

class StartRun(_message.Message):
    __slots__ = ["agent_id", "ask_tools", "budget", "busy_policy", "config", "history", "input", "on_disconnect", "permission_mode", "resume", "tools"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ASK_TOOLS_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    BUSY_POLICY_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    ON_DISCONNECT_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_MODE_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    ask_tools: _containers.RepeatedScalarFieldContainer[str]
    budget: _event_pb2.Budget
    busy_policy: BusyPolicy
    config: _config_pb2.AgentConfig
    history: HistoryReplacement
    input: _containers.RepeatedCompositeFieldContainer[_message_pb2.Part]
    on_disconnect: _run_pb2.OnDisconnect
    permission_mode: PermissionMode
    resume: bool
    tools: ToolSelection
    def __init__(self, agent_id: _Optional[str] = ..., input: _Optional[_Iterable[_Union[_message_pb2.Part, _Mapping]]] = ..., config: _Optional[_Union[_config_pb2.AgentConfig, _Mapping]] = ..., history: _Optional[_Union[HistoryReplacement, _Mapping]] = ..., tools: _Optional[_Union[ToolSelection, _Mapping]] = ..., permission_mode: _Optional[_Union[PermissionMode, str]] = ..., ask_tools: _Optional[_Iterable[str]] = ..., busy_policy: _Optional[_Union[BusyPolicy, str]] = ..., on_disconnect: _Optional[_Union[_run_pb2.OnDisconnect, str]] = ..., resume: bool = ..., budget: _Optional[_Union[_event_pb2.Budget, _Mapping]] = ...) -> None: ...

class StopRequest(_message.Message):
    __slots__ = ["agent_id", "run_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    run_id: str
    def __init__(self, agent_id: _Optional[str] = ..., run_id: _Optional[str] = ...) -> None: ...

class StopResponse(_message.Message):
    __slots__ = ["stopped"]
    STOPPED_FIELD_NUMBER: _ClassVar[int]
    stopped: bool
    def __init__(self, stopped: bool = ...) -> None: ...

class StopRun(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ToolInfo(_message.Message):
    __slots__ = ["description", "idempotent", "input_schema", "limits", "name", "read_only", "source", "timeout"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENT_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    description: str
    idempotent: bool
    input_schema: _struct_pb2.Struct
    limits: ToolLimits
    name: str
    read_only: bool
    source: str
    timeout: _duration_pb2.Duration
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., source: _Optional[str] = ..., timeout: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., read_only: bool = ..., idempotent: bool = ..., limits: _Optional[_Union[ToolLimits, _Mapping]] = ...) -> None: ...

class ToolLimits(_message.Message):
    __slots__ = ["cpu_time", "max_open_files", "max_processes", "memory_bytes"]
    CPU_TIME_FIELD_NUMBER: _ClassVar[int]
    MAX_OPEN_FILES_FIELD_NUMBER: _ClassVar[int]
    MAX_PROCESSES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    cpu_time: _duration_pb2.Duration
    max_open_files: int
    max_processes: int
    memory_bytes: int
    def __init__(self, memory_bytes: _Optional[int] = ..., max_processes: _Optional[int] = ..., cpu_time: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., max_open_files: _Optional[int] = ...) -> None: ...

class ToolOutputChunk(_message.Message):
    __slots__ = ["data", "stream"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    data: str
    stream: _event_pb2.OutputStream
    def __init__(self, stream: _Optional[_Union[_event_pb2.OutputStream, str]] = ..., data: _Optional[str] = ...) -> None: ...

class ToolSelection(_message.Message):
    __slots__ = ["all", "names"]
    ALL_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    all: bool
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, all: bool = ..., names: _Optional[_Iterable[str]] = ...) -> None: ...

class Turn(_message.Message):
    __slots__ = ["message_indexes"]
    MESSAGE_INDEXES_FIELD_NUMBER: _ClassVar[int]
    message_indexes: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, message_indexes: _Optional[_Iterable[int]] = ...) -> None: ...

class UpdateAgentRequest(_message.Message):
    __slots__ = ["agent", "update_mask"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateAgentResponse(_message.Message):
    __slots__ = ["agent"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ...) -> None: ...

class AgentState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class BusyPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class PermissionMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class RenderLabels(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
