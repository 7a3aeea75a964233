# bakeoff: build, test, demo.
GO       ?= go
BIN      := bin/bakeoff
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo devel)
LDFLAGS  := -s -w -X github.com/bakeoff-dev/bakeoff/internal/buildinfo.version=$(VERSION)
# Static, so the same binary can be uploaded to a Linux GPU host and run there.
export CGO_ENABLED ?= 0

.PHONY: all build deps test demo demo-disagg demo-select demo-policy vet fmt bench bench-cpu fuzz faults soak scale slurm sequential prior-slack-study covariate-study select-study contention diff-aa sglang-args clean

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/bakeoff

# The whole suite: unit, end-to-end (real processes, real sshd on 127.0.0.1).
# Eight test binaries at a time on two cores: the end-to-end tests mostly
# wait on the servers they launch (the orchestrator's tests use 163 s of
# CPU in 494 s run one after another), so the cores have room while they
# wait. Beside the other packages (three at a time) run: the
# orchestrator's tests in three binaries, which are serial within one
# (each sets its own PATH and TMPDIR): ORCH_PART, its longest end-to-end
# tests, and the rest split by name at ORCH_HALF into two halves of under
# three minutes each on a quiet machine; VERDICT_PART, the verdict's
# end-to-end tests with real sims; and the verdict's synthetic honesty
# campaigns, pure computation, niced so that a test waiting on its server
# gets a core when it needs one. Each name in the parts is its package's
# test alone, so -skip drops nothing elsewhere (TestPartNamesAreUnique).
# Package times against their timeouts: docs/PERFORMANCE.md, "The test
# suite's time".
TEST_TIMEOUT ?= 16m
ORCH_PART := ^(TestSlotsAA|TestSequentialCampaign|TestTraceCampaign|TestEnergyThroughThePath|TestGPUHeldByStranger|TestSessionsOpenLoopSaturated|TestRounds|TestLinkDropDuringSweep)$$
ORCH_HALF := ^Test[A-L]
VERDICT_PART := ^(TestEndToEndAA|TestEndToEndPower|TestAcceptEndToEnd|TestLiveLinesAgreeWithReport)$$
# One compile for all: -trimpath, as make build and the tests' own build of
# bakeoff (internal/testbin) use, lets vet and the test binaries reuse the
# packages make build compiled. On a cold build cache (CI's fresh machine)
# that took vet from 98 s to 33 s and the tests' compile from 77 s to 68 s;
# -vet=off because go vet ./... has already run every analyzer go test's
# own vet would.
test: export GOFLAGS := $(strip $(GOFLAGS) -trimpath)
test: build deps
	$(GO) vet ./...
	@rc=0; pkgs=$$($(GO) list ./... | grep -v '/orchestrator$$'); \
	$(GO) test -vet=off -count=1 -timeout $(TEST_TIMEOUT) -run '$(ORCH_PART)' ./orchestrator/ & orch=$$!; \
	$(GO) test -vet=off -count=1 -timeout $(TEST_TIMEOUT) -run '$(ORCH_HALF)' -skip '$(ORCH_PART)' ./orchestrator/ & half1=$$!; \
	$(GO) test -vet=off -count=1 -timeout $(TEST_TIMEOUT) -skip '$(ORCH_PART)|$(ORCH_HALF)' ./orchestrator/ & half2=$$!; \
	$(GO) test -vet=off -count=1 -timeout $(TEST_TIMEOUT) -run '$(VERDICT_PART)' ./verdict/ & verd=$$!; \
	nice -n 10 $(GO) test -vet=off -count=1 -timeout $(TEST_TIMEOUT) -skip '$(VERDICT_PART)' ./verdict/ & synth=$$!; \
	$(GO) test -vet=off -p 3 -count=1 -timeout $(TEST_TIMEOUT) $$(echo "$$pkgs" | grep -v '/verdict$$') || rc=$$?; \
	for p in $$orch $$half1 $$half2 $$verd $$synth; do wait $$p || rc=$$?; done; \
	exit $$rc

