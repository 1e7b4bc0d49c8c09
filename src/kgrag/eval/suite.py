"""Benchmark suites: several (KG, question set) pairs, the same methods on each, one report (``kgrag bench``).

A method tuned on one KG can look fine there and fall apart on the next one; judging a change on one KG at a
time hides that. A suite file names every pair once, so "every method on every KG" is one command and one
report (see :mod:`kgrag.eval.suite_report`).

A suite is a TOML file::

    description = "MetaQA vanilla dev on the bundled movie KB"
    methods = ["frag", "kaping", "byokg-scoring"]   # default methods of every KG below
    include = ["other.toml"]                        # the KGs of other suite files (their own defaults win)

    [settings.kaping]                               # method settings for every KG of this file
    top_k = 30

    [[kg]]
    name = "metaqa"                                 # the KG's directory in the output
    demo = "metaqa"                                 # one of: demo | file (+ format, head, relation, tail)
                                                    #         | mapping (a property graph) | store (made already)
    rename_relations = "metaqa-wikidata"            # optional, with demo or file: see kgrag.eval.renamed
    datasets = ["metaqa:${data}/metaqa/qa_1hop_dev.txt"]   # `kgrag eval` dataset specs
    methods = ["frag"]                              # optional, replaces the file's default
    [kg.settings.frag]                              # optional, over the file's settings
    hops = 2

Relative paths are relative to the suite file; ``${data}`` is the benchmark data directory (``--data``,
else ``$KGRAG_DATA``, else ``../shared/data`` next to the repository holding the suite), so a suite never
holds a machine's absolute paths. Every problem in a suite file is a ``path:line: what is wrong`` error,
found before anything runs.
"""

from __future__ import annotations

import json
import os
import re
import time
import tomllib
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kgrag import __version__
from kgrag.errors import KGFormatError
from kgrag.eval.datasets import Example, datasets, load_dataset, select
from kgrag.eval.renamed import RENAMINGS, write_renamed
from kgrag.eval.runner import evaluate_method, fill_gold_from_cypher, summarise
from kgrag.graph.io import FORMATS, load_file
from kgrag.graph.kg import KnowledgeGraph
from kgrag.graph.store import FORMAT_VERSION, file_digest, load_kg, save_kg

DATA_ENV = "KGRAG_DATA"
SOURCE_KEYS = ("demo", "file", "mapping", "store")
ROOT_KEYS = {"description", "methods", "settings", "include", "kg"}
KG_KEYS = {
    "name",
    "description",
    *SOURCE_KEYS,
    "format",
    "head",
    "relation",
    "tail",
    "rename_relations",
    "datasets",
    "methods",
    "settings",
}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_TOML_WHERE = re.compile(r"\s*\(at (?:line (\d+), column \d+|end of document)\)$")
_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\"' -]+?)\s*\]\]?\s*(#.*)?$")


class SuiteError(KGFormatError):
    """A suite file is malformed or names something that does not exist (``path:line: what is wrong``)."""


# ---------------------------------------------------------------------- what a suite holds
@dataclass
class KGEntry:
    """One KG of a suite and the questions asked of it (paths resolved; ``*_text`` as written, for reports)."""

    name: str
    suite_file: Path
    line: int
    source: dict[str, Any]
    source_text: str
    datasets: list[str]
    datasets_text: list[str]
    methods: list[str] = field(default_factory=list)
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    rename_relations: str | dict[str, str] | None = None
    description: str = ""


@dataclass
class Suite:
    path: Path
    description: str
    kgs: list[KGEntry]

    @property
    def name(self) -> str:
        return self.path.stem


