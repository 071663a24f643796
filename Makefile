# autosave — the commands a person needs. Each installs what it needs first.
SWIFT ?= swift
PREFIX ?= /usr/local
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := libinotifytools0-dev

.PHONY: deps build run test config install clean

# The system library the watcher links (libinotifytools); apt-get when it is missing.
deps:
	@if [ ! -f /usr/include/inotifytools/inotifytools.h ]; then \
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
# in a second process, one at a time.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip OverflowTests
	$(SWIFT) test --skip-build --no-parallel --filter OverflowTests

# The release binary, shell completions for bash and zsh, and the systemd user unit.
install: deps
	$(SWIFT) build -c release --product autosave
	install -D -m 0755 .build/release/autosave $(DESTDIR)$(PREFIX)/bin/autosave
	mkdir -p $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions
	.build/release/autosave --generate-completion-script bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/autosave
	.build/release/autosave --generate-completion-script zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_autosave
	install -D -m 0644 examples/systemd/autosave@.service $(DESTDIR)$(PREFIX)/lib/systemd/user/autosave@.service

config: build
	./.build/debug/autosave config examples/demo

clean:
	rm -rf .build
