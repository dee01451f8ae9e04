from agentcore.v1 import event_pb2 as _event_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
ON_DISCONNECT_CONTINUE: OnDisconnect
ON_DISCONNECT_STOP: OnDisconnect
ON_DISCONNECT_UNSPECIFIED: OnDisconnect
RUN_STATE_FAILED: RunState
RUN_STATE_INTERRUPTED: RunState
RUN_STATE_RUNNING: RunState
RUN_STATE_STOPPED: RunState
RUN_STATE_SUCCEEDED: RunState
RUN_STATE_UNSPECIFIED: RunState

class Run(_message.Message):
    __slots__ = ["agent_id", "attempts", "compaction", "depth", "end_time", "error", "event_bytes", "events_expired", "id", "last_seq", "lease_expire_time", "on_disconnect", "parent_run_id", "pending_elicitations", "pending_permissions", "replica", "result", "root_run_id", "start_time", "state", "tool_call_id", "user"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EVENTS_EXPIRED_FIELD_NUMBER: _ClassVar[int]
    EVENT_BYTES_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LEASE_EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    ON_DISCONNECT_FIELD_NUMBER: _ClassVar[int]
    PARENT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    PENDING_ELICITATIONS_FIELD_NUMBER: _ClassVar[int]
    PENDING_PERMISSIONS_FIELD_NUMBER: _ClassVar[int]
    REPLICA_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ROOT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    attempts: int
    compaction: bool
    depth: int
    end_time: _timestamp_pb2.Timestamp
    error: RunError
    event_bytes: int
    events_expired: bool
    id: str
    last_seq: int
    lease_expire_time: _timestamp_pb2.Timestamp
    on_disconnect: OnDisconnect
    parent_run_id: str
    pending_elicitations: _containers.RepeatedCompositeFieldContainer[_event_pb2.ElicitationRequestEvent]
    pending_permissions: _containers.RepeatedCompositeFieldContainer[_event_pb2.PermissionRequestEvent]
    replica: str
    result: _event_pb2.RunResultEvent
    root_run_id: str
    start_time: _timestamp_pb2.Timestamp
    state: RunState
    tool_call_id: str
    user: str
    def __init__(self, id: _Optional[str] = ..., agent_id: _Optional[str] = ..., state: _Optional[_Union[RunState, str]] = ..., result: _Optional[_Union[_event_pb2.RunResultEvent, _Mapping]] = ..., error: _Optional[_Union[RunError, _Mapping]] = ..., start_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., replica: _Optional[str] = ..., lease_expire_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_seq: _Optional[int] = ..., on_disconnect: _Optional[_Union[OnDisconnect, str]] = ..., compaction: bool = ..., pending_permissions: _Optional[_Iterable[_Union[_event_pb2.PermissionRequestEvent, _Mapping]]] = ..., events_expired: bool = ..., event_bytes: _Optional[int] = ..., attempts: _Optional[int] = ..., parent_run_id: _Optional[str] = ..., root_run_id: _Optional[str] = ..., depth: _Optional[int] = ..., tool_call_id: _Optional[str] = ..., pending_elicitations: _Optional[_Iterable[_Union[_event_pb2.ElicitationRequestEvent, _Mapping]]] = ..., user: _Optional[str] = ...) -> None: ...

class RunError(_message.Message):
    __slots__ = ["code", "message", "metadata", "reason"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    metadata: _containers.ScalarMap[str, str]
    reason: str
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., reason: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class RunState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class OnDisconnect(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
