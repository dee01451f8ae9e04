from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

CONNECTION_STATE_CONNECTED: ConnectionState
CONNECTION_STATE_NOT_CONNECTED: ConnectionState
CONNECTION_STATE_PENDING: ConnectionState
CONNECTION_STATE_UNSPECIFIED: ConnectionState
DESCRIPTOR: _descriptor.FileDescriptor

class ConnectRequest(_message.Message):
    __slots__ = ["server"]
    SERVER_FIELD_NUMBER: _ClassVar[int]
    server: str
    def __init__(self, server: _Optional[str] = ...) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = ["authorization_url", "connection", "expire_time"]
    AUTHORIZATION_URL_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    authorization_url: str
    connection: Connection
    expire_time: _timestamp_pb2.Timestamp
    def __init__(self, authorization_url: _Optional[str] = ..., expire_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., connection: _Optional[_Union[Connection, _Mapping]] = ...) -> None: ...

class Connection(_message.Message):
    __slots__ = ["consent", "expire_time", "issuer", "scopes", "server", "state", "subject", "update_time"]
    CONSENT_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    ISSUER_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    SERVER_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    consent: bool
    expire_time: _timestamp_pb2.Timestamp
    issuer: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    server: str
    state: ConnectionState
    subject: str
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, server: _Optional[str] = ..., state: _Optional[_Union[ConnectionState, str]] = ..., consent: bool = ..., subject: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., issuer: _Optional[str] = ..., expire_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class DisconnectRequest(_message.Message):
    __slots__ = ["server"]
    SERVER_FIELD_NUMBER: _ClassVar[int]
    server: str
    def __init__(self, server: _Optional[str] = ...) -> None: ...

class DisconnectResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListConnectionsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListConnectionsResponse(_message.Message):
    __slots__ = ["connections"]
    CONNECTIONS_FIELD_NUMBER: _ClassVar[int]
    connections: _containers.RepeatedCompositeFieldContainer[Connection]
    def __init__(self, connections: _Optional[_Iterable[_Union[Connection, _Mapping]]] = ...) -> None: ...

class ConnectionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
