# Keygate's two set-up commands: `make demo` and `make test`. `make docs` builds the documentation site.
# Both install missing Debian packages first when run as root; otherwise they print
# the exact apt-get line and stop.

SWIFT ?= swift
DEB_PACKAGES := libpam0g-dev libpam-wrapper libnss-wrapper pamtester libsqlite3-dev libsodium-dev nettle-dev libssl-dev openssl openssh-client openssh-server python3-cryptography libsystemd-dev procps \
  mandoc man-db bsdutils git python3 dbus python3-dbus python3-gi bash-completion

.PHONY: demo test deps build lint format bench policy-test docs install uninstall release startup-bench

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else \
	    echo "Keygate needs these Debian packages. Install them with:"; \
	    echo "  sudo apt-get update && sudo apt-get install -y$$missing"; \
	    exit 1; \
	  fi; \
	fi

build: deps
	$(SWIFT) build

demo: deps
	$(SWIFT) build --product keygate
	.build/debug/keygate demo

# Tests run one at a time: pam_wrapper keeps each process's PAM configuration in
# /tmp/pam.<letter>, chosen from the pid, and processes started from tests running side by
# side race for and clean up each other's directories (a test then sees PAM_ABORT).
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --no-parallel
	@# The benchmarks, built in release and run once at the tiny size so they cannot rot
	@# (no timing is checked; a lost write in the multi-process row fails).
	$(SWIFT) build $(RELEASE_FLAGS) --product keygate-bench
	.build/release/keygate-bench --scale tiny --keygate .build/debug/keygate >/dev/null

# The release build of keygate: the Swift runtime and FoundationEssentials linked in statically,
# so start-up binds a handful of C libraries instead of 25 shared objects, and not position
# independent, so the loader has no 43,000 relative relocations to apply (5 ms of start-up).
# The CCommandLine hook keeps its arguments visible under LD_PRELOAD=libpam_wrapper.so.
# SQLite, libsodium, libstdc++ and libgcc are linked in from their static archives (STATIC_LIBS:
# a directory of links to the archives the C compiler finds, searched before the system's
# shared libraries; a missing archive leaves that library shared), and libpam is opened only
# when a command authenticates, so a plain `get` maps only glibc beside the executable.
# --no-export-dynamic undoes the -export-dynamic of the toolchain's static-stdlib-args.lnk: the
# executable's 4,300 Swift symbols stayed in its dynamic symbol table, which the runtime's start-up
# dladdr (Backtrace.cpp's runtime path) scanned and faulted in, 0.05 ms of every process; nothing
# looks our symbols up by name (libpam's are looked up in libpam).
# -disable-concrete-type-metadata-mangled-name-accessors: our code asks for the metadata of a concrete
# generic type (a Dictionary<String, …>'s storage, an Optional of an existential, an array's
# storage) through its metadata accessor, which passes the conformances it needs, instead of by
# mangled name, which the runtime demangles and whose generic requirements it checks by scanning
# every conformance record in the executable (String: Hashable once per process): a keygate get
# went from 2.06 M to 1.54 M instructions, --version from 0.59 M to 0.34 M, for 0.1 MB of code.
# --wrap=fopen: the runtime's start-up argv search (its only fopen caller) skips reading
# /proc/self/maps once the CCommandLine hook has the arguments (Sources/CCommandLine/capture.c).
# -use-ld=lld, -function-sections and --symbol-ordering-file: each Swift function gets its own
# section (the runtime's and FoundationEssentials' already have), and lld (the toolchain's linker)
# lays out the sections of every function a plain `get` runs and every variable it touches
# together, in the order of first use (Scripts/keygate.symbol-order, written by
# Scripts/symbol-order.sh), so a get faults in a few pages of code and data, not one per scattered
# function. gold's --section-ordering-file could only move sections named in the file: the
# specialised functions Swift emits into an object's plain .text and every variable stayed where
# they were, and a get took 67 faults in .text and 48 in .bss (Benchmarks/RESULTS.md, session 24).
STATIC_LIBS = $(shell mkdir -p .build/static-libs && for archive in libsqlite3.a libsodium.a libnettle.a libcrypto.a libstdc++.a; do \
  found=$$($${CC:-cc} -print-file-name=$$archive); \
  if [ -f "$$found" ]; then ln -sf "$$found" .build/static-libs/$$archive; else rm -f .build/static-libs/$$archive; fi; \
  done; echo $(CURDIR)/.build/static-libs)