# What the tests need beyond Go (sshd, network namespaces, Chromium, Slurm):
# installed where this machine can (root with apt-get), else named in one
# line; the tests that need a missing piece skip.
deps:
	./scripts/test-deps.sh

# A whole campaign against the simulated engine on this machine.
demo: build
	./scripts/demo.sh

# Prefill-decode disaggregation (prefill and decode workers behind SGLang's
# router) against the aggregated server, on the simulated engine.
demo-disagg: build
	./scripts/demo.sh configs/demo-disagg.yaml

# Which EAGLE-3 draft tree to serve per load band: a race of the baseline
# and twelve trees on the simulated engine, ending with the serving policy.
demo-select: build
	./scripts/demo.sh configs/demo-select.yaml

# The policy of a race of EAGLE-3 chains, written as one SGLang server with
# adaptive speculative decoding, then raced against the configurations it
# switches between.
demo-policy: build
	./scripts/demo-policy.sh

# Every fuzz target in the module, one at a time, FUZZTIME each. A crasher
# is written to the owning package's testdata/fuzz/ and fails the target;
# commit it there so it stays a regression test. The other targets still run.
FUZZTIME ?= 20s
fuzz:
	@failed=""; \
	for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go | sed 's/^func //' | sort -u); do \
	    echo "== $$dir $$t for $(FUZZTIME)"; \
	    $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) $$dir || failed="$$failed $$dir:$$t"; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failures in$$failed"; exit 1; fi

# The reliability and security suite: hosts in network namespaces, whole
# campaigns with faults injected on purpose. make test runs only its fast
# part (bad inputs); BAKEOFF_FAULTS=1 switches on the campaigns. Each
# campaign mostly waits (servers loading, links cut), so they all run at
# once, each on its own namespace host. Then a deployment over two hosts
# joined as a cluster's nodes are (measured, a rank killed, interrupted).
faults: build deps
	BAKEOFF_FAULTS=1 $(GO) test -count=1 -v -timeout 9m -parallel 16 ./internal/testhost ./faults
	BAKEOFF_FAULTS=1 $(GO) test -count=1 -v -timeout 9m -run '^(TestDeploymentTwoNodes|TestDeploymentLostHost)$$' ./orchestrator

# A night of simulated time over a fleet of namespace hosts, with links cut,
# a host lost and a server killed along the way; the orchestrator's memory
# and open files sampled throughout (docs/RELIABILITY.md). About 9–40
# minutes; the run, samples.csv and summary.txt are kept in SOAK_OUT.
SOAK_OUT ?= /tmp/bakeoff-soak
soak: build
	rm -rf $(SOAK_OUT)
	BAKEOFF_SOAK=1 BAKEOFF_SOAK_OUT=$(SOAK_OUT) $(GO) test -count=1 -v -timeout 90m -run '^TestSoak$$' ./internal/soak

# A campaign's makespan against the ideal and the orchestrator's CPU and
# memory as scenarios, rounds and hosts grow (docs/PERFORMANCE.md). SIZES is
# a list of SCENARIOSxROUNDSxHOSTS; the default takes hours on two busy
# cores. The table is kept in SCALE_OUT.
SCALE_OUT ?= /tmp/bakeoff-scale
SIZES ?= 100x3x16,30x3x16,10x3x16,10x3x4,3x16x16
scale: build
	rm -rf $(SCALE_OUT)
	BAKEOFF_SCALE=1 BAKEOFF_SOAK_OUT=$(SCALE_OUT) BAKEOFF_SCALE_SIZES=$(SIZES) $(GO) test -count=1 -v -timeout 180m -run '^TestScale$$' ./internal/soak

# Whole campaigns on real Slurm clusters of one and two nodes
# (docs/SLURM.md): allocation, rounds on the nodes, release, interruptions,
# a reattaching resume, a node lost mid-round. make test runs the slurm
# package's own tests against the same clusters; BAKEOFF_SLURM=1 switches
# on the campaigns. Each test has its own cluster and mostly waits (servers
# loading, a cut node's timeouts), so they all run at once. Needs root and
# Debian's slurmctld, slurmd, slurm-client and munge.
slurm: build deps
	BAKEOFF_SLURM=1 $(GO) test -count=1 -v -timeout 20m -parallel 8 ./slurm/e2e

