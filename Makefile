# Strata — the two set-up commands (see README.md):
#   make run    build and run stratad on the embedded default (config/stratad.yaml, store under ./var)
#   make test   build everything and run the whole test suite
# Both install missing system packages first (scripts/bootstrap.sh). `make run` seeds the
# demo store once (DEMO_ROWS aircraft at model version Aircraft 1, scripts/demo-seed.sh);
# `rm -rf var` starts the demo over.
#   make fuzz   run every libFuzzer target for FUZZ_SECONDS (default 30) each (docs/Fuzzing.md)

.PHONY: run test bootstrap bench fuzz docs clean

bootstrap:
	@scripts/bootstrap.sh

DEMO_ROWS ?= 200000

run: bootstrap
	swift build --product stratad
	swift build --product stratactl
	mkdir -p var/run
	@scripts/demo-seed.sh var/aircraft.sqlite $(DEMO_ROWS) .build/debug/stratactl config/models/Aircraft
	.build/debug/stratad --config config/stratad.yaml

test: bootstrap
	swift build
	swift test

# Benchmarks (release build): make bench SCENARIO=crud ARGS="--rows 100000"
SCENARIO ?= crud
bench: bootstrap
	swift build -c release --product strata-bench
	.build/release/strata-bench $(SCENARIO) $(ARGS)

# Fuzzing (instrumented build in .build-fuzz): make fuzz FUZZ_SECONDS=600
FUZZ_SECONDS ?= 30
# The DocC catalog of the library (Sources/Strata/Strata.docc), with swift-docc-plugin:
# .build/plugins/Swift-DocC/outputs/Strata.doccarchive
docs: bootstrap
	swift package generate-documentation --target Strata --warnings-as-errors

fuzz: bootstrap
	scripts/fuzz.sh all $(FUZZ_SECONDS)

clean:
	rm -rf .build .build-fuzz var
