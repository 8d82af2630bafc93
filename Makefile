# tasksbridge build and test entry points. `make test` is what CI runs.
GO ?= go
# Fuzz targets run their seed corpus as part of `go test`; fuzz-smoke also runs
# each target briefly with random inputs.
FUZZTIME ?= 5s

.PHONY: all build test vet unit fuzz-seeds fuzz-smoke bench tidy-check

all: build

build:
	$(GO) build ./...

test: redis-server vet unit fuzz-seeds

# The Redis store's tests (sessionmap, cmd/bridge) run a real redis-server:
# the one of $$TASKSBRIDGE_REDIS_URL, else their own on a free loopback port
# (internal/testkit/redistest). Some (replication, WAIT, Sentinel failover, Redis
# Cluster) always start their own, so the binaries are installed from
# Debian's packages when missing: redis-server (with redis-tools'
# redis-cli, which creates and reshards the test cluster) and
# redis-sentinel, a separate package.
.PHONY: redis-server
redis-server:
	@(command -v redis-server && command -v redis-sentinel && command -v redis-cli) >/dev/null || \
	  (apt-get update && apt-get install -y redis-server redis-sentinel redis-tools)

vet:
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 ./...

# Seed corpora (f.Add and testdata/fuzz) of every Fuzz target, without -race, so
# a regression in a decoder shows as its own failing line.
fuzz-seeds:
	$(GO) test -count=1 -run '^Fuzz' ./...

fuzz-smoke:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Benchmarks, never part of `make test`: every package's go test benchmarks,
# then the bridge's load tool (bench/cmd/bridgeload), which measures the
# data-plane figures against their baselines in one bounded run (a few
# minutes, loopback only, a child bridge process) and prints a Markdown table
# for docs/PERFORMANCE.md. BRIDGELOAD_FLAGS passes flags to it, e.g.
# BRIDGELOAD_FLAGS='-phases echo,delay'.
BRIDGELOAD_FLAGS ?=

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...
	$(GO) run ./bench/cmd/bridgeload $(BRIDGELOAD_FLAGS)

tidy-check:
	$(GO) mod tidy -diff

# Real third-party interop peers (interop/, interop-peers.md): the pinned npm
# projects are installed with `npm ci` only when node_modules is missing or
# older than the lockfile (a stamp file records the last good install), and
# the mcp-go fixtures of the nested interop/mcpgo module are built into the
# gitignored interop/bin/. Needs only go, node and npm.
NPM ?= npm
INTEROP_NPM := interop/ts interop/conformance interop/oauth

# The chaos suite, never part of `make test`: a redis-server, the embedded
# upstream, 3 bridge replicas built from this checkout and a round-robin
# proxy, all on loopback; TypeScript SDK legacy clients work through the
# proxy while a random replica is killed with SIGKILL every few seconds for
# 60 s; then every acknowledged task is checked against the upstream
# (bench/cmd/chaos, docs/RELIABILITY.md). About two minutes; exit 3 when a
# figure whose goal is zero is not. CHAOS_FLAGS passes flags, e.g.
# CHAOS_FLAGS='-duration 120s -clients 6 -kinds slow,cancel'.
# Then chaos-result (about four minutes): the clients call tasks/result
# right after each create, so every kill (one every ~5 s for 180 s, ≥ 25 in
# all) cuts waits that are open, and the proxy ends a killed replica's
# streams at once; the resumed waits must lose nothing, answer no input
# twice and let no request time out.
# Then the failover runs (chaos-failover, about four and a half minutes each; 170 s of kills so that at least 6 primary failovers fall in a run with a 20 s mean interval): the
# store is a Sentinel setup (1 primary, 1 replica, 3 sentinels) whose
# primary is also killed with SIGKILL every ~20 s, first with
# --redis-wait-replicas 1 (goal: nothing lost), then without it (what
# asynchronous replication loses is measured, not a failure).
CHAOS_FLAGS ?=
CHAOS_FAILOVER_FLAGS ?= -topology sentinel -duration 170s -failover-every 20s -kill-every 5s
CHAOS_RESULT_FLAGS ?= -result-at-once -cut-streams -duration 180s -kill-every 5s

.PHONY: chaos chaos-result chaos-failover
chaos: redis-server interop/ts/node_modules/.interop-stamp
	$(GO) run ./bench/cmd/chaos $(CHAOS_FLAGS)
	$(MAKE) chaos-result
	$(MAKE) chaos-failover

chaos-result: redis-server interop/ts/node_modules/.interop-stamp
	$(GO) run ./bench/cmd/chaos $(CHAOS_RESULT_FLAGS) $(CHAOS_FLAGS)

chaos-failover: redis-server interop/ts/node_modules/.interop-stamp
	$(GO) run ./bench/cmd/chaos $(CHAOS_FAILOVER_FLAGS) -wait-replicas 1 $(CHAOS_FLAGS)
	$(GO) run ./bench/cmd/chaos $(CHAOS_FAILOVER_FLAGS) -wait-replicas 0 $(CHAOS_FLAGS)

.PHONY: interop-deps
interop-deps: $(addsuffix /node_modules/.interop-stamp,$(INTEROP_NPM))
	cd interop/mcpgo && $(GO) build -o ../bin/mcpgo-server ./cmd/server && $(GO) build -o ../bin/mcpgo-client ./cmd/client

interop/%/node_modules/.interop-stamp: interop/%/package.json interop/%/package-lock.json
	cd interop/$* && $(NPM) ci --no-audit --no-fund
	touch $@

unit: interop-deps

# Every command in README.md and docs/MIGRATION.md, run against a real bridge
# built from this checkout (internal/testkit/docscheck), so the guide cannot rot.
.PHONY: docs-check
docs-check:
	TASKSBRIDGE_DOCS_CHECK=1 $(GO) test -count=1 -run '^TestDocs' ./internal/testkit/docscheck/

test: docs-check

# The container image (Dockerfile), built with docker: a static bridge on
# gcr.io/distroless/static, uid 65532, listening on 0.0.0.0:8080, data in the
# /var/lib/tasksbridge volume. The version is linked in from git: the release
# tag when HEAD has one exactly (else the bridge says v0.1.0-dev), the commit,
# whether the tree has uncommitted changes, and the commit's time (not the
# clock's, so rebuilding a commit gives the same binary).
IMAGE ?= tasksbridge:dev
DOCKER ?= docker
IMAGE_VERSION ?= $(shell git describe --tags --exact-match 2>/dev/null)
IMAGE_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
IMAGE_DIRTY ?= $(shell git rev-parse HEAD >/dev/null 2>&1 && { test -z "$$(git status --porcelain 2>/dev/null)" && echo false || echo true; })
IMAGE_BUILD_TIME ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)

.PHONY: image
image:
	$(DOCKER) build \
	  --build-arg VERSION=$(IMAGE_VERSION) --build-arg REVISION=$(IMAGE_REVISION) \
	  --build-arg DIRTY=$(IMAGE_DIRTY) --build-arg BUILD_TIME=$(IMAGE_BUILD_TIME) \
	  -t $(IMAGE) .
