# tasksbridge build and test entry points. `make test` is what CI runs.
GO ?= go
# Fuzz targets run their seed corpus as part of `go test`; fuzz-smoke also runs
# each target briefly with random inputs.
FUZZTIME ?= 5s

.PHONY: all build test vet unit fuzz-seeds fuzz-smoke bench tidy-check

all: build

build:
	$(GO) build ./...

test: vet unit fuzz-seeds

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

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

tidy-check:
	$(GO) mod tidy -diff