# ---------------------------------------------------------------------- reading a suite file
class _Lines:
    """Finds the line of a key in a TOML file: tomllib keeps no positions, and an error without its line is
    a hunt through the file. Lines are attributed to the root or to the n-th ``[[kg]]`` block (with its
    ``[kg.…]`` sub-tables); a key is looked up by name inside its block."""

    def __init__(self, text: str) -> None:
        self.blocks: dict[int | None, list[tuple[int, str]]] = {None: []}
        block: int | None = None
        kgs = -1
        for number, raw in enumerate(text.splitlines(), start=1):
            header = _HEADER.match(raw)
            if header and header.group(1) == "[[" and header.group(2) == "kg":
                kgs += 1
                block = kgs
                self.blocks[block] = []
            elif header and not header.group(2).startswith("kg."):
                block = None
            self.blocks[block].append((number, raw))

    def find(self, block: int | None, *keys: str) -> int:
        """The line of the first of ``keys`` (tried in turn) assigned in ``block``, else the block's first line."""
        lines = self.blocks.get(block) or [(1, "")]
        for key in keys:
            pattern = re.compile(rf"(^|[\s{{,.]){re.escape(key)}\s*=|^\s*\[[^\]]*\b{re.escape(key)}\]")
            for number, raw in lines:
                if pattern.search(raw.split("#")[0]):
                    return number
        return lines[0][0]


def default_data_dir(suite_path: Path) -> Path | None:
    """``$KGRAG_DATA``, else ``../shared/data`` beside the repository (the first folder above the suite that
    holds a ``pyproject.toml``) when it exists."""
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV]).expanduser().resolve()
    for parent in suite_path.resolve().parents:
        if (parent / "pyproject.toml").exists():
            candidate = parent.parent / "shared" / "data"
            return candidate.resolve() if candidate.is_dir() else None
    return None


def find_suite(name_or_path: str | Path, search: Path | None = None) -> Path:
    """A suite file by path, or by bare name under ``benchmarks/suites/`` of ``search`` (default: the working
    directory): ``kgrag bench smoke``."""
    path = Path(name_or_path)
    if path.exists() or path.suffix:
        return path
    candidate = (search or Path.cwd()) / "benchmarks" / "suites" / f"{path.name}.toml"
    return candidate if candidate.exists() else path


def load_suite(path: str | Path, *, data_dir: Path | None = None, check_files: bool = True) -> Suite:
    """Read and check a suite file (and the files it includes). ``check_files=False`` skips the checks that
    the KG sources and question files exist (for listing a suite on a machine without the data)."""
    path = Path(path)
    if not path.is_file():
        raise SuiteError(str(path), None, "no such suite file")
    reader = _SuiteReader(data_dir if data_dir is not None else default_data_dir(path), check_files)
    kgs = reader.read(path.resolve(), methods=[], settings={}, stack=())
    description = reader.descriptions.get(path.resolve(), "")
    return Suite(path=path, description=description, kgs=kgs)


