# agentcore: see README.md. Every target works on a fresh machine with Go.
SHELL := bash
GO ?= go
BUF_VERSION := v1.75.0
BUF := $(GO) run github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
PLUGINS := $(notdir $(patsubst %/,%,$(wildcard plugins/*/)))

.PHONY: build run demo test lint fmt vet buf-lint breaking proto openapi proto-check sdk-proto test-deps bench bench-report fuzz-short fuzz clean

## build: bin/agent-server, bin/toolhost and one bin/plugins/<name> per plugins/<name>,
## static (CGO_ENABLED=0): they run in a minimal image without libc or /etc/ssl.
build: export CGO_ENABLED = 0
build:
	@mkdir -p bin/plugins
	$(GO) build -o bin/ ./cmd/...
	@for p in $(PLUGINS); do echo "$(GO) build -o bin/plugins/$$p ./plugins/$$p"; $(GO) build -o bin/plugins/$$p ./plugins/$$p || exit 1; done

## run: build everything and start agent-server on 127.0.0.1:50051 with bin/plugins.
## The model comes from AGENTCORE_MODEL_BASE_URL, AGENTCORE_MODEL,
## AGENTCORE_MODEL_PROTOCOL and AGENTCORE_MODEL_API_KEY (see README: Configuration);
## without them the server still serves tools and a Send says what is missing.
## RUN_ARGS adds flags, e.g. make run RUN_ARGS='-listen unix:/tmp/agentcore.sock'.
run: build
	bin/agent-server -tool-dir bin/plugins $(RUN_ARGS)

## demo: offline end to end: a scripted chat-protocol model, the real agent-server
## and a client running a task that needs two tools, events printed as they stream.
demo: build
	$(GO) run ./examples/demo -server bin/agent-server -plugins bin/plugins

## test: the whole suite (what CI runs).
test:
	$(GO) test -count=1 ./...

## lint: gofmt, go vet, buf lint, buf breaking against main, and generated code up to date.
lint: fmt vet buf-lint breaking proto-check

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt wants to change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

buf-lint:
	$(BUF) lint

## breaking: buf breaking against main, so a change cannot break the shipped API.
## On main itself (as in CI's clean clone) it compares main with itself and passes;
## BREAKING_AGAINST overrides the input, e.g. '.git#ref=refs/remotes/origin/main'.
HASH := \#
BREAKING_AGAINST ?= $(shell if git rev-parse -q --verify refs/heads/main >/dev/null; then echo '.git$(HASH)branch=main'; \
	elif git rev-parse -q --verify refs/remotes/origin/main >/dev/null; then echo '.git$(HASH)ref=refs/remotes/origin/main'; fi)
breaking:
	@if [ -z "$(BREAKING_AGAINST)" ]; then echo "buf breaking: no main branch in this clone, nothing to compare against: skipped"; \
	else echo "$(BUF) breaking --against '$(BREAKING_AGAINST)'"; $(BUF) breaking --against '$(BREAKING_AGAINST)'; fi

## proto: regenerate the Go code beside each .proto (with the HTTP gateway's
## *.pb.gw.go), the gateway's OpenAPI document, and what derives from the
## ErrorReason enum (docs/errors.md's tables, sdk/client/reasons.go).
OPENAPI := pkg/gateway/openapi.json
proto:
	$(BUF) generate
	$(GO) run ./proto/internal/reasongen
	@$(MAKE) --no-print-directory openapi OPENAPI_OUT=$(OPENAPI)

## openapi: protoc-gen-openapiv2's document of the HTTP routes, finished by
## pkg/gateway/internal/openapigen (the server-sent-event routes), into OPENAPI_OUT.
openapi:
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	$(BUF) generate --template pkg/gateway/buf.gen.yaml -o $$tmp && \
	$(GO) run ./pkg/gateway/internal/openapigen -in $$tmp/openapi.swagger.json -out $(OPENAPI_OUT)

## proto-check: fail when the committed generated code is stale (the Go code,
## the OpenAPI document, and the Node SDK's copy of plugin.proto).
proto-check:
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	$(BUF) generate -o $$tmp && \
	for f in $$(cd $$tmp && find proto -name '*.pb.go' -o -name '*.pb.gw.go'); do \
		cmp -s $$tmp/$$f $$f || { echo "stale generated code: $$f (run make proto)"; exit 1; }; \
	done; \
	for f in $$(find proto -name '*.pb.go' -o -name '*.pb.gw.go'); do \
		[ -f $$tmp/$$f ] || { echo "generated file without a .proto: $$f"; exit 1; }; \
	done; \
	$(MAKE) --no-print-directory openapi OPENAPI_OUT=$$tmp/openapi.json && \
	{ cmp -s $$tmp/openapi.json $(OPENAPI) || { echo "stale OpenAPI document: $(OPENAPI) (run make proto)"; exit 1; }; }; \
	cmp -s proto/agentcore/plugin/v1/plugin.proto sdk/node/proto/agentcore/plugin/v1/plugin.proto || \
		{ echo "stale: sdk/node/proto/agentcore/plugin/v1/plugin.proto (run make sdk-proto)"; exit 1; }; \
	if $(PROTOC) --version 2>/dev/null | grep -q '^libprotoc 3\.21\.'; then \
		$(PROTOC) -I proto --python_out=$$tmp --pyi_out=$$tmp agentcore/plugin/v1/plugin.proto && \
		for f in plugin_pb2.py plugin_pb2.pyi; do \
			cmp -s $$tmp/agentcore/plugin/v1/$$f $(SDK_PY_PROTO)/$$f || { echo "stale generated code: $(SDK_PY_PROTO)/$$f (run make sdk-proto)"; exit 1; }; \
		done; \
	else echo "no protoc 3.21: the Python SDK's generated code is not checked"; fi; \
	echo "generated code and OpenAPI document are up to date"

## sdk-proto: regenerate the Python SDK's code and the Node SDK's copy of
## plugin.proto. Python's is made by protoc 3.21 (Debian bookworm's
## protobuf-compiler), whose output the protobuf runtime 4.21 and later read:
## a newer protoc makes code that Debian's python3-protobuf cannot import.
PROTOC ?= protoc
SDK_PY_PROTO := sdk/python/src/agentcore_tool/_proto
sdk-proto:
	@$(PROTOC) --version | grep -q '^libprotoc 3\.21\.' || { echo "sdk-proto needs protoc 3.21 (apt-get install protobuf-compiler on Debian bookworm), found: $$($(PROTOC) --version)"; exit 1; }
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	$(PROTOC) -I proto --python_out=$$tmp --pyi_out=$$tmp agentcore/plugin/v1/plugin.proto && \
	cp $$tmp/agentcore/plugin/v1/plugin_pb2.py $$tmp/agentcore/plugin/v1/plugin_pb2.pyi $(SDK_PY_PROTO)/
	mkdir -p sdk/node/proto/agentcore/plugin/v1
	cp proto/agentcore/plugin/v1/plugin.proto sdk/node/proto/agentcore/plugin/v1/plugin.proto

## test-deps: what the tests beyond Go need: Debian's grpcio and protobuf for
## the Python SDK and python3-venv for its pip install test (when apt-get is there and they are missing), npm ci for the
## Node SDK, for the MCP client test (tests/mcpclient) and for the console's
## browser test (tests/console: playwright-core; the browser is Debian's
## chromium). Without them those tests skip, saying why (under CI=true they fail).
test-deps:
	@if ! /usr/bin/python3 -c 'import grpc, google.protobuf, venv, ensurepip' 2>/dev/null && command -v apt-get >/dev/null; then \
		echo "apt-get install python3-grpcio python3-protobuf python3-venv"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-grpcio python3-protobuf python3-venv >/dev/null; \
	fi
	cd sdk/node && npm ci --no-audit --no-fund --loglevel=error
	cd tests/mcpclient && npm ci --no-audit --no-fund --loglevel=error
	cd tests/console && npm ci --no-audit --no-fund --loglevel=error

## fuzz-short: the fuzz targets the model layer's issue names (the SSE reader and
## the text tool reader), FUZZTIME each; CI runs this. The seed corpora of every
## fuzz target already run as plain tests in make test. The four adapters'
## FuzzStream targets (every recording, plain and mutated, as seeds) run in
## make fuzz only: their instrumented build of eino and sonic takes minutes cold.
## The budget is a count of inputs, not a duration: with a duration, Go's fuzz
## coordinator before 1.27 can end a sound run with "context deadline exceeded"
## (go.dev/issue/75804), which it did here on a loaded machine. 50,000 inputs
## take 1 to 4 s per target here.
FUZZTIME ?= 50000x
FUZZ_SHORT := ./pkg/llm/sse:FuzzReader ./pkg/llm/sse:FuzzReaderCancel ./pkg/llm/texttool:FuzzParse
fuzz-short:
	@for t in $(FUZZ_SHORT); do \
		echo "$(GO) test -run '^$$' -fuzz '^$${t#*:}\$$' -fuzztime $(FUZZTIME) $${t%%:*}"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) $${t%%:*} || exit 1; \
	done

## fuzz: every fuzz target in the repository, FUZZTIME each (default 1m here).
fuzz: FUZZTIME = 1m
fuzz:
	@for file in $$(grep -rl --include='*_test.go' '^func Fuzz' pkg cmd sdk plugins 2>/dev/null); do \
		for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$file); do \
			echo "$(GO) test -run '^$$' -fuzz '^$$target\$$' -fuzztime $(FUZZTIME) ./$$(dirname $$file)"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) ./$$(dirname $$file) || exit 1; \
		done; \
	done

## bench: Go benchmarks with their reported metrics (PKG=./pkg/tool/ for one package).
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(or $(PKG),./...)

## bench-report: the benchmarks behind the README's figures and their floors,
## measured in one run on this machine, printed as a table: every figure with
## a goal in issues 10, 12, 13, 14 and 16 beside its floor, the ratio and whether
## the goal is met, and the machine (about 2 minutes once built; BENCHTIME=3s,
## about 5 on a slower machine, for steadier). ROUNDS=3 runs every suite three
## times in turn and judges each goal on its median run, with the range beside
## it: one run on a shared VM swings by more than some goals' margins. The
## PostgreSQL store is measured when AGENTCORE_TEST_POSTGRES names a database
## (a postgres:// URL).
BENCHTIME ?= 1s
ROUNDS ?= 1
bench-report:
	GO=$(GO) $(GO) run ./tests/benchreport -benchtime $(BENCHTIME) -rounds $(ROUNDS)

clean:
	rm -rf bin
