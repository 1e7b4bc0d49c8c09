# The README's two set-up commands are `make demo` and `make test`; both work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_KG ?= .kgrag/metaqa
PIP := $(BIN)/python -m pip --disable-pip-version-check

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

## demo: install kgrag and explore the bundled MetaQA movie KG
demo: $(BIN)/python
	$(PIP) install -q -e .
	$(BIN)/kgrag ingest --demo metaqa --out $(DEMO_KG)
	$(BIN)/kgrag info $(DEMO_KG)
	@echo; echo "Q: who directed Kismet?"
	$(BIN)/kgrag neighbors $(DEMO_KG) Kismet --relation directed_by
	@echo; echo "Q: which films did Michael Mann direct?"
	$(BIN)/kgrag neighbors $(DEMO_KG) "Michael Mann" --relation directed_by
	@echo; echo "Q: how are Michael Mann and Al Pacino connected?"
	$(BIN)/kgrag paths $(DEMO_KG) --from "Michael Mann" --to "Al Pacino"

## test: install kgrag with its dev extras, lint, run the whole test suite
test: $(BIN)/python
	$(PIP) install -q -e '.[dev]'
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

lint: $(BIN)/python
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

bench: $(BIN)/python
	$(BIN)/python benchmarks/graph_bench.py

clean:
	rm -rf $(VENV) .kgrag .pytest_cache .ruff_cache