class _SuiteReader:
    def __init__(self, data_dir: Path | None, check_files: bool) -> None:
        self.data_dir = data_dir
        self.check_files = check_files
        self.names: dict[str, str] = {}  # KG name -> where it was defined
        self.descriptions: dict[Path, str] = {}

    def read(
        self, path: Path, *, methods: list[str], settings: dict[str, dict[str, Any]], stack: tuple[Path, ...]
    ) -> list[KGEntry]:
        text = path.read_text("utf-8")
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            message = str(exc)
            where = _TOML_WHERE.search(message)
            line = (int(where.group(1)) if where.group(1) else len(text.splitlines()) or 1) if where else None
            raise SuiteError(str(path), line, f"not valid TOML: {_TOML_WHERE.sub('', message)}") from None
        lines = _Lines(text)

        def fail(block: int | None, key: str | tuple[str, ...], problem: str) -> SuiteError:
            keys = (key,) if isinstance(key, str) else key
            return SuiteError(str(path), lines.find(block, *keys), problem)

        unknown = sorted(set(doc) - ROOT_KEYS)
        if unknown:
            raise fail(None, unknown[0], f"unknown key {unknown[0]!r} (keys: {', '.join(sorted(ROOT_KEYS))})")
        self.descriptions[path] = _string(doc.get("description", ""), lambda p: fail(None, "description", p))
        own_methods = self._methods(doc.get("methods"), lambda p: fail(None, "methods", p)) or methods
        own_settings = _merge_settings(settings, self._settings(doc.get("settings", {}), None, fail))

        entries: list[KGEntry] = []
        includes = doc.get("include", [])
        if not isinstance(includes, list) or not all(isinstance(i, str) for i in includes):
            raise fail(None, "include", "'include' is a list of suite file paths")
        for included in includes:
            target = self._path(included, path, lambda p: fail(None, "include", p))
            if target in (*stack, path):
                cycle = " → ".join(p.name for p in (*stack, path, target))
                raise fail(None, "include", f"including {included!r} makes a cycle: {cycle}")
            if not target.is_file():
                raise fail(None, "include", f"no such suite file: {target}")
            entries += self.read(target, methods=own_methods, settings=own_settings, stack=(*stack, path))

        kgs = doc.get("kg", [])
        if not isinstance(kgs, list) or not all(isinstance(k, dict) for k in kgs):
            raise fail(None, "kg", "'kg' entries are [[kg]] tables")
        for index, table in enumerate(kgs):
            entries.append(self._kg(path, lines, index, table, own_methods, own_settings, fail))
        if not entries and not stack:
            raise SuiteError(str(path), None, "the suite names no KG: add a [[kg]] table or an 'include'")
        return entries

    def _kg(
        self,
        path: Path,
        lines: _Lines,
        index: int,
        table: dict[str, Any],
        methods: list[str],
        settings: dict[str, dict[str, Any]],
        fail: Callable[[int | None, Any, str], SuiteError],
    ) -> KGEntry:
        unknown = sorted(set(table) - KG_KEYS)
        if unknown:
            raise fail(index, unknown[0], f"unknown key {unknown[0]!r} in a [[kg]] table")
        name = table.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise fail(index, "name", "each [[kg]] needs a 'name' of letters, digits, '.', '_' or '-'")
        if name in self.names:
            raise fail(index, "name", f"KG name {name!r} is used twice (first at {self.names[name]})")
        line = lines.find(index, "name")
        self.names[name] = f"{path}:{line}"

        given = [k for k in SOURCE_KEYS if k in table]
        if len(given) != 1:
            raise fail(index, given[1:] or "name", f"KG {name!r} needs exactly one of: {', '.join(SOURCE_KEYS)}")
        kind = given[0]
        value = table[kind]
        if not isinstance(value, str) or not value:
            raise fail(index, kind, f"'{kind}' is a string")
        source: dict[str, Any] = {"kind": kind}
        if kind == "demo":
            from kgrag.demo import DEMOS

            if value not in DEMOS:
                raise fail(index, kind, f"unknown demo KG {value!r}; available: {', '.join(DEMOS)}")
            source["demo"] = value
        else:
            target = self._path(value, path, lambda p: fail(index, kind, p))
            if self.check_files and not target.exists():
                raise fail(index, kind, f"no such {'store directory' if kind == 'store' else 'file'}: {target}")
            source["path"] = target
        for option in ("format", "head", "relation", "tail"):
            if option in table:
                if kind != "file":
                    raise fail(index, option, f"'{option}' goes with 'file', not '{kind}'")
                if not isinstance(table[option], str | int) or isinstance(table[option], bool):
                    raise fail(index, option, f"'{option}' is a column name or number")
                source[option] = table[option]
        if "format" in source and source["format"] not in ("auto", *FORMATS):
            raise fail(index, "format", f"unknown format {source['format']!r}; one of auto, {', '.join(FORMATS)}")

        renaming = table.get("rename_relations")
        if renaming is not None:
            from kgrag.demo import DEMOS

            if kind not in ("file", "demo") or (kind == "demo" and DEMOS[value].property_graph):
                raise fail(index, "rename_relations", "'rename_relations' works on a triples 'file' or 'demo'")
            if isinstance(renaming, str) and renaming not in RENAMINGS:
                raise fail(
                    index, "rename_relations", f"unknown renaming {renaming!r}; available: {', '.join(RENAMINGS)}"
                )
            if isinstance(renaming, dict) and not all(isinstance(v, str) and v.strip() for v in renaming.values()):
                raise fail(index, "rename_relations", "a renaming table maps old relation names to new ones")
            if not isinstance(renaming, str | dict):
                raise fail(index, "rename_relations", 'a renaming\'s name, or a table {old = "new"}')

        specs = table.get("datasets")
        if not isinstance(specs, list) or not specs or not all(isinstance(s, str) for s in specs):
            raise fail(index, ("datasets", "name"), f"KG {name!r} needs 'datasets', a list of KIND:FILE specs")
        resolved = [self._dataset(spec, path, lambda p: fail(index, "datasets", p)) for spec in specs]

        kg_methods = self._methods(table.get("methods"), lambda p: fail(index, "methods", p)) or methods
        kg_settings = _merge_settings(settings, self._settings(table.get("settings", {}), index, fail))
        description = _string(table.get("description", ""), lambda p: fail(index, "description", p))
        return KGEntry(
            name=name,
            suite_file=path,
            line=line,
            source=source,
            source_text=f"{kind}:{value}",
            datasets=resolved,
            datasets_text=list(specs),
            methods=kg_methods,
            settings=kg_settings,
            rename_relations=renaming,
            description=description,
        )

    def _path(self, value: str, suite: Path, fail: Callable[[str], SuiteError]) -> Path:
        """``value`` with ``${data}`` put in, relative to the suite file's folder."""

        def put(match: re.Match[str]) -> str:
            if match.group(1) != "data":
                raise fail(f"unknown variable ${{{match.group(1)}}} (only ${{data}} is defined)")
            if self.data_dir is None:
                raise fail(
                    f"uses ${{data}} but no data directory is known: pass --data DIR or set {DATA_ENV} "
                    "(../shared/data next to the repository does not exist)"
                )
            return str(self.data_dir)

        expanded = Path(_VARIABLE.sub(put, value)).expanduser()
        return expanded if expanded.is_absolute() else (suite.parent / expanded).resolve()

    def _dataset(self, spec: str, suite: Path, fail: Callable[[str], SuiteError]) -> str:
        kind, sep, arg = spec.partition(":")
        if not sep or kind not in datasets:
            raise fail(f"dataset spec {spec!r} is KIND:FILE with KIND one of: {', '.join(datasets)}")
        file, query_sep, query = arg.partition("?")
        target = self._path(file, suite, fail)
        if self.check_files and not target.is_file():
            raise fail(f"no such question file: {target}")
        return f"{kind}:{target}{query_sep}{query}"

    @staticmethod
    def _methods(value: Any, fail: Callable[[str], SuiteError]) -> list[str]:
        from kgrag.methods import registry

        if value is None:
            return []
        if not isinstance(value, list) or not value or not all(isinstance(m, str) for m in value):
            raise fail("'methods' is a non-empty list of method names")
        for name in value:
            if name not in registry:
                raise fail(f"unknown method {name!r}; choose from: {', '.join(registry)}")
        return list(value)

    @staticmethod
    def _settings(
        value: Any, block: int | None, fail: Callable[[int | None, Any, str], SuiteError]
    ) -> dict[str, dict[str, Any]]:
        """``{method: {setting: value}}``, each value checked by the method's Config (as ``--set`` would be)."""
        from kgrag.methods import registry

        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise fail(block, "settings", "'settings' holds one table per method: [settings.frag]")
        for method, options in value.items():
            if method not in registry:
                raise fail(block, method, f"settings for unknown method {method!r}; choose from: {', '.join(registry)}")
            config = registry.get(method).Config
            for key in options:
                if key not in config.model_fields:
                    known = ", ".join(config.model_fields) or "none"
                    raise fail(block, key, f"method {method!r} has no setting {key!r} (settings: {known})")
            try:
                config(**options)
            except ValidationError as exc:
                first = exc.errors()[0]
                key = str(first["loc"][0]) if first["loc"] else method
                raise fail(block, key, f"method {method!r}, setting {key!r}: {first['msg']}") from None
        return {m: dict(o) for m, o in value.items()}


