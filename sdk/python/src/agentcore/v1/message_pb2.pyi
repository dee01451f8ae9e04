from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
ROLE_ASSISTANT: Role
ROLE_SYSTEM: Role
ROLE_TOOL: Role
ROLE_UNSPECIFIED: Role
ROLE_USER: Role

class ContentParts(_message.Message):
    __slots__ = ["parts"]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    parts: _containers.RepeatedCompositeFieldContainer[Part]
    def __init__(self, parts: _Optional[_Iterable[_Union[Part, _Mapping]]] = ...) -> None: ...

class FilePart(_message.Message):
    __slots__ = ["data", "filename", "media_type", "url"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    filename: str
    media_type: str
    url: str
    def __init__(self, media_type: _Optional[str] = ..., data: _Optional[bytes] = ..., url: _Optional[str] = ..., filename: _Optional[str] = ...) -> None: ...

class Message(_message.Message):
    __slots__ = ["compact", "create_time", "finish_reason", "id", "parts", "role", "usage"]
    COMPACT_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    compact: bool
    create_time: _timestamp_pb2.Timestamp
    finish_reason: str
    id: str
    parts: _containers.RepeatedCompositeFieldContainer[Part]
    role: Role
    usage: Usage
    def __init__(self, id: _Optional[str] = ..., role: _Optional[_Union[Role, str]] = ..., parts: _Optional[_Iterable[_Union[Part, _Mapping]]] = ..., compact: bool = ..., create_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., finish_reason: _Optional[str] = ...) -> None: ...

class Part(_message.Message):
    __slots__ = ["audio", "file", "image", "reasoning", "text", "tool_call", "tool_result", "video"]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    VIDEO_FIELD_NUMBER: _ClassVar[int]
    audio: FilePart
    file: FilePart
    image: FilePart
    reasoning: ReasoningPart
    text: str
    tool_call: ToolCallPart
    tool_result: ToolResultPart
    video: FilePart
    def __init__(self, text: _Optional[str] = ..., reasoning: _Optional[_Union[ReasoningPart, _Mapping]] = ..., image: _Optional[_Union[FilePart, _Mapping]] = ..., file: _Optional[_Union[FilePart, _Mapping]] = ..., audio: _Optional[_Union[FilePart, _Mapping]] = ..., video: _Optional[_Union[FilePart, _Mapping]] = ..., tool_call: _Optional[_Union[ToolCallPart, _Mapping]] = ..., tool_result: _Optional[_Union[ToolResultPart, _Mapping]] = ...) -> None: ...

class ReasoningPart(_message.Message):
    __slots__ = ["provider_data", "text"]
    class ProviderDataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PROVIDER_DATA_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    provider_data: _containers.ScalarMap[str, str]
    text: str
    def __init__(self, text: _Optional[str] = ..., provider_data: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ToolCallPart(_message.Message):
    __slots__ = ["arguments", "id", "name", "provider_data"]
    class ProviderDataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_DATA_FIELD_NUMBER: _ClassVar[int]
    arguments: str
    id: str
    name: str
    provider_data: _containers.ScalarMap[str, str]
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments: _Optional[str] = ..., provider_data: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ToolOutput(_message.Message):
    __slots__ = ["content", "json", "text"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    content: ContentParts
    json: str
    text: str
    def __init__(self, text: _Optional[str] = ..., json: _Optional[str] = ..., content: _Optional[_Union[ContentParts, _Mapping]] = ...) -> None: ...

class ToolResultPart(_message.Message):
    __slots__ = ["error", "output", "tool_call_id", "tool_name"]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    error: bool
    output: ToolOutput
    tool_call_id: str
    tool_name: str
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., output: _Optional[_Union[ToolOutput, _Mapping]] = ..., error: bool = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ["cache_read_tokens", "cache_write_tokens", "input_tokens", "output_tokens", "reasoning_tokens", "total_tokens"]
    CACHE_READ_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REASONING_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    cache_read_tokens: int
    cache_write_tokens: int
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    total_tokens: int
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., total_tokens: _Optional[int] = ..., cache_read_tokens: _Optional[int] = ..., cache_write_tokens: _Optional[int] = ..., reasoning_tokens: _Optional[int] = ...) -> None: ...

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
