from agentcore.v1 import event_pb2 as _event_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

CUT_CALLS_ASK: CutCalls
CUT_CALLS_REPORT: CutCalls
CUT_CALLS_UNSPECIFIED: CutCalls
DESCRIPTOR: _descriptor.FileDescriptor
MEDIA_FALLBACK_ERROR: MediaFallback
MEDIA_FALLBACK_STRIP: MediaFallback
MEDIA_FALLBACK_UNSPECIFIED: MediaFallback
ON_INTERRUPT_FAIL: OnInterrupt
ON_INTERRUPT_RESUME: OnInterrupt
ON_INTERRUPT_UNSPECIFIED: OnInterrupt
OUTPUT_KIND_ARRAY: OutputKind
OUTPUT_KIND_JSON: OutputKind
OUTPUT_KIND_OBJECT: OutputKind
OUTPUT_KIND_UNSPECIFIED: OutputKind
PROTOCOL_ANTHROPIC: Protocol
PROTOCOL_CHAT: Protocol
PROTOCOL_GEMINI: Protocol
PROTOCOL_RESPONSES: Protocol
PROTOCOL_UNSPECIFIED: Protocol
TOOL_MODE_AUTO: ToolMode
TOOL_MODE_NATIVE: ToolMode
TOOL_MODE_TEXT: ToolMode
TOOL_MODE_UNSPECIFIED: ToolMode

class AgentConfig(_message.Message):
    __slots__ = ["api_key", "base_url", "cache", "capabilities", "compact", "compact_threshold", "cut_calls", "fallback", "max_live_output", "max_steps", "max_tokens", "max_tool_concurrency", "max_tool_output", "media_fallback", "model", "no_tool_prompt", "no_tool_rounds", "on_interrupt", "output", "profile", "protocol", "provider", "request_timeout", "retry_max_delay", "retry_max_elapsed", "stream", "system", "tool_mode", "webhook"]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    CACHE_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    COMPACT_FIELD_NUMBER: _ClassVar[int]
    COMPACT_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    CUT_CALLS_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    MAX_LIVE_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MAX_TOOL_CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    MAX_TOOL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    MEDIA_FALLBACK_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    NO_TOOL_PROMPT_FIELD_NUMBER: _ClassVar[int]
    NO_TOOL_ROUNDS_FIELD_NUMBER: _ClassVar[int]
    ON_INTERRUPT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    REQUEST_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    RETRY_MAX_DELAY_FIELD_NUMBER: _ClassVar[int]
    RETRY_MAX_ELAPSED_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_FIELD_NUMBER: _ClassVar[int]
    TOOL_MODE_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    api_key: str
    base_url: str
    cache: CacheConfig
    capabilities: Capabilities
    compact: CompactConfig
    compact_threshold: float
    cut_calls: CutCalls
    fallback: FallbackConfig
    max_live_output: int
    max_steps: int
    max_tokens: int
    max_tool_concurrency: int
    max_tool_output: int
    media_fallback: MediaFallback
    model: str
    no_tool_prompt: str
    no_tool_rounds: int
    on_interrupt: OnInterrupt
    output: OutputFormat
    profile: str
    protocol: Protocol
    provider: ProviderOptions
    request_timeout: _duration_pb2.Duration
    retry_max_delay: _duration_pb2.Duration
    retry_max_elapsed: _duration_pb2.Duration
    stream: bool
    system: str
    tool_mode: ToolMode
    webhook: Webhook
    def __init__(self, profile: _Optional[str] = ..., base_url: _Optional[str] = ..., api_key: _Optional[str] = ..., model: _Optional[str] = ..., protocol: _Optional[_Union[Protocol, str]] = ..., system: _Optional[str] = ..., stream: bool = ..., cache: _Optional[_Union[CacheConfig, _Mapping]] = ..., tool_mode: _Optional[_Union[ToolMode, str]] = ..., capabilities: _Optional[_Union[Capabilities, _Mapping]] = ..., media_fallback: _Optional[_Union[MediaFallback, str]] = ..., provider: _Optional[_Union[ProviderOptions, _Mapping]] = ..., max_tool_output: _Optional[int] = ..., max_tokens: _Optional[int] = ..., compact_threshold: _Optional[float] = ..., compact: _Optional[_Union[CompactConfig, _Mapping]] = ..., output: _Optional[_Union[OutputFormat, _Mapping]] = ..., max_steps: _Optional[int] = ..., max_tool_concurrency: _Optional[int] = ..., retry_max_delay: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., retry_max_elapsed: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., request_timeout: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., no_tool_prompt: _Optional[str] = ..., no_tool_rounds: _Optional[int] = ..., max_live_output: _Optional[int] = ..., on_interrupt: _Optional[_Union[OnInterrupt, str]] = ..., cut_calls: _Optional[_Union[CutCalls, str]] = ..., fallback: _Optional[_Union[FallbackConfig, _Mapping]] = ..., webhook: _Optional[_Union[Webhook, _Mapping]] = ...) -> None: ...