# The sequential rule's figures in docs/METHOD.md ("Sequential rounds",
# Validation) at their long-run counts: the A/A pair under optional
# stopping over 200 campaigns; coverage, power and the seeds-shaped savings
# over 60; the savings and the A/A rate at maxima of 12 to 24 rounds over
# 40; a host noise profile's A/A rates and savings over 40; a single
# comparison's size and false-tie rate over 4,000 comparisons in each of six
# kinds of launch noise and drift; the four-scenario campaign's launches
# against the rule given the true variance, on the default host and a 2%
# one, over 40. About 28 minutes on two cores; make test runs the same tests
# on fewer campaigns (and the size on the worst kind), the floor's oracle
# alone.
sequential:
	BAKEOFF_SEQUENTIAL_CAMPAIGNS=200 $(GO) test -count=1 -v -timeout 60m -run '^TestComparisonSizeOrderDrift$$' ./verdict
	BAKEOFF_SEQUENTIAL_CAMPAIGNS=200 $(GO) test -count=1 -v -timeout 60m -run '^TestSequentialAA$$' ./verdict
	BAKEOFF_SEQUENTIAL_CAMPAIGNS=60 $(GO) test -count=1 -v -timeout 60m -run '^TestSequential(Coverage|Power|Savings)$$' ./verdict
	BAKEOFF_SEQUENTIAL_CAMPAIGNS=40 BAKEOFF_SEQUENTIAL_MAXES=12,16,20,24 $(GO) test -count=1 -v -timeout 60m -run '^TestSequentialSavingsByMax$$' ./verdict
	BAKEOFF_SEQUENTIAL_CAMPAIGNS=40 $(GO) test -count=1 -v -timeout 60m -run '^TestPriorSequential$$' ./verdict
	BAKEOFF_FLOOR_CAMPAIGNS=40 $(GO) test -count=1 -v -timeout 60m -run '^TestSeedsShapedRuleFloor$$' ./verdict
	BAKEOFF_FLOOR_CAMPAIGNS=40 BAKEOFF_PRIOR_LAUNCH_SIGMA=0.02 $(GO) test -count=1 -v -timeout 60m -run '^TestSeedsShapedRuleFloor$$' ./verdict

# A host's noise profile on the sequential rule (docs/METHOD.md, "On the
# sequential rule: the loan only where it narrows"): single comparisons'
# size, false ties, ties and rounds to close with a profile lent at every
# look at slack 1 to 2, and lent only where it narrows a test's boundary,
# tonight as noisy as the host or twice as noisy. About six minutes on two
# cores at 4000 a figure.
PRIOR_SLACK_COMPARISONS ?= 4000
prior-slack-study:
	BAKEOFF_PRIOR_SLACK_STUDY=$(PRIOR_SLACK_COMPARISONS) $(GO) test -count=1 -v -timeout 60m -run '^TestPriorSlackSequential$$' ./verdict

# A drift covariate (the launches' positions in their round) in place of the
# serial widening: size, false ties and power of the plain, widened and
# covariate estimates on the same comparisons (docs/METHOD.md, "A drift
# covariate"). About ten minutes on two cores at 4000 a figure.
COVARIATE_COMPARISONS ?= 4000
covariate-study:
	BAKEOFF_COVARIATE_COMPARISONS=$(COVARIATE_COMPARISONS) $(GO) test -count=1 -v -timeout 60m -run '^TestCovariateStudy$$' ./verdict

# The selection procedure's figures in docs/METHOD.md ("Selecting the
# best"): 2,000 simulated races of each space (slippage, two configurations
# delta apart, all equal, 24 and 48 candidates, a speculative-decoding
# space) on each host (launch noise 1-3%, wandering or random-walk drift,
# t(3) tails), against the fixed designs and the argmax of one launch each;
# then maxima and wider indifference zones. About 3 minutes on two busy
# cores; make test runs a few hundred races per hard case.
select-study:
	BAKEOFF_SELECTION_RACES=2000 $(GO) test -count=1 -v -timeout 60m -run '^TestSelection(Study|WithoutTheUpdate)$$' ./verdict/selection

