# Everyday commands. `make setup` is idempotent and quick when nothing changed.
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8501
# Test processes (pytest-xdist): the suite waits on servers and browsers more than it computes,
# so more workers than cores pays; each worker starts its own Redis, fake Ollama and app servers.
# --no-loadscope-reorder: files go out longest first (tests/conftest.py orders them), not by
# their number of tests, which left the few-test browser files that take minutes to the end.
TEST_WORKERS ?= 4

.PHONY: help setup setup-test run test coverage lint format redis-start redis-stop redis-status real-model real-model-smoke

help:
	@echo "make setup         .venv + pinned packages + libssl1.1 for the embedded Redis"
	@echo "make run           start the embedded Redis, then the app on http://$(HOST):$(PORT)"
	@echo "make test          setup (incl. chromium for browser tests), then pytest in parallel"
	@echo "make coverage      the suite with line+branch coverage, subprocesses included"
	@echo "make lint          ruff check, ruff format --check, mypy (memory agent ui pages app tests/fakes benchmarks)"
	@echo "make redis-stop    stop the embedded Redis"
	@echo "make real-model    build llama-server once (20+ min), run the agent on two small real models"
	@echo "make real-model-smoke   one request to the built llama-server through the Ollama adapter"

setup:
	bash scripts/setup.sh

setup-test:
	bash scripts/setup.sh --browser

run: setup
	PYTHONPATH=. $(PY) scripts/check_listen.py $(HOST)
	$(PY) -m memory redis start
	$(PY) -m streamlit run app.py --server.address $(HOST) --server.port $(PORT)

test: setup-test
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# COVERAGE_ROOT: the checkout, for the CLIs and app servers that tests start in other folders
coverage: setup-test
	rm -f .coverage .coverage.*
	COVERAGE_ROOT=$(CURDIR) $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder \
		--cov --cov-report=term --durations=60

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy memory agent ui pages app.py tests/fakes benchmarks

format: setup
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

redis-start: setup
	$(PY) -m memory redis start

# Not part of `make test`: builds llama.cpp's server once (cached in ~/.cache/coala-memory).
real-model: setup
	$(PY) -m realmodel

real-model-smoke: setup
	$(PY) -m pytest -q -p no:cacheprovider realmodel/test_smoke.py

redis-status:
	$(PY) -m memory redis status

redis-stop:
	$(PY) -m memory redis stop
