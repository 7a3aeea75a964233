# bakeoff: build, test, demo.
GO       ?= go
BIN      := bin/bakeoff
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo devel)
LDFLAGS  := -s -w -X github.com/bakeoff-dev/bakeoff/internal/buildinfo.version=$(VERSION)
# Static, so the same binary can be uploaded to a Linux GPU host and run there.
export CGO_ENABLED ?= 0

.PHONY: all build test demo vet fmt bench fuzz clean

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/bakeoff

# The whole suite: unit, end-to-end (real processes, real sshd on 127.0.0.1).
test: build
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 9m ./...

# A whole campaign against the simulated engine on this machine.
demo: build
	./scripts/demo.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./loadgen/...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
