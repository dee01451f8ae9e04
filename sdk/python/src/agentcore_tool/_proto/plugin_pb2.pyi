from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

CREDENTIAL_OP_AUTHORIZE: CredentialOp
CREDENTIAL_OP_LOAD: CredentialOp
CREDENTIAL_OP_SAVE: CredentialOp
CREDENTIAL_OP_UNSPECIFIED: CredentialOp
DESCRIPTOR: _descriptor.FileDescriptor
ELICIT_ACTION_ACCEPT: ElicitAction
ELICIT_ACTION_CANCEL: ElicitAction
ELICIT_ACTION_DECLINE: ElicitAction
ELICIT_ACTION_UNSPECIFIED: ElicitAction
HOST_ERROR_CODE_CANCELLED: HostErrorCode
HOST_ERROR_CODE_DENIED: HostErrorCode
HOST_ERROR_CODE_FAILED: HostErrorCode
HOST_ERROR_CODE_INVALID: HostErrorCode
HOST_ERROR_CODE_NOT_CONNECTED: HostErrorCode
HOST_ERROR_CODE_UNSPECIFIED: HostErrorCode
HOST_ERROR_CODE_UNSUPPORTED: HostErrorCode
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

class Credential(_message.Message):
    __slots__ = ["access_token", "authorization_endpoint", "client_id", "client_secret", "expiry", "issuer", "private_key_pem", "redirect_uri", "refresh_token", "resource", "scopes", "signing_algorithm", "token_endpoint", "token_endpoint_auth_method", "token_type"]
    ACCESS_TOKEN_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_SECRET_FIELD_NUMBER: _ClassVar[int]
    EXPIRY_FIELD_NUMBER: _ClassVar[int]
    ISSUER_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_KEY_PEM_FIELD_NUMBER: _ClassVar[int]
    REDIRECT_URI_FIELD_NUMBER: _ClassVar[int]
    REFRESH_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    SIGNING_ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ENDPOINT_AUTH_METHOD_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_TYPE_FIELD_NUMBER: _ClassVar[int]
    access_token: str
    authorization_endpoint: str
    client_id: str
    client_secret: str
    expiry: _timestamp_pb2.Timestamp
    issuer: str
    private_key_pem: str
    redirect_uri: str
    refresh_token: str
    resource: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    signing_algorithm: str
    token_endpoint: str
    token_endpoint_auth_method: str
    token_type: str
    def __init__(self, access_token: _Optional[str] = ..., token_type: _Optional[str] = ..., refresh_token: _Optional[str] = ..., expiry: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., client_id: _Optional[str] = ..., client_secret: _Optional[str] = ..., token_endpoint_auth_method: _Optional[str] = ..., authorization_endpoint: _Optional[str] = ..., token_endpoint: _Optional[str] = ..., issuer: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., resource: _Optional[str] = ..., redirect_uri: _Optional[str] = ..., private_key_pem: _Optional[str] = ..., signing_algorithm: _Optional[str] = ...) -> None: ...

class CredentialRequest(_message.Message):
    __slots__ = ["authorization_url", "credential", "op"]
    AUTHORIZATION_URL_FIELD_NUMBER: _ClassVar[int]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    OP_FIELD_NUMBER: _ClassVar[int]
    authorization_url: str
    credential: Credential
    op: CredentialOp
    def __init__(self, op: _Optional[_Union[CredentialOp, str]] = ..., credential: _Optional[_Union[Credential, _Mapping]] = ..., authorization_url: _Optional[str] = ...) -> None: ...