# lld comes with the Swift toolchain, beside swift; a toolchain without it links with gold, in
# the archives' order (a slower start, the same program).
LINK_ORDER = $(shell toolchain=$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")"); \
  if [ -x "$$toolchain/ld.lld" ] || command -v ld.lld >/dev/null; then \
  echo "-Xswiftc -use-ld=lld -Xlinker --symbol-ordering-file=$(CURDIR)/Scripts/keygate.symbol-order -Xlinker --no-warn-symbol-ordering"; \
  fi)
RELEASE_FLAGS = -c release --static-swift-stdlib --disable-local-rpath -Xswiftc -Xclang-linker -Xswiftc -no-pie \
  -Xlinker -L$(STATIC_LIBS) -Xswiftc -Xclang-linker -Xswiftc -static-libgcc -Xlinker --no-export-dynamic -Xlinker --wrap=fopen \
  -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
  -Xswiftc -Xfrontend -Xswiftc -function-sections $(LINK_ORDER)
release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product keygate

# `keygate get` of a plain item, whole process, beside a static Swift hello world (Scripts/startup-bench.sh).
startup-bench: release
	Scripts/startup-bench.sh .build/release/keygate

MAN_PAGES := $(wildcard Documentation/man/*.[0-9])

# Swift formatting, then the manual pages: mandoc's linter at warning level, and man-db's
# groff warnings where man-db is installed (any warning fails).
lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Benchmarks
	mandoc -T lint -W warning $(MAN_PAGES)
	@if command -v man >/dev/null 2>&1; then \
	  for page in $(MAN_PAGES); do \
	    warnings=$$(MANWIDTH=80 man --warnings -l "$$page" 2>&1 >/dev/null); \
	    if [ -n "$$warnings" ]; then echo "$$page:"; echo "$$warnings"; exit 1; fi; \
	  done; \
	fi
	$(MAKE) docs

# The static documentation site, in .build/docs/Keygate.doccarchive (Scripts/build-docs.sh).
docs: deps
	SWIFT=$(SWIFT) Scripts/build-docs.sh


format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests Benchmarks

# `make bench`: one table, every benchmark beside its baseline measured in the same run, written
# to Benchmarks/RESULTS.md with the machine, date and commit, and checked against
# Benchmarks/thresholds.tsv: a ratio above its bound fails the run (Benchmarks/METHOD.md). BENCH_SCALE=full (the default, about 10 minutes; the first run also
# builds the cached stores under .build/bench-cache) or tiny (each benchmark once, as make test
# runs it). As root it first installs the tools of the comparison rows; without them those
# rows say "not installed".
BENCH_SCALE ?= full
BENCH_TOOLS := gnome-keyring libsecret-tools pass gnupg dbus sqlite3
bench: deps
	@if [ "$$(id -u)" = 0 ]; then \
	  missing=""; \
	  for p in $(BENCH_TOOLS); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || missing="$$missing $$p"; \
	  done; \
	  if [ -n "$$missing" ]; then \
	    echo "installing:$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null || echo "could not install$$missing"; \
	  fi; \
	fi
	$(SWIFT) build $(RELEASE_FLAGS) --product keygate
	$(SWIFT) build $(RELEASE_FLAGS) --product keygated
	$(SWIFT) build $(RELEASE_FLAGS) --product keygate-bench
	.build/release/keygate-bench --scale $(BENCH_SCALE) --keygate .build/release/keygate \
	  --thresholds Benchmarks/thresholds.tsv --results Benchmarks/RESULTS.md \
	  --commit "$$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

# The shipped organisation policies: validate them and run their policy test files.
policy-test:
	$(SWIFT) build --product keygate
	.build/debug/keygate policy check Policies/default.policy Policies/examples
	.build/debug/keygate policy test Policies/*.tests.json Policies/examples/*.tests.json

# `make install` / `make uninstall`: PREFIX (default /usr/local) and DESTDIR as usual.
# keygate is built as `make release` builds it unless KEYGATE_BIN names a binary already built
# (the tests pass the debug one). The PAM service files go to $(DESTDIR)$(PAMDIR) only when PAMDIR is
# set, or by default (/etc/pam.d) when PREFIX is /usr: PAM reads /etc/pam.d whatever the
# prefix, so a /usr/local install never changes how the system authenticates unless asked.
# An existing PAM file that differs from ours is kept (an administrator's edit), and uninstall
# removes a PAM file only while it is still exactly ours.
#
# The broker goes with it: keygated in PREFIX/sbin (a daemon with a documented command line that
# administrators and tests run by hand, hence sbin and section 8 rather than libexec), the
# units keygated.service (ExecStart rewritten to this install's paths) and keygate.socket in
# SYSTEMDUNITDIR (PREFIX/lib/systemd/system, which systemd searches for /usr and /usr/local
# alike), the tmpfiles.d entry in TMPFILESDIR, keygated(8), and keygated.conf in
# SYSCONFDIR/keygate (/etc for PREFIX=/usr, PREFIX/etc otherwise), never overwriting one that is
# there and removed by uninstall only while it is still exactly ours. KEYGATED_BIN names a built
# keygated (default: the one beside KEYGATE_BIN, when that is set).
PREFIX ?= /usr/local
DESTDIR ?=
KEYGATE_BIN ?=
KEYGATED_BIN ?= $(if $(KEYGATE_BIN),$(dir $(KEYGATE_BIN))keygated,)
PAMDIR ?= $(if $(filter /usr,$(PREFIX)),/etc/pam.d,)
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSTEMDUSERUNITDIR ?= $(PREFIX)/lib/systemd/user
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
INSTALL ?= install
BINDIR = $(DESTDIR)$(PREFIX)/bin
MAN1DIR = $(DESTDIR)$(PREFIX)/share/man/man1
BASHDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
SBINDIR = $(DESTDIR)$(PREFIX)/sbin
MAN8DIR = $(DESTDIR)$(PREFIX)/share/man/man8
UNITDIR = $(DESTDIR)$(SYSTEMDUNITDIR)
USERUNITDIR = $(DESTDIR)$(SYSTEMDUSERUNITDIR)
TMPFILESD = $(DESTDIR)$(TMPFILESDIR)
CONFDIR = $(DESTDIR)$(SYSCONFDIR)/keygate
HELPERS := git-credential-keygate docker-credential-keygate
PAM_FILES := keygate keygate-biometry
MANIFESTDIR = $(DESTDIR)$(PREFIX)/share/keygate
MANIFEST = $(MANIFESTDIR)/created-directories
INSTALL_DIRS = $(BINDIR) $(MAN1DIR) $(BASHDIR) $(ZSHDIR) $(FISHDIR) $(if $(PAMDIR),$(DESTDIR)$(PAMDIR)) \
  $(SBINDIR) $(MAN8DIR) $(UNITDIR) $(USERUNITDIR) $(TMPFILESD) $(CONFDIR)

install:
	@if [ -z "$(KEYGATE_BIN)" ]; then $(SWIFT) build $(RELEASE_FLAGS) --product keygate; fi
	@if [ -z "$(KEYGATED_BIN)" ]; then $(SWIFT) build $(RELEASE_FLAGS) --product keygated; fi
	@# Which directories this install makes (not there before): uninstall removes them again once empty.
	@created=""; \
	for dir in $(INSTALL_DIRS) $(MANIFESTDIR); do \
	  d=$$dir; while [ ! -e "$$d" ]; do created="$$created $$d"; d=$$(dirname "$$d"); done; \
	done; \
	mkdir -p $(MANIFESTDIR); \
	{ cat $(MANIFEST) 2>/dev/null; printf '%s\n' $$created; } | grep -v '^$$' | sort -u > $(MANIFEST).new; \
	mv $(MANIFEST).new $(MANIFEST)
	$(INSTALL) -d $(BINDIR) $(MAN1DIR) $(BASHDIR) $(ZSHDIR) $(FISHDIR)
	$(INSTALL) -m 0755 $(or $(KEYGATE_BIN),.build/release/keygate) $(BINDIR)/keygate
	for helper in $(HELPERS); do ln -sf keygate $(BINDIR)/$$helper; done
	$(INSTALL) -m 0644 Documentation/man/keygate.1 $(MAN1DIR)/keygate.1
	for helper in $(HELPERS); do ln -sf keygate.1 $(MAN1DIR)/$$helper.1; done
	$(INSTALL) -m 0644 Documentation/completions/keygate.bash $(BASHDIR)/keygate
	$(INSTALL) -m 0644 Documentation/completions/_keygate $(ZSHDIR)/_keygate
	$(INSTALL) -m 0644 Documentation/completions/keygate.fish $(FISHDIR)/keygate.fish
	$(INSTALL) -d $(USERUNITDIR)
	sed -e 's|^ExecStart=/usr/bin/keygate |ExecStart=$(PREFIX)/bin/keygate |' \
	  Packaging/keygate-agent.service > $(USERUNITDIR)/keygate-agent.service
	chmod 0644 $(USERUNITDIR)/keygate-agent.service
	@if [ -n "$(PAMDIR)" ]; then \
	  $(INSTALL) -d $(DESTDIR)$(PAMDIR); \
	  for file in $(PAM_FILES); do \
	    target=$(DESTDIR)$(PAMDIR)/$$file; \
	    if [ -e "$$target" ] && ! cmp -s Policies/pam.d/$$file "$$target"; then \
	      echo "keeping $$target (it differs from Policies/pam.d/$$file)"; \
	    else \
	      echo "$(INSTALL) -m 0644 Policies/pam.d/$$file $$target"; \
	      $(INSTALL) -m 0644 Policies/pam.d/$$file "$$target"; \
	    fi; \
	  done; \
	else \
	  echo ""; \
	  echo "PAM: no service file was installed (PREFIX=$(PREFIX) is not /usr), and keygate proves presence"; \
	  echo "through the PAM services keygate and keygate-biometry. Install them (see Policies/pam.d/README.md):"; \
	  echo "  sudo install -m 0644 Policies/pam.d/keygate Policies/pam.d/keygate-biometry /etc/pam.d/"; \
	  echo "or run: sudo make install PAMDIR=/etc/pam.d"; \
	  echo ""; \
	fi
	$(INSTALL) -d $(SBINDIR) $(MAN8DIR) $(UNITDIR) $(TMPFILESD)
	$(INSTALL) -m 0755 $(or $(KEYGATED_BIN),.build/release/keygated) $(SBINDIR)/keygated
	$(INSTALL) -m 0644 Documentation/man/keygated.8 $(MAN8DIR)/keygated.8
	sed -e 's|^ExecStart=/usr/sbin/keygated |ExecStart=$(PREFIX)/sbin/keygated |' \
	  -e 's| --config /etc/keygate/keygated.conf$$| --config $(SYSCONFDIR)/keygate/keygated.conf|' \
	  Packaging/keygated.service > $(UNITDIR)/keygated.service
	chmod 0644 $(UNITDIR)/keygated.service
	$(INSTALL) -m 0644 Packaging/keygate.socket $(UNITDIR)/keygate.socket
	$(INSTALL) -m 0644 Packaging/keygate.tmpfiles $(TMPFILESD)/keygate.conf
	$(INSTALL) -d -m 0755 $(CONFDIR)
	@if [ -e $(CONFDIR)/keygated.conf ]; then \
	  echo "keeping $(CONFDIR)/keygated.conf (never overwritten)"; \
	else \
	  echo "$(INSTALL) -m 0644 Packaging/keygated.conf $(CONFDIR)/keygated.conf"; \
	  $(INSTALL) -m 0644 Packaging/keygated.conf $(CONFDIR)/keygated.conf; \
	fi
	@# systemd reads units from these directories only; elsewhere it must be told where they are.
	@if [ -z "$(DESTDIR)" ]; then \
	  case "$(SYSTEMDUNITDIR)" in \
	    /usr/lib/systemd/system|/lib/systemd/system|/usr/local/lib/systemd/system|/etc/systemd/system) \
	      echo "the broker: systemctl daemon-reload && systemd-tmpfiles --create $(TMPFILESDIR)/keygate.conf && systemctl enable --now keygate.socket";; \
	    *) \
	      echo "the broker's units are in $(SYSTEMDUNITDIR), which systemd does not search: link them first"; \
	      echo "  systemctl link $(SYSTEMDUNITDIR)/keygated.service $(SYSTEMDUNITDIR)/keygate.socket && systemd-tmpfiles --create $(TMPFILESDIR)/keygate.conf && systemctl enable --now keygate.socket"; \
	      echo "  (or install with SYSTEMDUNITDIR=/usr/local/lib/systemd/system TMPFILESDIR=/usr/local/lib/tmpfiles.d)";; \
	  esac; \
	fi

uninstall:
	rm -f $(BINDIR)/keygate $(addprefix $(BINDIR)/,$(HELPERS))
	rm -f $(MAN1DIR)/keygate.1 $(addprefix $(MAN1DIR)/,$(addsuffix .1,$(HELPERS)))
	rm -f $(BASHDIR)/keygate $(ZSHDIR)/_keygate $(FISHDIR)/keygate.fish $(USERUNITDIR)/keygate-agent.service
	rm -f $(SBINDIR)/keygated $(MAN8DIR)/keygated.8 $(UNITDIR)/keygated.service $(UNITDIR)/keygate.socket
	rm -f $(TMPFILESD)/keygate.conf
	@target=$(CONFDIR)/keygated.conf; \
	if [ -e "$$target" ] && cmp -s Packaging/keygated.conf "$$target"; then rm -f "$$target"; \
	elif [ -e "$$target" ]; then echo "keeping $$target (changed since install)"; fi; \
	if [ -z "$(DESTDIR)" ]; then rmdir $(CONFDIR) 2>/dev/null || true; fi
	@if [ -n "$(PAMDIR)" ]; then \
	  for file in $(PAM_FILES); do \
	    target=$(DESTDIR)$(PAMDIR)/$$file; \
	    if [ -e "$$target" ] && cmp -s Policies/pam.d/$$file "$$target"; then rm -f "$$target"; \
	    elif [ -e "$$target" ]; then echo "keeping $$target (changed since install)"; fi; \
	  done; \
	fi
	@# The directories install made (its manifest), deepest first, each once it is empty.
	@if [ -f $(MANIFEST) ]; then \
	  dirs=$$(sort -r $(MANIFEST)); rm -f $(MANIFEST); \
	  for dir in $$dirs; do rmdir "$$dir" 2>/dev/null || true; done; \
	fi
	@# Under a DESTDIR (a staging tree), the directories install made are removed once empty.
	@if [ -n "$(DESTDIR)" ]; then \
	  for dir in $(INSTALL_DIRS); do \
	    while [ "$$dir" != "$(DESTDIR)" ] && [ "$$dir" != "/" ] && rmdir "$$dir" 2>/dev/null; do \
	      dir=$$(dirname "$$dir"); \
	    done; \
	  done; \
	fi
