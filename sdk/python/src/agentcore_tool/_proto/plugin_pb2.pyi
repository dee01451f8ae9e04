from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
OUTPUT_STREAM_OUTPUT: OutputStream
OUTPUT_STREAM_STDERR: OutputStream
OUTPUT_STREAM_STDOUT: OutputStream
OUTPUT_STREAM_UNSPECIFIED: OutputStream

class ContentPart(_message.Message):
    __slots__ = ["file", "text"]
    FILE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    file: FilePart
    text: str
    def __init__(self, text: _Optional[str] = ..., file: _Optional[_Union[FilePart, _Mapping]] = ...) -> None: ...

class ContentParts(_message.Message):
    __slots__ = ["parts"]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    parts: _containers.RepeatedCompositeFieldContainer[ContentPart]
    def __init__(self, parts: _Optional[_Iterable[_Union[ContentPart, _Mapping]]] = ...) -> None: ...

class DescribeRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class DescribeResponse(_message.Message):
    __slots__ = ["tools"]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    tools: _containers.RepeatedCompositeFieldContainer[ToolSpec]
    def __init__(self, tools: _Optional[_Iterable[_Union[ToolSpec, _Mapping]]] = ...) -> None: ...

class ExecuteRequest(_message.Message):
    __slots__ = ["attempt", "call_id", "idempotency_key", "input_json", "tool", "trace_context"]
    class TraceContextEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    INPUT_JSON_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    TRACE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    call_id: str
    idempotency_key: str
    input_json: str
    tool: str
    trace_context: _containers.ScalarMap[str, str]
    def __init__(self, tool: _Optional[str] = ..., input_json: _Optional[str] = ..., call_id: _Optional[str] = ..., trace_context: _Optional[_Mapping[str, str]] = ..., idempotency_key: _Optional[str] = ..., attempt: _Optional[int] = ...) -> None: ...

class ExecuteResponse(_message.Message):
    __slots__ = ["output", "result"]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    output: OutputChunk
    result: ToolResult
    def __init__(self, output: _Optional[_Union[OutputChunk, _Mapping]] = ..., result: _Optional[_Union[ToolResult, _Mapping]] = ...) -> None: ...

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

class OutputChunk(_message.Message):
    __slots__ = ["data", "stream"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    stream: OutputStream
    def __init__(self, stream: _Optional[_Union[OutputStream, str]] = ..., data: _Optional[bytes] = ...) -> None: ...

class SessionRequest(_message.Message):
    __slots__ = ["execute"]
    EXECUTE_FIELD_NUMBER: _ClassVar[int]
    execute: ExecuteRequest
    def __init__(self, execute: _Optional[_Union[ExecuteRequest, _Mapping]] = ...) -> None: ...

class SessionResponse(_message.Message):
    __slots__ = ["execute"]
    EXECUTE_FIELD_NUMBER: _ClassVar[int]
    execute: ExecuteResponse
    def __init__(self, execute: _Optional[_Union[ExecuteResponse, _Mapping]] = ...) -> None: ...

class ToolHints(_message.Message):
    __slots__ = ["idempotent", "read_only"]
    IDEMPOTENT_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    idempotent: bool
    read_only: bool
    def __init__(self, read_only: bool = ..., idempotent: bool = ...) -> None: ...

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

class ToolResult(_message.Message):
    __slots__ = ["content", "error", "json", "stop", "text"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    content: ContentParts
    error: str
    json: str
    stop: bool
    text: str
    def __init__(self, text: _Optional[str] = ..., json: _Optional[str] = ..., content: _Optional[_Union[ContentParts, _Mapping]] = ..., stop: bool = ..., error: _Optional[str] = ...) -> None: ...

class ToolSpec(_message.Message):
    __slots__ = ["description", "hints", "input_schema_json", "limits", "name", "timeout"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    HINTS_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    description: str
    hints: ToolHints
    input_schema_json: str
    limits: ToolLimits
    name: str
    timeout: _duration_pb2.Duration
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema_json: _Optional[str] = ..., timeout: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., hints: _Optional[_Union[ToolHints, _Mapping]] = ..., limits: _Optional[_Union[ToolLimits, _Mapping]] = ...) -> None: ...

class OutputStream(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
