# autosave — the commands a person needs. Each installs what it needs first.
SWIFT ?= swift
# The release binary links Swift's runtime and Foundation in: a CLI command then starts in about
# 6 ms instead of 12 (no shared libraries to load and relocate), which editors and agents that
# shell out per edit feel.
RELEASE_BUILD = $(SWIFT) build -c release --product autosave --static-swift-stdlib
PREFIX ?= /usr/local
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := libinotifytools0-dev zlib1g-dev libsqlite3-dev libzstd-dev

# The official MCP SDK, the coding agents' client, in a venv of its own for the MCP tests.
MCP_VENV = .build/mcp-venv
MCP_SDK = mcp==2.3.0

SOAK_MINUTES ?= 10
FUZZ_SECONDS ?= 60

.PHONY: deps build run test config install clean bench soak powercut fuzz smoke

# Installs, with apt-get, the Debian package of each `command:package` pair whose command is missing.
define need
	@missing=""; for pair in $(1); do command -v $${pair%%:*} >/dev/null 2>&1 || missing="$$missing $${pair#*:}"; done; \
	if [ -n "$$missing" ]; then echo "make: installing$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi
endef

# faultfs (a FUSE file system in Python) needs Debian's pyfuse3 and fusermount3; only where FUSE can
# be mounted (root, /dev/fuse): elsewhere its tests and the power-cut soak say why they skip.
define need_fuse
	@if [ -e /dev/fuse ] && [ "$$(id -u)" = 0 ]; then \
		{ /usr/bin/python3 -c 'import pyfuse3' 2>/dev/null && command -v fusermount3 >/dev/null; } || { \
			echo "make: installing python3-pyfuse3 fuse3"; apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pyfuse3 fuse3; }; fi
endef

# The system libraries the agent links (libinotifytools for the watcher, zlib for the journal's
# checksums, SQLite and zstd for the history of every version); apt-get when one is missing.
deps:
	@if [ ! -f /usr/include/inotifytools/inotifytools.h ] || [ ! -f /usr/include/zlib.h ] || \
		[ ! -f /usr/include/sqlite3.h ] || [ ! -f /usr/include/zstd.h ]; then \
		echo "make: installing $(APT_PACKAGES)"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES); \
	fi

build: deps
	$(SWIFT) build

# The agent on the demo project, with the built-in defaults. Ctrl-C stops it.
run: build
	$(SWIFT) build --product autosave
	./.build/debug/autosave run examples/demo

# The whole suite: unit tests on real temp directories and end-to-end tests of the binary.
# Overflow tests flood the inotify queue that every watcher of a process shares, so they run
# in a second process, one at a time. Then the Neovim plugin with the real editor, driven through
# its RPC by Debian's pynvim (so Debian's python3, whatever python3 comes first on PATH); then git
# with `autosave fsmonitor` as its core.fsmonitor hook, `git status` compared with git's own; then the
# Emacs package with Debian's Emacs (ERT in `emacs --batch`; it also byte-compiles the package with
# warnings as errors and runs checkdoc); then the Vim plugin in Debian's Vim (installed when `vim` is
# missing or is vim-tiny, which has no channels), by its own Vim script test in a pseudo-terminal;
# then `autosave mcp` driven by the official MCP Python SDK (with pynvim in its venv, for the test
# where a person types in Neovim while a coding agent edits and `undo --who` takes one of them back);
# then faultfs (a file system that forgets what was not fsync'd) and the agent on it, where FUSE can
# be used (skipped, saying why, elsewhere).
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip OverflowTests
	$(SWIFT) test --skip-build --no-parallel --filter OverflowTests
	$(call need,nvim:neovim git:git)
	@/usr/bin/python3 -c 'import pynvim' 2>/dev/null || { echo "make: installing python3-pynvim"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pynvim; }
	AUTOSAVE_BINARY=.build/debug/autosave /usr/bin/python3 editors/nvim/test/test_nvim.py
	AUTOSAVE_BINARY=.build/debug/autosave /usr/bin/python3 Tests/git/test_fsmonitor.py
	$(call need,emacs:emacs-nox)
	AUTOSAVE_BINARY=.build/debug/autosave emacs --batch -Q -l ert -l editors/emacs/test/autosave-test.el -f ert-run-tests-batch-and-exit
	@vim --version 2>/dev/null | grep -q '+channel' || { echo "make: installing vim (Debian's, with +channel)"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq vim; }
	AUTOSAVE_BINARY=.build/debug/autosave editors/vim/test/run.sh
	@[ -x $(MCP_VENV)/bin/python ] && $(MCP_VENV)/bin/python -c 'import mcp, jsonschema, pynvim' 2>/dev/null || { \
		echo "make: installing the MCP Python SDK ($(MCP_SDK)) and pynvim into $(MCP_VENV)"; \
		{ python3 -m venv $(MCP_VENV) || { $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq python3-venv && /usr/bin/python3 -m venv $(MCP_VENV); }; } && \
		$(MCP_VENV)/bin/pip install -q '$(MCP_SDK)' jsonschema pynvim; }
	AUTOSAVE_BINARY=.build/debug/autosave $(MCP_VENV)/bin/python Tests/mcp/test_mcp.py
	AUTOSAVE_BINARY=.build/debug/autosave $(MCP_VENV)/bin/python Tests/mcp/test_undo_with_nvim.py
	AUTOSAVE_BINARY=.build/debug/autosave $(MCP_VENV)/bin/python Tests/mcp/test_handover.py
	AUTOSAVE_BINARY=.build/debug/autosave $(MCP_VENV)/bin/python Tests/mcp/test_walls.py
	$(call need_fuse)
	AUTOSAVE_BINARY=.build/debug/autosave /usr/bin/python3 faultfs/test_faultfs.py

