#!/usr/bin/env bash
# sdk-proto.sh: regenerate the Python SDK's code and the Node SDK's copy of
# plugin.proto. Python's is made by protoc 3.21 (Debian bookworm's
# protobuf-compiler), whose output the protobuf runtime 4.21 and later read:
# a newer protoc makes code that Debian's python3-protobuf cannot import.
# make sdk-proto runs it; PROTOC and SDK_PY_PROTO come from the Makefile.
set -euo pipefail
: "${PROTOC:?}" "${SDK_PY_PROTO:?}"
if ! $PROTOC --version 2>/dev/null | grep -q '^libprotoc 3\.21\.'; then
	echo "sdk-proto needs protoc 3.21 (apt-get install protobuf-compiler on Debian bookworm), found: $($PROTOC --version 2>&1)"
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$PROTOC -I proto --python_out="$tmp" --pyi_out="$tmp" agentcore/plugin/v1/plugin.proto
cp "$tmp/agentcore/plugin/v1/plugin_pb2.py" "$tmp/agentcore/plugin/v1/plugin_pb2.pyi" "$SDK_PY_PROTO/"
mkdir -p sdk/node/proto/agentcore/plugin/v1
cp proto/agentcore/plugin/v1/plugin.proto sdk/node/proto/agentcore/plugin/v1/plugin.proto
