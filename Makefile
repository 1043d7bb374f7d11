GO ?= go
PKGS ?= ./...
FUZZTIME ?= 10s

.PHONY: build test race bench fuzz lint cross demo baselines test-wasm bench-sizing bench-http ui-deps ui-test

build:
	$(GO) build -o bin/forge ./cmd/forge

test:
	$(GO) test $(PKGS)

race:
	$(GO) test -race $(PKGS)

# The compute benchmarks (sandboxtest.ComputeCases) as one table: native, wasm and in-process
# yaegi, medians of BENCH_COUNT runs, and each sandbox's ratio to native (README, "Speed"). Each
# round is one `go test -count 1`, so a noisy machine's slow spells spread over all columns.
BENCH_COUNT ?= 5
bench:
	@for i in $$(seq $(BENCH_COUNT)); do \
		$(GO) test -p 1 -run '^$$' -bench '^BenchmarkCompute(Native|Wasm|Yaegi|NativeWorker)$$' -benchmem -count 1 ./sandbox/wasm ./sandbox/yaegi ./sandbox/native || echo FAIL; \
	done | $(GO) run ./internal/benchtable

# Every benchmark of every package.
.PHONY: bench-all
bench-all:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 $(PKGS)

fuzz:
	$(GO) test ./registry -run '^$$' -fuzz '^FuzzDecodeContract$$' -fuzztime $(FUZZTIME)
	$(GO) test ./registry -run '^$$' -fuzz '^FuzzDecodeArtifact$$' -fuzztime $(FUZZTIME)
	$(GO) test ./provider -run '^$$' -fuzz '^FuzzHeal$$' -fuzztime $(FUZZTIME) -parallel 1
	$(GO) test ./sandbox/yaegi -run '^$$' -fuzz '^FuzzIsolated$$' -fuzztime $(FUZZTIME) -parallel 1
	$(GO) test ./sandbox/wasm -run '^$$' -fuzz '^FuzzWasm$$' -fuzztime $(FUZZTIME) -parallel 1

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint:
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)

# Build and vet (tests included) for the other platforms forge supports: process isolation needs
# rlimits (Linux, macOS, FreeBSD); elsewhere it says so and the wasm sandbox isolates.
cross:
	GOOS=darwin GOARCH=arm64 $(GO) vet $(PKGS)
	GOOS=freebsd GOARCH=amd64 $(GO) vet $(PKGS)
	GOOS=windows GOARCH=amd64 $(GO) vet $(PKGS)

demo:
	$(GO) run ./cmd/forge demo

# Re-record the normalized event traces in fixtures/baselines/ (review the diff before committing).
baselines:
	$(GO) test ./cmd/forge -run '^TestDemo$$' -count=1 -update
	$(GO) test ./forge -run '^TestHumanEvalBaseline$$' -count=1 -update

# The whole sandbox corpus and all 164 HumanEval-X problems under the wasm backend (~6 min).
test-wasm:
	FORGE_WASM_FULL=1 $(GO) test -timeout 60m ./sandbox/wasm

# The sizing table of the README (section "Sizing"): forge bench on the documented set. A run that
# passes BENCH_MAX_RSS MiB stops there and says so (a shared machine's safety net; 0: no limit).
BENCH_MAX_RSS ?= 6144
BENCH_FLAGS ?=
bench-sizing: build
	bin/forge bench --methods 1000 --backend yaegi --max-rss $(BENCH_MAX_RSS) $(BENCH_FLAGS)
	bin/forge bench --methods 1000 --backend yaegi --pattern zipf --max-rss $(BENCH_MAX_RSS) $(BENCH_FLAGS)
	-bin/forge bench --methods 10000 --backend yaegi --max-rss $(BENCH_MAX_RSS) $(BENCH_FLAGS)
	bin/forge bench --methods 50 --backend wasm --calls 5000 --max-rss $(BENCH_MAX_RSS) $(BENCH_FLAGS)
	bin/forge bench --methods 1 --backend wasm --calls 1000 --regens 10 --max-rss $(BENCH_MAX_RSS) $(BENCH_FLAGS)
	bin/forge bench --methods 8 --backend yaegi-process --calls 2000 $(BENCH_FLAGS)
	bin/forge bench --methods 20 --backend yaegi-process --calls 2000 $(BENCH_FLAGS)
	bin/forge bench --methods 10000 --backend yaegi --process 20 --process-only $(BENCH_FLAGS)

# The HTTP edge under load (README, "Serving"): hey against a plain net/http floor and /v1/call of
# `forge serve` (one warm method, default backend), and this tool's own client against /v1/call
# and /mcp, interleaved, medians of BENCH_HTTP_ROUNDS rounds, on loopback. Needs hey on PATH
# (Debian/Ubuntu: apt-get install -y hey; or go install github.com/rakyll/hey@latest).
BENCH_HTTP_ROUNDS ?= 5
BENCH_HTTP_FLAGS ?=
bench-http: build
	$(GO) run ./internal/benchhttp -forge bin/forge -rounds $(BENCH_HTTP_ROUNDS) $(BENCH_HTTP_FLAGS)

# What the console's browser test needs (Debian's chromium, playwright-core in server/ui/e2e); then
# ui-test runs it, keeping its screenshots in bin/ui-shots.
ui-deps:
	bash .ci/ui-deps

ui-test: ui-deps
	FORGE_UI_REQUIRE=1 FORGE_UI_SHOTS=$(CURDIR)/bin/ui-shots $(GO) test -count=1 -run TestConsoleInChromium -v ./server/ui/e2e