# A/A campaigns of the demo's scenarios (the baseline, its fusion-flag
# variant and an exact twin) under CPU contention the test starts and stops
# itself: a build's short processes on every core, a busy core, a pulsing
# core, and the machine as it is. CONTENTION_CAMPAIGNS of each kind, three
# at a time, the kinds taking turns; the false-call rate of each kind and
# the signs of the changes (docs/METHOD.md, "Identical servers under
# contention"). About 41 minutes on a 2-core machine; make test runs a short
# version. Each campaign's run and rounds.csv are kept in CONTENTION_OUT.
CONTENTION_OUT ?= /tmp/bakeoff-contention
CONTENTION_CAMPAIGNS ?= 40
contention:
	rm -rf $(CONTENTION_OUT) && mkdir -p $(CONTENTION_OUT)
	BAKEOFF_CONTENTION=1 BAKEOFF_CONTENTION_CAMPAIGNS=$(CONTENTION_CAMPAIGNS) BAKEOFF_CONTENTION_OUT=$(CONTENTION_OUT) \
	  $(GO) test -count=1 -v -timeout 24h -run '^TestContentionAA$$' ./internal/contention

# bakeoff diff on pairs of identical campaigns under each kind of
# contention, each campaign slowed as a whole by a run effect of its own
# (sd DIFF_RUN_SIGMA): how often identical code reads as REGRESSED, and
# how often the rule before the run was a unit did (docs/METHOD.md, "Two
# runs"). DIFF_PAIRS pairs of each kind.
DIFF_PAIRS ?= 40
DIFF_RUN_SIGMA ?= 0.03
DIFF_KINDS ?= none,busy,compile,pulse
diff-aa:
	rm -rf $(CONTENTION_OUT)/diff && mkdir -p $(CONTENTION_OUT)
	BAKEOFF_CONTENTION_DIFF=1 BAKEOFF_CONTENTION_CAMPAIGNS=$(DIFF_PAIRS) BAKEOFF_CONTENTION_RUN_SIGMA=$(DIFF_RUN_SIGMA) \
	  BAKEOFF_CONTENTION_KINDS=$(DIFF_KINDS) BAKEOFF_CONTENTION_OUT=$(CONTENTION_OUT) \
	  $(GO) test -count=1 -v -timeout 24h -run '^TestContentionDiff$$' ./internal/contention

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./loadgen/...

# The load generator's CPU per streamed chunk against an asyncio + aiohttp
# client, both measured the same way (docs/PERFORMANCE.md). RUNS of each.
RUNS ?= 7
bench-cpu:
	./scripts/clientcpu.sh $(RUNS)

fmt:
	gofmt -w $$(git ls-files '*.go')

# SGLang's command line, from one source (docs/SIM.md, Flags): the sim's flag
# table (sim/cmdline/sglang_args.tsv) read from an SGLang checkout's argument
# definitions, then the preflight's SGLang help fixture rendered from that
# table. SGLANG_SRC is the checkout's python/sglang/srt; SGLANG_COMMITS is a
# file of "path commit" lines for a tree that is not a git checkout.
sglang-args:
	@test -n "$(SGLANG_SRC)" || { echo "usage: make sglang-args SGLANG_SRC=path/to/sglang/python/sglang/srt [SGLANG_COMMITS=file]"; exit 2; }
	python3 scripts/sglang-args.py "$(SGLANG_SRC)" $(if $(SGLANG_COMMITS),--commits "$(SGLANG_COMMITS)") -o sim/cmdline/sglang_args.tsv
	cd preflight/testdata && python3 mkhelp.py
	$(GO) test ./sim/cmdline/ -run 'HelpGolden' -update
	$(GO) test ./preflight/ -run 'ParseFixtures' -update

clean:
	rm -rf bin
