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
	$(VENV)/bin/python -m pytest -q tests

bench: setup
	$(VENV)/bin/python benchmarks/stats_calibration.py

lint: setup
	$(VENV)/bin/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