class CredentialResponse(_message.Message):
    __slots__ = ["code", "credential", "iss", "state"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    ISS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    code: str
    credential: Credential
    iss: str
    state: str
    def __init__(self, credential: _Optional[_Union[Credential, _Mapping]] = ..., code: _Optional[str] = ..., state: _Optional[str] = ..., iss: _Optional[str] = ...) -> None: ...

class DescribeRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class DescribeResponse(_message.Message):
    __slots__ = ["tools"]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    tools: _containers.RepeatedCompositeFieldContainer[ToolSpec]
    def __init__(self, tools: _Optional[_Iterable[_Union[ToolSpec, _Mapping]]] = ...) -> None: ...

class ElicitRequest(_message.Message):
    __slots__ = ["message", "requested_schema_json"]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    message: str
    requested_schema_json: str
    def __init__(self, message: _Optional[str] = ..., requested_schema_json: _Optional[str] = ...) -> None: ...

class ElicitResponse(_message.Message):
    __slots__ = ["action", "content_json"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    CONTENT_JSON_FIELD_NUMBER: _ClassVar[int]
    action: ElicitAction
    content_json: str
    def __init__(self, action: _Optional[_Union[ElicitAction, str]] = ..., content_json: _Optional[str] = ...) -> None: ...

class ExecuteRequest(_message.Message):
    __slots__ = ["attempt", "call_id", "host_requests", "idempotency_key", "input_json", "tool", "trace_context"]
    class TraceContextEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    HOST_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    INPUT_JSON_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    TRACE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    call_id: str
    host_requests: bool
    idempotency_key: str
    input_json: str
    tool: str
    trace_context: _containers.ScalarMap[str, str]
    def __init__(self, tool: _Optional[str] = ..., input_json: _Optional[str] = ..., call_id: _Optional[str] = ..., trace_context: _Optional[_Mapping[str, str]] = ..., idempotency_key: _Optional[str] = ..., attempt: _Optional[int] = ..., host_requests: bool = ...) -> None: ...

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

class HostError(_message.Message):
    __slots__ = ["code", "message"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: HostErrorCode
    message: str
    def __init__(self, code: _Optional[_Union[HostErrorCode, str]] = ..., message: _Optional[str] = ...) -> None: ...

class HostRequest(_message.Message):
    __slots__ = ["credential", "elicit", "id", "sample"]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    ELICIT_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_FIELD_NUMBER: _ClassVar[int]
    credential: CredentialRequest
    elicit: ElicitRequest
    id: int
    sample: SampleRequest
    def __init__(self, id: _Optional[int] = ..., elicit: _Optional[_Union[ElicitRequest, _Mapping]] = ..., sample: _Optional[_Union[SampleRequest, _Mapping]] = ..., credential: _Optional[_Union[CredentialRequest, _Mapping]] = ...) -> None: ...

class HostResponse(_message.Message):
    __slots__ = ["credential", "elicit", "error", "id", "sample"]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    ELICIT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_FIELD_NUMBER: _ClassVar[int]
    credential: CredentialResponse
    elicit: ElicitResponse
    error: HostError
    id: int
    sample: SampleResponse
    def __init__(self, id: _Optional[int] = ..., elicit: _Optional[_Union[ElicitResponse, _Mapping]] = ..., sample: _Optional[_Union[SampleResponse, _Mapping]] = ..., error: _Optional[_Union[HostError, _Mapping]] = ..., credential: _Optional[_Union[CredentialResponse, _Mapping]] = ...) -> None: ...

class OutputChunk(_message.Message):
    __slots__ = ["data", "stream"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    stream: OutputStream
    def __init__(self, stream: _Optional[_Union[OutputStream, str]] = ..., data: _Optional[bytes] = ...) -> None: ...

class SampleMessage(_message.Message):
    __slots__ = ["content", "role"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    content: _containers.RepeatedCompositeFieldContainer[ContentPart]
    role: str
    def __init__(self, role: _Optional[str] = ..., content: _Optional[_Iterable[_Union[ContentPart, _Mapping]]] = ...) -> None: ...

class SampleRequest(_message.Message):
    __slots__ = ["max_tokens", "messages", "model_hints", "stop_sequences", "system_prompt", "temperature"]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MODEL_HINTS_FIELD_NUMBER: _ClassVar[int]
    STOP_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    max_tokens: int
    messages: _containers.RepeatedCompositeFieldContainer[SampleMessage]
    model_hints: _containers.RepeatedScalarFieldContainer[str]
    stop_sequences: _containers.RepeatedScalarFieldContainer[str]
    system_prompt: str
    temperature: float
    def __init__(self, messages: _Optional[_Iterable[_Union[SampleMessage, _Mapping]]] = ..., system_prompt: _Optional[str] = ..., max_tokens: _Optional[int] = ..., temperature: _Optional[float] = ..., stop_sequences: _Optional[_Iterable[str]] = ..., model_hints: _Optional[_Iterable[str]] = ...) -> None: ...

class SampleResponse(_message.Message):
    __slots__ = ["content", "model", "role", "stop_reason"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    content: _containers.RepeatedCompositeFieldContainer[ContentPart]
    model: str
    role: str
    stop_reason: str
    def __init__(self, role: _Optional[str] = ..., content: _Optional[_Iterable[_Union[ContentPart, _Mapping]]] = ..., model: _Optional[str] = ..., stop_reason: _Optional[str] = ...) -> None: ...

class SessionRequest(_message.Message):
    __slots__ = ["describe", "execute", "host_response"]
    DESCRIBE_FIELD_NUMBER: _ClassVar[int]
    EXECUTE_FIELD_NUMBER: _ClassVar[int]
    HOST_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    describe: DescribeRequest
    execute: ExecuteRequest
    host_response: HostResponse
    def __init__(self, execute: _Optional[_Union[ExecuteRequest, _Mapping]] = ..., host_response: _Optional[_Union[HostResponse, _Mapping]] = ..., describe: _Optional[_Union[DescribeRequest, _Mapping]] = ...) -> None: ...

class SessionResponse(_message.Message):
    __slots__ = ["describe", "execute", "host_request"]
    DESCRIBE_FIELD_NUMBER: _ClassVar[int]
    EXECUTE_FIELD_NUMBER: _ClassVar[int]
    HOST_REQUEST_FIELD_NUMBER: _ClassVar[int]
    describe: DescribeResponse
    execute: ExecuteResponse
    host_request: HostRequest
    def __init__(self, execute: _Optional[_Union[ExecuteResponse, _Mapping]] = ..., host_request: _Optional[_Union[HostRequest, _Mapping]] = ..., describe: _Optional[_Union[DescribeResponse, _Mapping]] = ...) -> None: ...

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

class HostErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class CredentialOp(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ElicitAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
