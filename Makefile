# forgebox build, setup and test entry points. `make setup build` prepares a
# fresh Debian machine and builds bin/forgebox; `make test` runs what CI runs.
GO      ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
BIN     := bin/forgebox
# Static: one file that runs anywhere, with libseccomp linked in later.
TAGS    := netgo,osusergo
LDFLAGS := -s -w -X main.version=$(VERSION) -extldflags -static

.PHONY: build setup test agents-test bench clean vagrant-validate winetest

build:
	CGO_ENABLED=1 $(GO) build -trimpath -tags $(TAGS) -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/forgebox

# Installs the system packages the build and the tests need, and the
# unprivileged test user. Needs root.
setup:
	./scripts/setup

test:
	./scripts/test

# Drives the real agent clients (Gemini CLI, Codex, Claude Code, the
# TypeScript MCP SDK) against forgebox, each with a stand-in model API on
# 127.0.0.1 (integration/agents, build tag agents); scripts/setup-agents
# installs them. FORGEBOX_REQUIRE_AGENTS=1 makes a missing client a failure;
# CI sets it. -v prints each test's wall time.
agents-test:
	CGO_ENABLED=1 $(GO) vet -tags agents ./integration/agents/
	CGO_ENABLED=1 $(GO) test -tags agents -count=1 -timeout 20m -v ./integration/agents/

bench: build
	$(GO) run ./bench -forgebox $(BIN)

clean:
	rm -rf bin

# Checks the Vagrantfile (forgebox on Ubuntu 24.04, Debian 12, Fedora, an old
# kernel and Windows: see docs/testing.md) without booting anything; CI runs it.
vagrant-validate:
	./scripts/vagrant/validate

# The Windows tests that Wine can run (the policy, the job objects, the
# portable Windows logic); real Windows security needs real Windows. CI
# runs it.
winetest:
	./scripts/winetest

# Boots Debian's 6.1 and 6.12 kernels under QEMU (software emulation) and
# runs forgebox's checks inside (integration/vm); CI runs it after test. The
# setup installs QEMU and downloads the kernels the first time (as root, with
# network), caching them in integration/vm/.cache. FORGEBOX_VM=1 makes a
# missing QEMU or kernel a failure, never a skip.
.PHONY: vmtest
vmtest:
	./integration/vm/setup
	FORGEBOX_VM=1 $(GO) test -count=1 -timeout 15m -v ./integration/vm/
