# gpuplan: make run | make test | make longtest | make bench | make xcheck
GO      ?= go
BIN     := bin/gpuplan
PKGS    := ./...
# Fuzz seed corpora run as part of the normal tests; FUZZTIME explores further.
# Minimising each new input may take at most FUZZMINIMIZE: Go's default (60s)
# let minimisation eat the whole of a 30s budget on slow targets.
FUZZTIME ?= 30s
FUZZMINIMIZE ?= 2s
# go-nvml's cgo bindings use NVML functions marked deprecated: keep gcc quiet about it.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: all build run test longtest soak bench fuzz vet fmt clean xcheck

all: build

build:
	$(GO) build -o $(BIN) ./cmd/gpuplan

# The main job: the built-in default scenario, summary on stdout, files in out/default.
run: build
	./$(BIN) simulate --out out/default

test:
	$(GO) vet $(PKGS)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) test -short -count=1 $(PKGS)

# The tests' long forms (CI runs them after make test): the packages whose
# tests do less under -short run whole: every shipped scenario round-tripped
# through its manifests and at 50 seeds, 800 compositions, the checkpoint
# optimum against Daly over 6,600 jobs, the inflation paper's figures, and
# the LLM fast models against the exact ones at every load.
LONGPKGS := ./sim/ ./scenarios/ ./scenarios/compose/ ./scenarios/pipeline/ ./scenarios/kube/manifests/ \
	./scenarios/traces/ ./models/serving/ ./cmd/gpuplan/ ./benchmarks/
longtest:
	$(GO) test -count=1 -timeout 30m $(LONGPKGS)

# Cross-checks against the real controllers (validate/xcheck, a module of its
# own so the product's dependencies and `make test` stay as they are): each
# driver prints its generated cases, the share agreeing exactly and each
# accepted difference with its reason; a difference not accepted fails.
# The HPA driver is a nested module (it requires k8s.io/kubernetes); so is
# the Kueue driver, which builds a vendored Kueue with two added files
# (go build -overlay refuses files in the module cache; vendor/ is not
# committed).
xcheck:
	cd validate/xcheck && $(GO) test -count=1 -v ./...
	cd validate/xcheck/hpa && $(GO) test -count=1 -v ./...
	cd validate/xcheck/kueue && $(GO) mod vendor && $(GO) test -overlay overlay.json -count=1 -timeout 30m -v .

# The scenario composer's longer hunt for broken invariants (make test runs
# 200 compositions, make longtest 800): SOAK of compositions, then the findings shrunk (at
# most 4 minutes more). GPUPLAN_SOAK_TIME=2h make soak SOAKTIMEOUT=0 runs longer;
# GPUPLAN_COMPOSE_OUT=DIR writes the shrunk findings there.
SOAK ?= 8m
SOAKTIMEOUT ?= 15m
soak:
	GPUPLAN_SOAK_TIME=$${GPUPLAN_SOAK_TIME:-$(SOAK)} $(GO) test -tags soak -count=1 -timeout $(SOAKTIMEOUT) -run '^TestComposerSoak$$' -v ./scenarios/compose/

# Performance benchmarks (not part of make test): median of 5 runs each;
# the whole-run pool's on 1 and 2 cores; issue 17's scale replays (a
# million jobs and more, minutes each; issue 34's 10M and 20M jobs in
# bounded memory, BenchmarkScaleTenMillion) and issue 34's overloaded cluster
# with priorities once a run, 3 runs; issue 34's floor and the 1M replay
# as a multiple of it, and Kueue with 2 and 500 ClusterQueues, once a run,
# 3 runs.
bench:
	$(GO) test -run '^$$' -bench . -skip '^Benchmark(Scale|Cores|Overload|Floor|KueueQueues|SweepThousandPoints)' -benchmem -count 5 -cpu 1 ./benchmarks/ ./sim/engine/
	$(GO) test -run '^$$' -bench '^BenchmarkCores' -benchmem -count 5 -cpu 1,2 ./benchmarks/
	$(GO) test -run '^$$' -bench '^BenchmarkScale' -benchtime 1x -count 3 -timeout 0 ./benchmarks/
	$(GO) test -run '^$$' -bench '^BenchmarkOverload' -benchtime 1x -count 3 -timeout 0 ./benchmarks/
	$(GO) test -run '^$$' -bench '^BenchmarkFloorAndReplay$$' -benchtime 1x -count 3 -timeout 0 ./benchmarks/
	$(GO) test -run '^$$' -bench '^BenchmarkKueueQueues' -benchtime 1x -count 3 -timeout 0 ./benchmarks/
	$(GO) test -run '^$$' -bench '^BenchmarkSweepThousandPoints$$' -benchtime 1x -count 3 -cpu 1 -timeout 0 ./benchmarks/
	$(GO) test -run '^$$' -bench 'TraceSort/rows=200000' -count 5 -cpu 1 ./scenarios/traces/

fuzz:
	@for t in FuzzScenario FuzzPriceFile FuzzSpotAdvisor FuzzInterruptionTimes FuzzProfile FuzzPolicy FuzzNodePool; do \
	  $(GO) test ./scenarios/ -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) || exit 1; done
	@for t in FuzzNativeCSV FuzzNativeJSONL FuzzOpenbPods FuzzOpenbNodes FuzzPhilly FuzzPhillyRaw FuzzHelios FuzzPAITasks FuzzPAIMachines FuzzRowReader FuzzRunRecord; do \
	  $(GO) test ./scenarios/traces/ -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) || exit 1; done
	$(GO) test ./benchmarks/calibrate/ -run '^$$' -fuzz '^FuzzParseOutput$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./scenarios/kube/nodes/ -run '^$$' -fuzz '^FuzzNodes$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./scenarios/skypilot/ -run '^$$' -fuzz '^FuzzSkyPilot$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./validate/ -run '^$$' -fuzz '^FuzzParseAssertions$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./scenarios/kube/manifests/ -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./scenarios/kube/services/ -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./scenarios/kube/services/ -run '^$$' -fuzz '^FuzzReadServing$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./scenarios/kube/services/ -run '^$$' -fuzz '^FuzzTorchServe$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./scenarios/ -run '^$$' -fuzz '^FuzzReadRateCSV$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./validate/strict/ -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./reports/ -run '^$$' -fuzz '^FuzzCSVRow$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./reports/focus/ -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./scenarios/kube/workloads/ -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./scenarios/pipeline/sweep/ -run '^$$' -fuzz '^FuzzSweepSpec$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin out
