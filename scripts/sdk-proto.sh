#!/usr/bin/env bash
# sdk-proto.sh: regenerate the Python SDKs' code (sdk/python/scripts/generate.py
# says what it writes) and the Node SDK's copy of plugin.proto. Python's is
# made by protoc 3.21 (Debian bookworm's protobuf-compiler), whose output the
# protobuf runtime 4.21 and later read: a newer protoc makes code that
# Debian's python3-protobuf cannot import. make sdk-proto runs it; PROTOC and
# SDK_PYTHON (an interpreter with protobuf) come from the Makefile.
set -euo pipefail
: "${PROTOC:?}" "${SDK_PYTHON:?}"
PROTOC=$PROTOC $SDK_PYTHON sdk/python/scripts/generate.py
mkdir -p sdk/node/proto/agentcore/plugin/v1
cp proto/agentcore/plugin/v1/plugin.proto sdk/node/proto/agentcore/plugin/v1/plugin.proto
