# Strata — the two set-up commands (see README.md):
#   make run    build and run stratad on the embedded default (config/stratad.yaml, store under ./var)
#   make test   build everything and run the whole test suite
# Both install missing system packages first (scripts/bootstrap.sh). `make run` seeds the
# demo store once (DEMO_ROWS aircraft at model version Aircraft 1, scripts/demo-seed.sh);
# `rm -rf var` starts the demo over.
#   make fuzz   run every libFuzzer target for FUZZ_SECONDS (default 30) each (docs/Fuzzing.md)
#   make install / make uninstall   PREFIX (default /usr/local), DESTDIR (README.md "Install")
#   make deb    the Debian package in .build/deb/CONFIG/ (CONFIG=release by default)
#   make docs   the library's DocC catalog (swift-docc-plugin)

.PHONY: run test bootstrap bench fuzz docs clean build-install man install uninstall deb

bootstrap:
	@scripts/bootstrap.sh

DEMO_ROWS ?= 200000

run: bootstrap
	swift build --product stratad
	swift build --product stratactl
	mkdir -p var/run
	@scripts/demo-seed.sh var/aircraft.sqlite $(DEMO_ROWS) .build/debug/stratactl config/models/Aircraft
	.build/debug/stratad --config config/stratad.yaml

# The package test (PackageInstallTests) installs the debug build's package under a
# private systemd. It runs on its own after the rest: dpkg and systemd load the machine, and
# the timing-sensitive daemon tests must not run beside it. STRATA_PACKAGE_TEST=1 runs it
# (without it, it prints SKIPPED) and makes a missing package a failure.
# The systemd-facing tests boot a private systemd with scripts/with-systemd; where this machine
# cannot (not root, no systemd), each prints SKIPPED and the last line of `make test` counts
# them: "SKIPPED n systemd tests: reason" (scripts/report-skipped.sh), or "0 skipped".
SKIP_LOG = .build/skipped-systemd-tests.txt
# Suites that check a daemon's reaction times against its own settings (scheduler pauses, SIGTERM
# within one batch, the watchdog beside slow calls, kill -9 rounds, the units under a private
# systemd with a 3 s watchdog; a Varlink server in the test process whose replies back up,
# whose calls run on the process's shared pool, starved past its minute once beside the parallel
# suite): they run after the rest, one at a time, so that the parallel suite's own load does not
# decide them.
TIMED_SUITES = PipelinedReplyTests|SchedulerLoadTests|CallIsolationTests|SystemdTests|StagedSystemdTests|JournalTests|SchedulerRunTests|ShutdownDuringFinishTests|SlowCallIsolationTests|OperatorViewTests|HistoryCrashTests|ReplicationLagTests|KillLoopTests

# Every `swift test` run's output also goes to TEST_LOG; when one fails, the last lines of
# `make test` name the failing tests (scripts/report-failures.sh).
TEST_LOG = .build/test-output.txt

test: SHELL := /bin/bash
test: bootstrap
	swift build
	$(MAKE) --no-print-directory deb CONFIG=debug
	rm -f $(SKIP_LOG) $(TEST_LOG)
	status=0; \
	swift test --skip PackageInstallTests --skip '$(TIMED_SUITES)' 2>&1 | tee -a $(TEST_LOG); status=$${PIPESTATUS[0]}; \
	if [ $$status = 0 ]; then swift test --skip-build --no-parallel --filter '$(TIMED_SUITES)' 2>&1 | tee -a $(TEST_LOG); status=$${PIPESTATUS[0]}; fi; \
	if [ $$status = 0 ]; then STRATA_PACKAGE_TEST=1 swift test --skip-build --filter PackageInstallTests 2>&1 | tee -a $(TEST_LOG); status=$${PIPESTATUS[0]}; \
	else printf 'debianPackageUnderPrivateSystemd\tnot run: the rest of the suite failed\n' >> $(SKIP_LOG); fi; \
	scripts/report-skipped.sh $(SKIP_LOG); \
	if [ $$status != 0 ]; then scripts/report-failures.sh $(TEST_LOG); fi; exit $$status

# Installation (README.md "Install"). A release build links the Swift runtime statically,
# so the binaries run on machines without Swift; CONFIG=debug packages the debug build
# (as the tests do), which needs this machine's Swift runtime.
CONFIG ?= release
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
ifeq ($(CONFIG),release)
STATIC_STDLIB ?= --static-swift-stdlib
endif
BINARIES = .build/$(CONFIG)
MANPAGES = .build/man/$(CONFIG)
INSTALL_VARS = PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) SYSCONFDIR=$(SYSCONFDIR) BINARIES=$(BINARIES) MANPAGES=$(MANPAGES)

build-install:
	swift build -c $(CONFIG) $(STATIC_STDLIB) --product stratad
	swift build -c $(CONFIG) $(STATIC_STDLIB) --product stratactl

man: build-install
	scripts/make-man.sh $(BINARIES) $(MANPAGES)

install: man
	$(INSTALL_VARS) scripts/install.sh install
	@echo "installed under $(DESTDIR)$(PREFIX); then: systemd-sysusers strata.conf && systemd-tmpfiles --create strata.conf && systemctl daemon-reload && systemctl enable --now stratad.socket stratad-data.socket strata-maintenance.timer"

uninstall:
	$(INSTALL_VARS) scripts/install.sh uninstall

deb: man
	DEB_COMPRESS=$(if $(filter debug,$(CONFIG)),gzip,xz) scripts/make-deb.sh $(BINARIES) $(MANPAGES) .build/deb/$(CONFIG)

# Benchmarks (release build): make bench SCENARIO=crud ARGS="--rows 100000"
SCENARIO ?= crud
bench: bootstrap
	swift build -c release --product strata-bench
	.build/release/strata-bench $(SCENARIO) $(ARGS)

# The DocC catalog of the library (Sources/Strata/Strata.docc), with swift-docc-plugin:
# .build/plugins/Swift-DocC/outputs/Strata.doccarchive
docs: bootstrap
	swift package generate-documentation --target Strata --warnings-as-errors

# Fuzzing (instrumented build in .build-fuzz): make fuzz FUZZ_SECONDS=600
FUZZ_SECONDS ?= 30
fuzz: bootstrap
	scripts/fuzz.sh all $(FUZZ_SECONDS)

clean:
	rm -rf .build .build-fuzz var
