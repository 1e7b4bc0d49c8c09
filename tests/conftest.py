"""Shared fixtures: tiny KGs for unit tests and the location of ../shared/data for real-data tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.models.llm.scripted import ScriptedLLM

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
BUNDLED_METAQA = REPO / "src" / "kgrag" / "data" / "metaqa" / "kb.txt.gz"

MOVIES = [
    ("Heat", "directed_by", "Michael Mann"),
    ("Heat", "written_by", "Michael Mann"),
    ("Heat", "starred_actors", "Al Pacino"),
    ("Heat", "starred_actors", "Robert De Niro"),
    ("Heat", "release_year", "1995"),
    ("The Insider", "directed_by", "Michael Mann"),
    ("The Insider", "starred_actors", "Al Pacino"),
    ("The Insider", "starred_actors", "Russell Crowe"),
    ("Gladiator", "starred_actors", "Russell Crowe"),
    ("Gladiator", "directed_by", "Ridley Scott"),
    ("Alien", "directed_by", "Ridley Scott"),
    ("Alien", "release_year", "1979"),
]


@pytest.fixture
def movies_kg() -> KnowledgeGraph:
    return KnowledgeGraph.from_triples(MOVIES)


@pytest.fixture(scope="module")
def northwind(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeGraph:
    """The bundled Northwind property graph as a KG store with its tables (text2cypher's embedded backend)."""
    from kgrag.demo import demo_path
    from kgrag.graph.property_graph import PropertyGraph

    graph = PropertyGraph.load(demo_path("northwind"))
    store = graph.to_knowledge_graph().save(tmp_path_factory.mktemp("nw") / "northwind")
    graph.save_tables(store)
    return KnowledgeGraph.load(store)


def load_benchmark(name: str) -> Any:
    """The script ``benchmarks/NAME.py`` as a module (it imports its siblings, such as bench_common, by name)."""
    import importlib.util

    folder = REPO / "benchmarks"
    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(folder))


def shared_file(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test with the reason."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available here: {path}")
    return path


def run_cli(*args: str, ok: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m kgrag ARGS`` as a user would; with ``ok`` the exit status must be 0."""
    proc = subprocess.run([sys.executable, "-m", "kgrag", *args], capture_output=True, text=True, timeout=timeout)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def local_client(app: Any) -> Any:
    """FastAPI's TestClient sending ``Host: 127.0.0.1`` as a local browser does (the service refuses other
    Host names, and TestClient's default is ``testserver``)."""
    from fastapi.testclient import TestClient

    return TestClient(app, base_url="http://127.0.0.1")


class RecordingLLM(ScriptedLLM):
    """A scripted LLM that reports a context window and keeps every call's prompt name, messages and generation
    parameters (the grammar among them), for tests of what a method sends; like every scripted model it
    enforces no grammar."""

    def __init__(self, *rules: dict[str, Any], default: str = "x", context_window: int = 4096) -> None:
        super().__init__({"rules": list(rules), "default": default})
        self.context_window = context_window
        self.calls: list[tuple[str, Any, Any]] = []

    def _generate(self, messages: Any, params: Any) -> Any:
        self.calls.append((self._current_name, messages, params))
        return super()._generate(messages, params)

    def messages(self, name: str) -> list[Any]:
        return [m for n, m, _ in self.calls if n == name]

    @property
    def grammars(self) -> list[str | None]:
        """The grammar sent with each call, in order."""
        return [params.grammar for _, _, params in self.calls]
