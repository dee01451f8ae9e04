#!/usr/bin/env bash
# proto-check.sh: fail when the committed generated code is stale: the Go
# code beside each .proto, the gateway's OpenAPI document, the TypeScript
# client's code, the Node SDK's copy of plugin.proto and, when protoc 3.21
# and an interpreter with protobuf are here, the Python SDKs' code. make
# proto-check (part of make lint) runs it; GO, BUF, PROTOC, OPENAPI and
# SDK_PYTHON come from the Makefile.
set -euo pipefail
: "${GO:?}" "${BUF:?}" "${PROTOC:?}" "${OPENAPI:?}" "${SDK_PYTHON:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

$BUF generate -o "$tmp"
for f in $(cd "$tmp" && find proto -name '*.pb.go' -o -name '*.pb.gw.go'); do
	cmp -s "$tmp/$f" "$f" || { echo "stale generated code: $f (run make proto)"; exit 1; }
done
for f in $(find proto -name '*.pb.go' -o -name '*.pb.gw.go'); do
	[ -f "$tmp/$f" ] || { echo "generated file without a .proto: $f"; exit 1; }
done

"$(dirname "$0")/openapi.sh" "$tmp/openapi.json"
cmp -s "$tmp/openapi.json" "$OPENAPI" || { echo "stale OpenAPI document: $OPENAPI (run make proto)"; exit 1; }

# The TypeScript client's code (protoc-gen-es, which npm ci installed in sdk/node-client).
$BUF generate --template sdk/node-client/buf.gen.yaml -o "$tmp"
diff -r -q "$tmp/sdk/node-client/src/gen" sdk/node-client/src/gen ||
	{ echo "stale generated code: sdk/node-client/src/gen (run make proto)"; exit 1; }

node_proto=sdk/node/proto/agentcore/plugin/v1/plugin.proto
cmp -s proto/agentcore/plugin/v1/plugin.proto "$node_proto" ||
	{ echo "stale: $node_proto (run make sdk-proto)"; exit 1; }

# Only protoc 3.21 makes the Python code that is committed (see sdk-proto.sh).
if $PROTOC --version 2>/dev/null | grep -q '^libprotoc 3\.21\.' && $SDK_PYTHON -c 'import google.protobuf' 2>/dev/null; then
	PROTOC=$PROTOC $SDK_PYTHON sdk/python/scripts/generate.py --check
else
	echo "no protoc 3.21 or no $SDK_PYTHON with protobuf: the Python SDKs' generated code is not checked"
fi
echo "generated code and OpenAPI document are up to date"
