# agentcore: see README.md. Every target works on a fresh machine with Go.
SHELL := bash
GO ?= go
BUF_VERSION := v1.75.0
BUF := $(GO) run github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
PLUGINS := $(notdir $(patsubst %/,%,$(wildcard plugins/*/)))

.PHONY: build test lint fmt vet buf-lint proto proto-check bench fuzz-short clean

## build: bin/agent-server, bin/toolhost and one bin/plugins/<name> per plugins/<name>.
build:
	@mkdir -p bin/plugins
	$(GO) build -o bin/ ./cmd/...
	@for p in $(PLUGINS); do echo "$(GO) build -o bin/plugins/$$p ./plugins/$$p"; $(GO) build -o bin/plugins/$$p ./plugins/$$p || exit 1; done

## test: the whole suite (what CI runs).
test:
	$(GO) test -count=1 ./...

## lint: gofmt, go vet, buf lint, and generated code up to date.
lint: fmt vet buf-lint proto-check

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt wants to change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

buf-lint:
	$(BUF) lint

## proto: regenerate the Go code beside each .proto.
proto:
	$(BUF) generate

## proto-check: fail when the committed generated code is stale.
proto-check:
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	$(BUF) generate -o $$tmp && \
	for f in $$(cd $$tmp && find proto -name '*.pb.go'); do \
		cmp -s $$tmp/$$f $$f || { echo "stale generated code: $$f (run make proto)"; exit 1; }; \
	done; \
	for f in $$(find proto -name '*.pb.go'); do \
		[ -f $$tmp/$$f ] || { echo "generated file without a .proto: $$f"; exit 1; }; \
	done; echo "generated code is up to date"

## fuzz-short: every fuzz target in the repo, FUZZTIME each (CI runs this;
## the seed corpora already run as plain tests in make test).
FUZZTIME ?= 5s
fuzz-short:
	@for file in $$(grep -rl --include='*_test.go' '^func Fuzz' pkg cmd sdk plugins 2>/dev/null); do \
		for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$file); do \
			echo "$(GO) test -run '^$$' -fuzz '^$$target\$$' -fuzztime $(FUZZTIME) ./$$(dirname $$file)"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) ./$$(dirname $$file) || exit 1; \
		done; \
	done

## bench: Go benchmarks with their reported metrics (PKG=./pkg/tool/ for one package).
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(or $(PKG),./...)

clean:
	rm -rf bin