def _string(value: Any, fail: Callable[[str], SuiteError]) -> str:
    if not isinstance(value, str):
        raise fail("a description is a string")
    return value


def _merge_settings(
    base: Mapping[str, Mapping[str, Any]], over: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    merged = {method: dict(options) for method, options in base.items()}
    for method, options in over.items():
        merged.setdefault(method, {}).update(options)
    return merged


# ---------------------------------------------------------------------- building the KGs
def source_digest(entry: KGEntry) -> dict[str, Any]:
    """What a built store depends on: the source files' sha256, the build options, kgrag's store format."""
    from kgrag.demo import demo_path, get_demo

    source = entry.source
    if source["kind"] == "demo":
        path = demo_path(source["demo"])
        files = [path]
        if get_demo(source["demo"]).property_graph:
            files = sorted(p for p in path.parent.iterdir() if p.suffix in (".csv", ".json"))
    elif source["kind"] == "mapping":
        files = sorted(p for p in source["path"].parent.iterdir() if p.suffix in (".csv", ".json"))
    else:
        files = [source["path"]]
    return {
        "source": entry.source_text,
        "options": {k: v for k, v in source.items() if k not in ("kind", "path", "demo")},
        "rename_relations": entry.rename_relations,
        "files": {p.name: file_digest(p) for p in files},
        "store_format": FORMAT_VERSION,
        "kgrag": __version__,
    }


@dataclass
class BuiltKG:
    kg: KnowledgeGraph
    built: bool  # False when a cached store was reused
    seconds: float


def build_kg(entry: KGEntry, cache_dir: Path) -> BuiltKG:
    """Load the KG of ``entry``: a ``store`` as it is; any other source built once into ``cache_dir/<name>``
    and reused while its sources and options are unchanged (a record of them sits beside the store)."""
    start = time.perf_counter()
    source = entry.source
    if source["kind"] == "store":
        return BuiltKG(load_kg(source["path"]), False, time.perf_counter() - start)
    target = cache_dir / entry.name
    record = cache_dir / f"{entry.name}.source.json"
    wanted = source_digest(entry)
    if record.exists() and (target / "manifest.json").exists():
        try:
            if json.loads(record.read_text("utf-8")) == wanted:
                return BuiltKG(load_kg(target), False, time.perf_counter() - start)
        except ValueError:
            pass  # an unreadable record: build again
    cache_dir.mkdir(parents=True, exist_ok=True)
    record.unlink(missing_ok=True)  # a build that fails half-way must not look current
    _build_store(entry, target, cache_dir)
    record.write_text(json.dumps(wanted, indent=2) + "\n", "utf-8")
    return BuiltKG(load_kg(target), True, time.perf_counter() - start)


def _build_store(entry: KGEntry, target: Path, cache_dir: Path) -> None:
    from kgrag.demo import demo_path, get_demo

    source = entry.source
    path: Path = source.get("path") or demo_path(source["demo"])
    is_mapping = source["kind"] == "mapping" or (source["kind"] == "demo" and get_demo(source["demo"]).property_graph)
    if is_mapping:
        from kgrag.graph.property_graph import PropertyGraph

        graph = PropertyGraph.load(path)
        save_kg(graph.to_knowledge_graph(), target, derive=graph.save_tables)
        return
    fmt = source.get("format", get_demo(source["demo"]).format if source["kind"] == "demo" else "auto")
    columns = {k: source[k] for k in ("head", "relation", "tail") if k in source}
    if entry.rename_relations is not None:
        # the renamed KG is written out as a file and ingested like any user's file
        renamed = cache_dir / f"{entry.name}.triples.tsv.gz"
        write_renamed(path, renamed, entry.rename_relations, format=fmt, **columns)
        path, fmt, columns = renamed, "tsv", {}
    save_kg(load_file(path, format=fmt, **columns), target)


# ---------------------------------------------------------------------- running
ProgressFactory = Callable[[str, int], AbstractContextManager[Callable[[dict[str, Any]], None] | None]]


@dataclass
class RunOptions:
    """How ``run_suite`` runs: the same meaning as ``kgrag bench``'s options."""

    out: Path
    methods: list[str] | None = None  # replaces every KG's methods
    settings: dict[str, Any] = field(default_factory=dict)  # --set: over the suite's, for every method having it
    llm: Any = None
    retrieval_only: bool = False
    limit: int | None = None
    sample: int | None = None
    seed: int = 0
    workers: int = 1
    processes: bool = False
    kg_cache: Path | None = None
    only: list[str] | None = None

    @property
    def selection(self) -> str:
        if self.sample:
            return f"sample {self.sample} per group (seed {self.seed})"
        return f"first {self.limit} per group" if self.limit else "all"


@dataclass
class KGResult:
    """One KG's run: its rows per method (the scored questions) and what they cost."""

    entry: KGEntry
    stats: dict[str, Any]
    build: dict[str, Any]
    questions: int
    unanswerable: list[dict[str, Any]]
    rows_by_method: dict[str, list[dict[str, Any]]]
    summary: dict[str, dict[str, Any]]


@dataclass
class SuiteResult:
    suite: Suite
    options: RunOptions
    kgs: list[KGResult]
    seconds: float
    llm_id: str

    def to_json(self) -> dict[str, Any]:
        """summary.json: machine-independent (paths as the suite file writes them)."""
        return {
            "suite": display_path(self.suite.path),
            "description": self.suite.description,
            "kgrag": __version__,
            "llm": self.llm_id,
            "retrieval_only": self.options.retrieval_only,
            "selection": self.options.selection,
            "seconds": round(self.seconds, 1),
            "kgs": {
                r.entry.name: {
                    "description": r.entry.description,
                    "source": r.entry.source_text,
                    "rename_relations": r.entry.rename_relations,
                    "datasets": r.entry.datasets_text,
                    "kg": {k: r.stats[k] for k in ("entities", "relations", "triples")},
                    "build": r.build,
                    "questions": r.questions,
                    "unanswerable": len(r.unanswerable),
                    "methods": r.summary,
                }
                for r in self.kgs
            },
        }


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when below it, else its file name: a summary that is
    committed must not carry the machine's directories."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.name


def methods_of(entry: KGEntry, options: RunOptions) -> list[str]:
    methods = options.methods or entry.methods
    if not methods:
        raise SuiteError(
            str(entry.suite_file),
            entry.line,
            f"no methods for KG {entry.name!r}: add methods = [...] or pass --methods",
        )
    return methods


def run_suite(
    suite: Suite,
    options: RunOptions,
    *,
    progress: ProgressFactory | None = None,
    status: Callable[[str], AbstractContextManager[Any]] | None = None,
) -> SuiteResult:
    """Run every KG of ``suite`` (or ``options.only``) and write ``OUT/<kg>/…``, ``OUT/summary.json`` and
    ``OUT/report.md``. ``progress(label, total)`` gives a per-question callback (a progress bar);
    ``status(text)`` wraps slow set-up work (a spinner). A re-run over the same OUT resumes."""
    from kgrag.eval.suite_report import write_suite_report

    start = time.perf_counter()
    entries = suite.kgs
    if options.only:
        unknown = sorted(set(options.only) - {e.name for e in entries})
        if unknown:
            raise SuiteError(
                str(suite.path), None, f"no KG named {', '.join(unknown)}; KGs: {', '.join(e.name for e in entries)}"
            )
        entries = [e for e in entries if e.name in options.only]
    for entry in entries:
        methods_of(entry, options)  # every KG has methods before the first one runs
    options.out.mkdir(parents=True, exist_ok=True)
    results = [_run_kg(entry, options, progress, status or (lambda _: nullcontext())) for entry in entries]
    result = SuiteResult(
        suite=suite,
        options=options,
        kgs=results,
        seconds=time.perf_counter() - start,
        llm_id="none" if options.llm is None or options.retrieval_only else str(options.llm.model_id),
    )
    (options.out / "summary.json").write_text(json.dumps(result.to_json(), indent=2) + "\n", "utf-8")
    write_suite_report(options.out, result)
    return result


def load_questions(entry: KGEntry) -> list[Example]:
    """The KG's questions from all its datasets; ids are prefixed with the dataset's number when two datasets
    share an id (results are stored by id, so a shared one would count as already answered)."""
    per_dataset = [load_dataset(spec) for spec in entry.datasets]
    ids = [ex.id for examples in per_dataset for ex in examples]
    if len(per_dataset) > 1 and len(set(ids)) != len(ids):
        for number, examples in enumerate(per_dataset, start=1):
            for ex in examples:
                ex.id = f"{number}/{ex.id}"
    questions = [ex for examples in per_dataset for ex in examples]
    seen: set[str] = set()
    for ex in questions:
        if ex.id in seen:
            raise SuiteError(str(entry.suite_file), entry.line, f"KG {entry.name!r}: question id {ex.id!r} twice")
        seen.add(ex.id)
    return questions


def _run_kg(
    entry: KGEntry,
    options: RunOptions,
    progress: ProgressFactory | None,
    status: Callable[[str], AbstractContextManager[Any]],
) -> KGResult:
    from kgrag.eval.report import write_report
    from kgrag.methods import get as get_method

    out = options.out / entry.name
    with status(f"{entry.name}: building the KG"):
        built = build_kg(entry, options.kg_cache or options.out / "kgs")
    kg = built.kg
    examples = select(load_questions(entry), limit=options.limit, sample=options.sample, seed=options.seed)
    if any("cypher" in ex.meta and not ex.answers for ex in examples):
        from kgrag.graph.backends import open_cypher_backend

        with status(f"{entry.name}: gold answers from the gold Cypher queries"):
            fill_gold_from_cypher(examples, open_cypher_backend(kg))
    scored = [ex for ex in examples if ex.answers]
    unanswerable = [_unanswerable(ex) for ex in examples if not ex.answers]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "unanswerable.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in unanswerable)

    rows_by_method: dict[str, list[dict[str, Any]]] = {}
    summary: dict[str, dict[str, Any]] = {}
    for name in methods_of(entry, options):
        method_cls = get_method(name)
        config = {**entry.settings.get(name, {}), **_own(method_cls, options.settings)}
        bar = progress(f"{entry.name}/{name}", len(scored)) if progress else nullcontext(None)
        started = time.perf_counter()
        with bar as on_result:
            rows = evaluate_method(
                kg,
                name,
                scored,
                out,
                llm=options.llm,
                retrieval_only=options.retrieval_only,
                workers=options.workers,
                processes=options.processes,
                method_config=config,
                on_result=on_result,
            )
        rows_by_method[name] = rows
        summary[name] = {**summarise(rows), **_cost(rows), "wall_seconds": round(time.perf_counter() - started, 2)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", "utf-8")
    if any(rows_by_method.values()):  # the KG's own `kgrag eval` report, every metric with its interval
        write_report(
            out,
            rows_by_method,
            {
                "kg": f"{entry.name} ({entry.source_text})",
                "datasets": entry.datasets_text,
                "llm": "none" if options.llm is None or options.retrieval_only else options.llm.model_id,
                "retrieval_only": options.retrieval_only,
                "selection": options.selection,
            },
        )
    return KGResult(
        entry=entry,
        stats=kg.stats(),
        build={"built": built.built, "seconds": round(built.seconds, 2)},
        questions=len(examples),
        unanswerable=unanswerable,
        rows_by_method=rows_by_method,
        summary=summary,
    )


def _own(method_cls: Any, settings: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in settings.items() if k in method_cls.Config.model_fields}


def _unanswerable(ex: Example) -> dict[str, Any]:
    """Why a question is left out of the scores: it has no gold answer to score against."""
    if ex.meta.get("gold_error"):
        reason = f"the gold query failed: {ex.meta['gold_error']}"
    elif "gold_rows" in ex.meta:
        reason = "the gold query returns no rows"
    else:
        reason = "the question file gives no gold answer"
    return {"id": ex.id, "group": ex.group, "question": ex.question, "reason": reason}


def _cost(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals next to summarise()'s means: what the whole run cost."""
    return {
        "llm_calls_total": int(sum(r["llm_calls"] for r in rows)),
        "prompt_tokens_total": int(sum(r["prompt_tokens"] for r in rows)),
        "completion_tokens_total": int(sum(r["completion_tokens"] for r in rows)),
        "seconds_total": round(float(sum(r["seconds"] for r in rows)), 2),
    }
