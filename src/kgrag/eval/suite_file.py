"""Reading and checking a benchmark suite file (see :mod:`kgrag.eval.suite` for what a suite is for).

Every problem is found here, before anything is built or run: a typo in the last KG of a suite must not
cost the hour the first KGs take.

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

import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kgrag.errors import KGFormatError
from kgrag.eval.datasets import datasets
from kgrag.eval.renamed import RENAMINGS
from kgrag.graph.io import FORMATS

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
        name, line = self._name(path, lines, index, table, fail)
        source = self._source(path, index, table, name, fail)
        kind, value = source["kind"], table[source["kind"]]
        renaming = _renaming(table.get("rename_relations"), kind, value, lambda p: fail(index, "rename_relations", p))

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

    def _name(
        self,
        path: Path,
        lines: _Lines,
        index: int,
        table: dict[str, Any],
        fail: Callable[[int | None, Any, str], SuiteError],
    ) -> tuple[str, int]:
        """The KG's name and line, claimed for it: names are output directories, so two KGs must not share one."""
        name = table.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise fail(index, "name", "each [[kg]] needs a 'name' of letters, digits, '.', '_' or '-'")
        if name in self.names:
            raise fail(index, "name", f"KG name {name!r} is used twice (first at {self.names[name]})")
        line = lines.find(index, "name")
        self.names[name] = f"{path}:{line}"
        return name, line

    def _source(
        self,
        path: Path,
        index: int,
        table: dict[str, Any],
        name: str,
        fail: Callable[[int | None, Any, str], SuiteError],
    ) -> dict[str, Any]:
        """``{"kind": …, "demo" or "path": …, file options}``: where the KG comes from, checked before any build."""
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
        return source

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


def _renaming(renaming: Any, kind: str, value: str, fail: Callable[[str], SuiteError]) -> str | dict[str, str] | None:
    """``rename_relations`` checked: a known renaming's name or an ``{old = "new"}`` table, on triples only
    (a property graph's relation names come from its mapping)."""
    if renaming is None:
        return None
    from kgrag.demo import DEMOS

    if kind not in ("file", "demo") or (kind == "demo" and DEMOS[value].property_graph):
        raise fail("'rename_relations' works on a triples 'file' or 'demo'")
    if isinstance(renaming, str) and renaming not in RENAMINGS:
        raise fail(f"unknown renaming {renaming!r}; available: {', '.join(RENAMINGS)}")
    if isinstance(renaming, dict) and not all(isinstance(v, str) and v.strip() for v in renaming.values()):
        raise fail("a renaming table maps old relation names to new ones")
    if not isinstance(renaming, str | dict):
        raise fail('a renaming\'s name, or a table {old = "new"}')
    return renaming


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
