# Keygate's two set-up commands: `make demo` and `make test`. `make docs` builds the documentation site.
# Both install missing Debian packages first when run as root; otherwise they print
# the exact apt-get line and stop.

SWIFT ?= swift
DEB_PACKAGES := libpam0g-dev libpam-wrapper libnss-wrapper pamtester libsqlite3-dev libsodium-dev procps

.PHONY: demo test deps build lint format bench policy-test docs

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

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# Formatting, then the documentation: `make docs` fails on any docc warning (an unresolved
# link or symbol) and on an article sample that does not compile, so the docs cannot rot.
lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Benchmarks
	$(MAKE) docs

# The static documentation site, in .build/docs/Keygate.doccarchive (Scripts/build-docs.sh).
docs: deps
	SWIFT=$(SWIFT) Scripts/build-docs.sh

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests Benchmarks

bench:
	$(SWIFT) build -c release --product keygate-bench-pam
	.build/release/keygate-bench-pam
	$(SWIFT) build -c release --product keygate-bench-evaluator
	.build/release/keygate-bench-evaluator

# The shipped organisation policies: validate them and run their policy test files.
policy-test:
	$(SWIFT) build --product keygate
	.build/debug/keygate policy check Policies/default.policy Policies/examples
	.build/debug/keygate policy test Policies/*.tests.json Policies/examples/*.tests.json