# The release binary, shell completions for bash and zsh, and the systemd user unit.
install: deps
	$(RELEASE_BUILD)
	install -D -m 0755 .build/release/autosave $(DESTDIR)$(PREFIX)/bin/autosave
	mkdir -p $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions
	.build/release/autosave --generate-completion-script bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/autosave
	.build/release/autosave --generate-completion-script zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_autosave
	install -D -m 0644 examples/systemd/autosave@.service $(DESTDIR)$(PREFIX)/lib/systemd/user/autosave@.service

# Whole-process figures against inotifywait and watchman, written to bench/results.md (about 25 min).
# Figure 10 (scaling) keeps its trees of 10k, 100k and 1M files in /var/tmp/autosave-bench-trees
# (about 4.7 GB; the first run makes them, about 7 min) and plots bench/scaling.png with Debian's
# python3 and matplotlib; figure 12 commits its 100k-file repository there once too. BENCH_ARGS adds
# options (--runs N, --figures 1,3, --scaling-sizes 10000,100000).
bench: deps
	$(call need,inotifywait:inotify-tools watchman:watchman cc:gcc patch:patch git:git)
	@/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || { echo "make: installing python3-matplotlib"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib; }
	$(RELEASE_BUILD)
	bench/compare --binary .build/release/autosave $(BENCH_ARGS)

# Crash soak: client writes, real tools and kill -9 for SOAK_MINUTES; fails on any lost, torn or
# leftover byte. SOAK_ARGS adds options (--seed N to replay, --keep).
soak: deps
	$(call need,rsync:rsync vim:vim git:git)
	$(RELEASE_BUILD)
	python3 soak/soak.py --binary .build/release/autosave --minutes $(SOAK_MINUTES) $(SOAK_ARGS)

# Power-cut soak: the crash soak's clients and tools on faultfs, each round ending in a power cut
# (whole or torn) for SOAK_MINUTES; fails on an acknowledged or saved edit lost, a torn file, a temp
# left or an unreadable journal. Needs root and /dev/fuse (says so otherwise). SOAK_ARGS adds
# options (--seed N to replay, --no-fsync to count what journal.fsync/write.fsync false lose).
powercut: deps
	$(call need,rsync:rsync vim:vim git:git)
	$(call need_fuse)
	$(RELEASE_BUILD)
	/usr/bin/python3 soak/powercut.py --binary .build/release/autosave --minutes $(SOAK_MINUTES) $(SOAK_ARGS)

# libFuzzer on the config parser, the JSON-RPC decoder, the merge, the patch reader, ranged edits and the
# buffer's state machine, FUZZ_SECONDS each.
fuzz: deps
	Fuzz/run $(FUZZ_SECONDS)

# What CI adds to the tests: every harness in its short mode, to show it still works. No timing
# is judged here (shared machines are noisy); `make bench` is for figures.
smoke: deps
	$(call need,inotifywait:inotify-tools watchman:watchman cc:gcc patch:patch rsync:rsync vim:vim git:git)
	$(SWIFT) build --package-path Benchmarks
	$(RELEASE_BUILD)
	bench/compare --smoke --binary .build/release/autosave
	python3 soak/soak.py --smoke --binary .build/release/autosave
	$(call need_fuse)
	/usr/bin/python3 soak/powercut.py --smoke --binary .build/release/autosave
	Fuzz/run 5

config: build
	./.build/debug/autosave config examples/demo

clean:
	rm -rf .build
