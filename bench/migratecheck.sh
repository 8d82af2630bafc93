#!/usr/bin/env bash
# bench/migratecheck.sh — wall time of `migrate-check ./...` divided by the
# wall time of `go vet ./...` on the same large tree: a copy of
# github.com/mark3labs/mcp-go v1.2.1 (from the module cache) plus this
# repository. Goal: ratio <= 1.5 (docs/PERFORMANCE.md, migrate-check).
#
# Both tools run in the same script run, on the same trees, in two build-cache
# states:
#   cold  a fresh, empty GOCACHE for each tool (what a CI job without a cache
#         pays: go vet type-checks every dependency for its vetx files,
#         migrate-check compiles dependencies' export data via go list)
#   warm  the same command again right after the cold run (a developer's
#         machine; go vet then replays cached results for clean packages)
#
# Usage: bench/migratecheck.sh          (needs the Go module proxy or a warm module cache)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOWORK=off

go build -o "$work/migrate-check" "$root/cmd/migrate-check"

# mcp-go v1.2.1 as a writable tree (the module cache is read-only).
mcpdir=$(cd "$root/interop/migratecheck-e2e" && go list -m -f '{{.Dir}}' github.com/mark3labs/mcp-go)
cp -r "$mcpdir" "$work/mcp-go"
chmod -R u+w "$work/mcp-go"
(cd "$work/mcp-go" && go mod download all >/dev/null 2>&1 || true)

trees=("$work/mcp-go" "$root")

now() { date +%s.%N; }

# timed LABEL CACHE CMD... — runs CMD in every tree with GOCACHE=CACHE and
# prints the summed wall time in seconds (tool exit codes are ignored: findings
# are not failures here).
timed() {
	local cache=$1
	shift
	local t0 t1
	t0=$(now)
	for tree in "${trees[@]}"; do
		(cd "$tree" && GOCACHE="$cache" "$@" ./... >/dev/null 2>&1) || true
	done
	t1=$(now)
	echo "$t1 - $t0" | bc -l
}

vet_cache="$work/cache-vet"
mc_cache="$work/cache-mc"
mkdir -p "$vet_cache" "$mc_cache"

vet_cold=$(timed "$vet_cache" go vet)
mc_cold=$(timed "$mc_cache" "$work/migrate-check")
vet_warm=$(timed "$vet_cache" go vet)
mc_warm=$(timed "$mc_cache" "$work/migrate-check")

pkgs=0
for tree in "${trees[@]}"; do
	n=$(cd "$tree" && go list ./... 2>/dev/null | wc -l)
	pkgs=$((pkgs + n))
done

printf 'tree: mcp-go v1.2.1 + %s (%d packages)\n' "$(cd "$root" && go list -m)" "$pkgs"
printf 'machine: %s, %s CPUs, %s, load average %s\n' "$(uname -m)" "$(nproc)" \
	"$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | xargs)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'go: %s\n' "$(go version)"
printf '%-6s %12s %16s %8s\n' state "go vet (s)" "migrate-check (s)" ratio
printf '%-6s %12.2f %16.2f %8.2f\n' cold "$vet_cold" "$mc_cold" "$(echo "$mc_cold / $vet_cold" | bc -l)"
printf '%-6s %12.2f %16.2f %8.2f\n' warm "$vet_warm" "$mc_warm" "$(echo "$mc_warm / $vet_warm" | bc -l)"