class CacheConfig(_message.Message):
    __slots__ = ["body", "enabled", "key", "retention"]
    BODY_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    RETENTION_FIELD_NUMBER: _ClassVar[int]
    body: _struct_pb2.Struct
    enabled: bool
    key: str
    retention: str
    def __init__(self, enabled: bool = ..., key: _Optional[str] = ..., retention: _Optional[str] = ..., body: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Capabilities(_message.Message):
    __slots__ = ["audio", "file", "image", "reasoning", "structured_output", "tool_choice", "tools", "video"]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    STRUCTURED_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    VIDEO_FIELD_NUMBER: _ClassVar[int]
    audio: bool
    file: bool
    image: bool
    reasoning: bool
    structured_output: bool
    tool_choice: bool
    tools: bool
    video: bool
    def __init__(self, image: bool = ..., audio: bool = ..., video: bool = ..., file: bool = ..., tools: bool = ..., structured_output: bool = ..., tool_choice: bool = ..., reasoning: bool = ...) -> None: ...

class CompactConfig(_message.Message):
    __slots__ = ["api_key", "base_url", "model", "profile", "protocol", "provider"]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    api_key: str
    base_url: str
    model: str
    profile: str
    protocol: Protocol
    provider: ProviderOptions
    def __init__(self, profile: _Optional[str] = ..., base_url: _Optional[str] = ..., api_key: _Optional[str] = ..., model: _Optional[str] = ..., protocol: _Optional[_Union[Protocol, str]] = ..., provider: _Optional[_Union[ProviderOptions, _Mapping]] = ...) -> None: ...

class FallbackConfig(_message.Message):
    __slots__ = ["models", "on"]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    ON_FIELD_NUMBER: _ClassVar[int]
    models: _containers.RepeatedCompositeFieldContainer[FallbackModel]
    on: _containers.RepeatedScalarFieldContainer[_event_pb2.ErrorKind]
    def __init__(self, models: _Optional[_Iterable[_Union[FallbackModel, _Mapping]]] = ..., on: _Optional[_Iterable[_Union[_event_pb2.ErrorKind, str]]] = ...) -> None: ...

class FallbackModel(_message.Message):
    __slots__ = ["api_key", "base_url", "model", "profile", "protocol", "provider"]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    api_key: str
    base_url: str
    model: str
    profile: str
    protocol: Protocol
    provider: ProviderOptions
    def __init__(self, profile: _Optional[str] = ..., base_url: _Optional[str] = ..., api_key: _Optional[str] = ..., model: _Optional[str] = ..., protocol: _Optional[_Union[Protocol, str]] = ..., provider: _Optional[_Union[ProviderOptions, _Mapping]] = ...) -> None: ...

class OutputFormat(_message.Message):
    __slots__ = ["description", "kind", "name", "schema"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    description: str
    kind: OutputKind
    name: str
    schema: _struct_pb2.Struct
    def __init__(self, kind: _Optional[_Union[OutputKind, str]] = ..., schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., name: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class ProviderOptions(_message.Message):
    __slots__ = ["body", "frequency_penalty", "headers", "max_output_tokens", "presence_penalty", "provider_options", "seed", "stop", "temperature", "tool_choice", "top_k", "top_p"]
    class HeadersEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    BODY_FIELD_NUMBER: _ClassVar[int]
    FREQUENCY_PENALTY_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PRESENCE_PENALTY_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    TOP_P_FIELD_NUMBER: _ClassVar[int]
    body: _struct_pb2.Struct
    frequency_penalty: float
    headers: _containers.ScalarMap[str, str]
    max_output_tokens: int
    presence_penalty: float
    provider_options: _struct_pb2.Struct
    seed: int
    stop: _containers.RepeatedScalarFieldContainer[str]
    temperature: float
    tool_choice: str
    top_k: int
    top_p: float
    def __init__(self, temperature: _Optional[float] = ..., top_p: _Optional[float] = ..., top_k: _Optional[int] = ..., max_output_tokens: _Optional[int] = ..., stop: _Optional[_Iterable[str]] = ..., seed: _Optional[int] = ..., presence_penalty: _Optional[float] = ..., frequency_penalty: _Optional[float] = ..., tool_choice: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., body: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Webhook(_message.Message):
    __slots__ = ["on_permission", "url"]
    ON_PERMISSION_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    on_permission: bool
    url: str
    def __init__(self, url: _Optional[str] = ..., on_permission: bool = ...) -> None: ...

class Protocol(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ToolMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class MediaFallback(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class OnInterrupt(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class CutCalls(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class OutputKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
