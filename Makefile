# agentcore: see README.md and docs/development.md. Every target works on a
# fresh machine with Go; `make` alone lists them (make help).
SHELL := bash
GO ?= go
BUF_VERSION := v1.75.0
BUF := $(GO) run github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
PLUGINS := $(notdir $(patsubst %/,%,$(wildcard plugins/*/)))

.DEFAULT_GOAL := help
.PHONY: help build run demo test unit e2e lint fmt vet staticcheck buf-lint breaking proto openapi proto-check sdk-proto sdk-pack test-deps bench bench-report fuzz-short fuzz clean

## help: this list: every target and what it does (the ## lines above each in the Makefile).
help:
	@awk '/^## [a-z0-9-]+:/ { sub(/^## /, ""); name = $$1; sub(/^[a-z0-9-]+: */, ""); printf "\n  %-13s %s\n", substr(name, 1, length(name) - 1), $$0; next } \
		/^##/ { sub(/^## ?/, ""); printf "  %-13s %s\n", "", $$0 }' $(MAKEFILE_LIST)
	@echo

## build: bin/agent-server, bin/agentctl, bin/toolhost and one bin/plugins/<name> per plugins/<name>,
## static (CGO_ENABLED=0): they run in a minimal image without libc or /etc/ssl.
build: export CGO_ENABLED = 0
build:
	@mkdir -p bin/plugins
	$(GO) build -o bin/ ./cmd/...
	@for p in $(PLUGINS); do echo "$(GO) build -o bin/plugins/$$p ./plugins/$$p"; $(GO) build -o bin/plugins/$$p ./plugins/$$p || exit 1; done

## run: build everything and start agent-server on 127.0.0.1:50051 with bin/plugins.
## The model comes from AGENTCORE_MODEL_BASE_URL, AGENTCORE_MODEL,
## AGENTCORE_MODEL_PROTOCOL and AGENTCORE_MODEL_API_KEY (see the configuration
## docs); without them the server still serves tools and a Send says what is missing.
## RUN_ARGS adds flags, e.g. make run RUN_ARGS='-listen unix:/tmp/agentcore.sock'.
run: build
	bin/agent-server -tool-dir bin/plugins $(RUN_ARGS)

## demo: offline end to end: a scripted chat-protocol model, the real agent-server
## and a client running a task that needs two tools, events printed as they stream.
demo: build
	$(GO) run ./examples/demo -server bin/agent-server -plugins bin/plugins

# The packages of make unit and make e2e; PKG replaces them, RUN (a go test
# -run pattern) picks tests. UNIT_PKGS is expanded only by make unit.
E2E_PKGS := ./tests/...
UNIT_PKGS = $(shell $(GO) list ./... | grep -v -E '^$(shell $(GO) list -m)/(tests|bench)(/|$$)')
# The test targets run go test -json through bin/testsum (scripts/testsum):
# go test's usual output, then a summary of what passed, failed and was
# skipped and why. Its exit status is go test's.
GO_TEST = GO='$(GO)' bin/testsum -count=1$(if $(RUN), -run '$(RUN)')

.PHONY: bin/testsum
bin/testsum:
	@mkdir -p bin
	@$(GO) build -o bin/testsum ./scripts/testsum

## test: the whole suite: make unit and make e2e in one go test run (what CI runs).
## It ends with a summary: tests passed, failed and skipped, each skip with its reason.
## make test-deps first, or the Python, Node.js and browser tests skip.
test: bin/testsum
	$(GO_TEST) ./...

## unit: every package's tests but the end-to-end ones (./tests/...) and the benchmarks (./bench/...).
## One package: make unit PKG=./pkg/tool/; one test: make unit PKG=./pkg/tool/ RUN=TestScanFailsLoudly.
unit: bin/testsum
	@echo "$(GO_TEST) $(or $(PKG),<every package but ./tests/... and ./bench/...>)"
	@$(GO_TEST) $(or $(PKG),$(UNIT_PKGS))

## e2e: the end-to-end tests (./tests/...): the real agent-server, plugins and SDKs.
## One test: make e2e RUN=TestDemo (RUN is a go test -run pattern, e.g. TestHTTPGateway/compact);
## PKG=./tests/ or PKG=./tests/conformance/ for one package (each builds what it needs first).
e2e: bin/testsum
	$(GO_TEST) $(or $(PKG),$(E2E_PKGS))

## lint: gofmt, go vet, staticcheck, buf lint, buf breaking against main, and generated code up to date.
lint: fmt vet staticcheck buf-lint breaking proto-check

## fmt: fail when gofmt would change a Go file (generated code aside).
fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt wants to change:"; echo "$$out"; exit 1; fi

## vet: go vet on every package.
vet:
	$(GO) vet ./...

## staticcheck: the pinned staticcheck (STATICCHECK_VERSION) on every package, through go run: nothing to install.
staticcheck:
	$(STATICCHECK) ./...

## buf-lint: buf lint on the .proto files.
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

# What the generation scripts read.
OPENAPI := pkg/gateway/openapi.json
PROTOC ?= protoc
SDK_PYTHON ?= /usr/bin/python3
SCRIPT_ENV = GO='$(GO)' BUF='$(BUF)' PROTOC='$(PROTOC)' OPENAPI='$(OPENAPI)' SDK_PYTHON='$(SDK_PYTHON)'
# The TypeScript client's code generator, pinned by sdk/node-client/package-lock.json:
# npm ci installs it there when it is missing.
PROTOC_GEN_ES := sdk/node-client/node_modules/.bin/protoc-gen-es
$(PROTOC_GEN_ES):
	cd sdk/node-client && npm ci --no-audit --no-fund --loglevel=error

## proto: regenerate the Go code beside each .proto (with the HTTP gateway's
## *.pb.gw.go), the gateway's OpenAPI document, what derives from the
## ErrorReason enum (docs/errors.md's tables, sdk/client/reasons.go) and the
## TypeScript client's code (sdk/node-client/src/gen, by protoc-gen-es).
proto: $(PROTOC_GEN_ES)
	$(BUF) generate
	$(GO) run ./proto/internal/reasongen
	$(BUF) generate --template sdk/node-client/buf.gen.yaml
	@$(SCRIPT_ENV) scripts/openapi.sh $(OPENAPI)

## openapi: the gateway's OpenAPI document into OPENAPI_OUT (scripts/openapi.sh).
openapi:
	@$(SCRIPT_ENV) scripts/openapi.sh $(OPENAPI_OUT)

## proto-check: fail when the committed generated code is stale: the Go code, the
## OpenAPI document, the TypeScript client's code, the Node SDK's copy of plugin.proto
## and, with protoc 3.21, the Python SDKs' code (scripts/proto-check.sh).
proto-check: $(PROTOC_GEN_ES)
	@$(SCRIPT_ENV) scripts/proto-check.sh

## sdk-proto: regenerate the Python SDKs' code (sdk/python/scripts/generate.py: the
## agentcore.v1 messages, the AgentService stub, Reason and Kind, the tool SDK's
## protocol; needs protoc 3.21, Debian bookworm's protobuf-compiler) and the Node
## SDK's copy of plugin.proto (scripts/sdk-proto.sh).
sdk-proto:
	@$(SCRIPT_ENV) scripts/sdk-proto.sh

## test-deps: what the tests beyond Go need: Debian's grpcio, protobuf, venv and mypy
## for the Python SDKs (installed with apt-get when missing), and npm ci for the Node
## SDK, the TypeScript client (which builds it), the MCP client test, the official MCP
## conformance suite with its Node.js 22 (in tests/mcpconformance, not system-wide) and
## the console's browser test (scripts/test-deps.sh).
test-deps:
	@scripts/test-deps.sh

## sdk-pack: the Node.js SDKs as npm packages, in bin/: agentcore-tool-VERSION.tgz
## (the tool SDK, carrying its dependencies: a tool directory installs it with
## npm install, offline too) and agentcore-client-VERSION.tgz (the TypeScript client).
sdk-pack:
	@mkdir -p bin
	cd sdk/node && npm ci --no-audit --no-fund --loglevel=error && npm pack --pack-destination ../../bin
	cd sdk/node-client && npm ci --no-audit --no-fund --loglevel=error && npm pack --pack-destination ../../bin

## fuzz-short: the fuzz targets of the model layer's readers (the SSE reader and the
## text tool reader), FUZZTIME inputs each; CI runs this. The seed corpora of every
## fuzz target already run as plain tests in make test; the adapters' FuzzStream
## targets run in make fuzz only (their instrumented build takes minutes cold).
## The budget is a count of inputs, not a duration: with a duration, Go's fuzz
## coordinator before 1.27 can end a sound run with "context deadline exceeded"
## (go.dev/issue/75804). 50,000 inputs take 1 to 4 s per target.
FUZZTIME ?= 50000x
FUZZ_SHORT := ./pkg/llm/sse:FuzzReader ./pkg/llm/sse:FuzzReaderCancel ./pkg/llm/texttool:FuzzParse
fuzz-short:
	@GO='$(GO)' scripts/fuzz.sh $(FUZZTIME) $(FUZZ_SHORT)

## fuzz: every fuzz target in the repository, FUZZTIME each (default 1m here).
fuzz: FUZZTIME = 1m
fuzz:
	@GO='$(GO)' scripts/fuzz.sh $(FUZZTIME)

## bench: Go benchmarks with their reported metrics, every package's or PKG's
## (PKG=./pkg/tool/; the end-to-end ones are in ./bench/), BENCH a -bench pattern,
## BENCHTIME a -benchtime (e.g. 200x); docs/benchmarks.md says what each measures.
BENCH ?= .
BENCHTIME ?= 1s
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -benchmem $(or $(PKG),./...)

## bench-report: the benchmarks behind docs/benchmarks.md and their floors, measured
## in one run on this machine, printed as a table: every figure with a goal beside
## its floor, the ratio and whether the goal is met, and the machine (about 2
## minutes once built; BENCHTIME=3s, about 5 on a slower machine, for steadier).
## ROUNDS=3 runs every suite three times in turn and judges each goal on its median
## run, with the range beside it: one run on a shared VM swings by more than some
## goals' margins. The PostgreSQL store is measured when AGENTCORE_TEST_POSTGRES
## names a database (a postgres:// URL).
ROUNDS ?= 1
bench-report:
	GO=$(GO) $(GO) run ./bench/report -benchtime $(BENCHTIME) -rounds $(ROUNDS)

## clean: remove bin/.
clean:
	rm -rf bin
