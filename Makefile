.PHONY: setup demo test bench lint clean
VENV := .venv
HONE := $(VENV)/bin/hone
export PATH := $(CURDIR)/$(VENV)/bin:$(HOME)/.cargo/bin:$(PATH)

setup:
	@bash scripts/setup.sh

demo: setup
	$(HONE) tune examples/sqlite/hone.yaml --json build/demo-tune.json --html build/demo-report.html

test: setup
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/python -m pytest -q --durations=25 tests

bench: setup
	$(VENV)/bin/python benchmarks/stats_calibration.py
	$(VENV)/bin/python benchmarks/tuning/run.py --methods hone hone+race tpe random --tag fast
	$(VENV)/bin/python benchmarks/tuning/run.py --methods atune --budget 30 --tag atune
	$(VENV)/bin/python benchmarks/tuning/run.py --merge benchmarks/tuning/results-fast.json benchmarks/tuning/results-atune.json $(wildcard benchmarks/tuning/results-opentuner.json)

lint: setup
	$(VENV)/bin/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
