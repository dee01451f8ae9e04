#!/usr/bin/env bash
# openapi.sh OUT: protoc-gen-openapiv2's document of the HTTP routes,
# finished by pkg/gateway/internal/openapigen (the server-sent-event routes
# grpc-gateway cannot express), written to OUT. make openapi and
# scripts/proto-check.sh run it; GO and BUF come from the Makefile.
set -euo pipefail
: "${GO:?GO is set by the Makefile}" "${BUF:?BUF is set by the Makefile}"
out=${1:?usage: openapi.sh OUT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$BUF generate --template pkg/gateway/buf.gen.yaml -o "$tmp"
$GO run ./pkg/gateway/internal/openapigen -in "$tmp/openapi.swagger.json" -out "$out"
