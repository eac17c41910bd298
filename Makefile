.PHONY: setup demo example-postgresql example-redis example-nginx example-mariadb example-kafka example-pgo-redis example-pgo-nginx example-readahead test bench bench-stats bench-tuning bench-fleet bench-pgo bench-diagnose bench-analyse bench-faults bench-readahead lint lock clean
VENV := .venv
HONE := $(VENV)/bin/hone
export PATH := $(CURDIR)/$(VENV)/bin:$(HOME)/.cargo/bin:$(PATH)
# Debian package groups (deps/apt/GROUP.txt) each target installs when missing, plus the
# venv: hone alone for `make demo`, every extra otherwise; `make setup` and `make test` take all.
SETUP := bash scripts/setup.sh

setup:
	@$(SETUP)

demo:
	@HONE_EXTRAS= $(SETUP) core
	$(HONE) tune examples/sqlite/hone.yaml --json build/demo-tune.json --html build/demo-report.html

# Servers tuned end to end (root; each server's data and config in build/examples/<name>,
# loopback ports only, nothing installed or touched system-wide; a few minutes each)
example-postgresql:
	@$(SETUP) core examples-postgresql
	bash examples/postgresql/setup.sh
	$(HONE) tune examples/postgresql/hone.yaml --json build/example-postgresql.json --html build/example-postgresql.html

example-redis:
	@$(SETUP) core examples-redis
	bash examples/redis/setup.sh
	$(HONE) tune examples/redis/hone.yaml --json build/example-redis.json --html build/example-redis.html

example-nginx:
	@$(SETUP) core examples-nginx
	bash examples/nginx/setup.sh
	$(HONE) tune examples/nginx/hone.yaml --json build/example-nginx.json --html build/example-nginx.html

# A-Tune's MariaDB pair as a user brings it (client + server YAML, sed on my.cnf, restart per
# trial), on a private MariaDB with sysbench; the server is stopped afterwards (~10 min)
example-mariadb:
	@$(SETUP) core examples-mariadb
	bash examples/mariadb/setup.sh
	$(HONE) tune build/examples/mariadb/mariadb_client.yaml --atune-server build/examples/mariadb/mariadb_server.yaml \
	  --json build/example-mariadb.json --html build/example-mariadb.html; \
	  rc=$$?; sh examples/mariadb/stop.sh build/examples/mariadb; exit $$rc

# A-Tune's Kafka case as a user brings it (client + server YAML: producer settings, broker
# threads with a restart, vm.dirty_background_ratio), on a private KRaft broker with Kafka's perf
# tools; the broker is stopped afterwards (~10 min)
example-kafka:
	@$(SETUP) core examples-kafka
	bash examples/kafka/setup.sh
	$(HONE) tune build/examples/kafka/kafka_client.yaml --atune-server build/examples/kafka/kafka_server.yaml \
	  --json build/example-kafka.json --html build/example-kafka.html; \
	  rc=$$?; sh examples/kafka/stop.sh build/examples/kafka; exit $$rc

# Redis from Debian source rebuilt with instrumented PGO, trained and judged as the service (~5 min)
example-pgo-redis:
	@$(SETUP) core pgo examples-redis
	bash examples/pgo/fetch-sources.sh redis
	rm -rf build/pgo-redis
	$(HONE) pgo examples/pgo/redis.yaml --workdir build/pgo-redis --json build/example-pgo-redis.json --markdown build/example-pgo-redis.md

example-pgo-nginx:
	@$(SETUP) core pgo examples-nginx
	bash examples/pgo/fetch-sources.sh nginx
	bash examples/pgo/nginx/setup.sh
	rm -rf build/pgo-nginx
	$(HONE) pgo examples/pgo/nginx.yaml --workdir build/pgo-nginx --json build/example-pgo-nginx.json --markdown build/example-pgo-nginx.md

# The adaptive read-ahead controller as the service of a study of its thresholds, on a private
# loop device (root; a 1 GiB file in build/examples/readahead; ~5 min)
example-readahead:
	@$(SETUP) core readahead
	$(VENV)/bin/python examples/readahead/loopdev.py setup build/examples/readahead
	$(HONE) tune examples/readahead/hone.yaml --json build/example-readahead.json --html build/example-readahead.html

test: setup
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/python -m pytest -q -n 2 -m 'not exclusive' --durations=25 tests
	$(VENV)/bin/python -m pytest -q -m exclusive tests

# `make bench` runs the quick figures (~35 min); the others take longer or need root.
bench: bench-stats bench-tuning

bench-stats:                # every A/B caller's A/A false rate and power, live and replayed (~15-25 min; benchmarks/README.md)
	@$(SETUP) core bench-stats
	$(VENV)/bin/python benchmarks/stats_calibration.py

# The tuning suite (benchmarks/tuning/README.md): hone and the anchors on both halves of the
# problems, budgets of 30/60/120 runs, noise-free and 5% noise; results.md (hours: see the README)
bench-tuning:
	@HONE_EXTRAS=dev,bench $(SETUP) core
	@bash benchmarks/tuning/setup-anchors.sh   # the anchors' venv: Optuna's GP (PyTorch), OpenTuner, SMAC3
	$(VENV)/bin/python benchmarks/tuning/run.py $(TUNING_ARGS)   # e.g. TUNING_ARGS='--half held-out --budgets 60'

bench-fleet:                # real PostgreSQL, root, ~10 min
	@$(SETUP) core examples-postgresql
	$(VENV)/bin/python benchmarks/fleet.py

bench-pgo:                  # Lua, zstd, a Rust crate, a classic Makefile, Redis: 40-70 min; ONLY=redis for one
	@$(SETUP) core pgo examples-redis
	$(VENV)/bin/python benchmarks/pgo/run.py $(foreach p,$(ONLY),--only $(p))

bench-faults:               # kill -9 at random crash points and moments, then rollback (~5 min; root adds kernel knobs)
	@$(SETUP) core
	$(VENV)/bin/python benchmarks/faults.py --minutes 5

bench-readahead:            # adaptive read-ahead vs fixed 128 KB / 1024 KB on a private loop device (root, ~10 min)
	@$(SETUP) core readahead
	$(VENV)/bin/python benchmarks/readahead.py

bench-diagnose:
	@$(SETUP) core diagnose
	$(VENV)/bin/python benchmarks/diagnose_calibration.py

bench-analyse:              # hone analyse on PostgreSQL, Redis, nginx, compressors, readers: the confusion table (~8 min, root)
	@$(SETUP) core diagnose bench-analyse
	$(VENV)/bin/python benchmarks/workload_classes.py

lint:
	@$(SETUP) core
	$(VENV)/bin/ruff check src tests benchmarks

# deps/python-constraints.txt from pyproject.toml: the newest versions that fit, every extra
lock:
	@$(SETUP) core
	$(VENV)/bin/uv pip compile -q --upgrade pyproject.toml --all-extras --python-version 3.11 --no-annotate \
	  --custom-compile-command "make lock" -o deps/python-constraints.txt

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
