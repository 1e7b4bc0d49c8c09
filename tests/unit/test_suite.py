"""Benchmark suites (`kgrag bench`): reading suite files, with path:line errors; building and caching KGs; a run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kgrag.eval.suite import RunOptions, SuiteError, build_kg, find_suite, load_suite, run_suite
from tests.conftest import MOVIES, REPO, SHARED_DATA, run_cli

SUITES = REPO / "benchmarks" / "suites"


# ---------------------------------------------------------------------- suite files
def _suite(tmp_path: Path, text: str, name: str = "suite.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


def _tiny_files(tmp_path: Path) -> None:
    (tmp_path / "kb.txt").write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in MOVIES), "utf-8")
    (tmp_path / "qa_1hop_dev.txt").write_text("who directed [Alien]\tRidley Scott\nwho directed [Heat]\tMichael Mann\n")
    (tmp_path / "q.jsonl").write_text(
        json.dumps(
            {"question": "who acted in Gladiator", "answers": ["Russell Crowe"], "topic_entities": ["Gladiator"]}
        )
        + "\n"
        + json.dumps({"question": "an open question", "answer": None})
        + "\n"
    )


GOOD = """
description = "two KGs"
methods = ["frag", "kaping"]

[settings.kaping]
top_k = 7

[[kg]]
name = "movies"
file = "${data}/kb.txt"
datasets = ["metaqa:${data}/qa_1hop_dev.txt", "jsonl:q.jsonl"]

[[kg]]
name = "movies-renamed"
file = "kb.txt"
rename_relations = "metaqa-wikidata"
datasets = ["jsonl:q.jsonl?topic=keep"]
methods = ["frag"]
[kg.settings.kaping]
top_k = 9
"""


def test_a_suite_resolves_paths_data_and_defaults(tmp_path):
    _tiny_files(tmp_path)
    suite = load_suite(_suite(tmp_path, GOOD), data_dir=tmp_path)
    movies, renamed = suite.kgs
    assert suite.description == "two KGs" and suite.name == "suite"
    assert movies.source == {"kind": "file", "path": tmp_path / "kb.txt"}
    assert movies.datasets == [f"metaqa:{tmp_path / 'qa_1hop_dev.txt'}", f"jsonl:{tmp_path / 'q.jsonl'}"]
    assert movies.datasets_text[0] == "metaqa:${data}/qa_1hop_dev.txt"  # as written, for reports
    assert movies.methods == ["frag", "kaping"] and movies.settings == {"kaping": {"top_k": 7}}
    assert renamed.methods == ["frag"] and renamed.settings == {"kaping": {"top_k": 9}}
    assert renamed.datasets == [f"jsonl:{tmp_path / 'q.jsonl'}?topic=keep"]
    assert renamed.rename_relations == "metaqa-wikidata"


def test_include_passes_defaults_and_the_included_file_wins(tmp_path):
    _tiny_files(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "kb.txt").write_text("Heat|directed_by|Michael Mann\n")
    _suite(
        tmp_path / "sub",
        '[settings.kaping]\ntop_k = 3\n[[kg]]\nname = "a"\nfile = "kb.txt"\ndatasets = ["jsonl:../q.jsonl"]\n',
        "a.toml",
    )
    path = _suite(tmp_path, 'methods = ["kaping"]\ninclude = ["sub/a.toml"]\n[settings.kaping]\ntop_k = 5\n')
    (entry,) = load_suite(path).kgs
    assert entry.methods == ["kaping"] and entry.settings == {"kaping": {"top_k": 3}}
    assert entry.source["path"] == tmp_path / "sub" / "kb.txt"


BAD = [
    ('methods = ["frag"\n', r"suite.toml:1: not valid TOML"),
    ('colour = "red"\n', r"suite.toml:1: unknown key 'colour'"),
    ('methods = ["frag", "nope"]\n', r"suite.toml:1: unknown method 'nope'"),
    ("\n[settings.frag]\nhops = 2\ntypo_setting = 1\n", r"suite.toml:4: method 'frag' has no setting 'typo_setting'"),
    ('[settings.kaping]\n\ntop_k = "many"\n', r"suite.toml:3: method 'kaping', setting 'top_k'"),
    ('[[kg]]\nname = "a"\ndatasets = ["jsonl:q.jsonl"]\n', r"suite.toml:2: KG 'a' needs exactly one of"),
    ('[[kg]]\nname = "a"\ndemo = "metaqa"\nfile = "kb.txt"\ndatasets = ["jsonl:q.jsonl"]\n', r"suite.toml:4:"),
    ('[[kg]]\nname = "a"\n\nfile = "missing.txt"\ndatasets = ["jsonl:q.jsonl"]\n', r"suite.toml:4: no such file"),
    ('[[kg]]\nname = "a"\nfile = "kb.txt"\ndatasets = ["jsonl:nope.jsonl"]\n', r"suite.toml:4: no such question"),
    ('[[kg]]\nname = "a"\nfile = "kb.txt"\ndatasets = ["sparql:q.jsonl"]\n', r"suite.toml:4: dataset spec 'sparql"),
    ('[[kg]]\nname = "a"\nfile = "${home}/kb.txt"\ndatasets = ["jsonl:q.jsonl"]\n', r"suite.toml:3: unknown variab"),
    ('[[kg]]\nname = "a b"\nfile = "kb.txt"\ndatasets = ["jsonl:q.jsonl"]\n', r"suite.toml:2: each \[\[kg\]\]"),
    (
        '[[kg]]\nname = "a"\nfile = "kb.txt"\ndatasets = ["jsonl:q.jsonl"]\n[[kg]]\nname = "a"\nfile = "kb.txt"\n'
        'datasets = ["jsonl:q.jsonl"]\n',
        r"suite.toml:6: KG name 'a' is used twice \(first at .*suite.toml:2\)",
    ),
    (
        '[[kg]]\nname = "a"\ndemo = "northwind"\nrename_relations = "metaqa-wikidata"\ndatasets = ["jsonl:q.jsonl"]\n',
        r"suite.toml:4: 'rename_relations' works on a triples",
    ),
    ('[[kg]]\nname = "a"\nfile = "kb.txt"\nformat = "xml"\ndatasets = ["jsonl:q.jsonl"]\n', r"suite.toml:4: unknown f"),
    (
        '[[kg]]\nname = "a"\nfile = "kb.txt"\ndatasets = ["jsonl:q.jsonl"]\n[kg.settings.frag]\nhopz = 1\n',
        r"suite.toml:6: method 'frag' has no setting 'hopz'",
    ),
    ('include = ["suite.toml"]\n', r"suite.toml:1: including 'suite.toml' makes a cycle: suite.toml → suite.toml"),
    ('description = "nothing"\n', r"suite.toml: the suite names no KG"),
]


@pytest.mark.parametrize(("text", "error"), BAD)
def test_bad_suite_files_fail_with_path_and_line(tmp_path, text, error):
    _tiny_files(tmp_path)
    with pytest.raises(SuiteError, match=error):
        load_suite(_suite(tmp_path, text), data_dir=tmp_path)


def test_data_variable_needs_a_data_directory(tmp_path, monkeypatch):
    _tiny_files(tmp_path)
    monkeypatch.delenv("KGRAG_DATA", raising=False)
    path = _suite(tmp_path, '[[kg]]\nname = "a"\nfile = "${data}/kb.txt"\ndatasets = ["jsonl:q.jsonl"]\n')
    with pytest.raises(SuiteError, match=r"suite.toml:3: uses \$\{data\} but no data directory"):
        load_suite(path)  # tmp_path has no pyproject.toml above it, so no ../shared/data either
    monkeypatch.setenv("KGRAG_DATA", str(tmp_path))
    assert load_suite(path).kgs[0].source["path"] == tmp_path / "kb.txt"


def test_find_suite_by_name(tmp_path):
    (tmp_path / "benchmarks" / "suites").mkdir(parents=True)
    (tmp_path / "benchmarks" / "suites" / "smoke.toml").write_text("")
    assert find_suite("smoke", tmp_path) == tmp_path / "benchmarks" / "suites" / "smoke.toml"
    assert find_suite("other.toml", tmp_path) == Path("other.toml")


@pytest.mark.parametrize("path", sorted(SUITES.glob("*.toml")), ids=lambda p: p.name)
def test_shipped_suites_parse_and_hold_no_machine_paths(path):
    text = path.read_text("utf-8")
    assert not re.search(r"""["'](/|[A-Za-z]:\\)""", text), "a suite holds an absolute path"
    suite = load_suite(path, data_dir=Path("/nonexistent-data"), check_files=False)
    assert suite.kgs and all(entry.methods and entry.datasets for entry in suite.kgs)


def test_the_all_suite_lists_every_kg_of_issue_24():
    suite = load_suite(SUITES / "all.toml", data_dir=Path("/nonexistent-data"), check_files=False)
    names = [entry.name for entry in suite.kgs]
    assert names == [
        "metaqa",
        "metaqa-renamed",
        "webqsp-proxy",
        "freebase-tiny",
        "northwind",
        "university",
        "family",
        "catalogue",
        "software",
        "pharmacy",
        "bookshelf",
        "transit",
    ]
    renamed = suite.kgs[1]
    assert renamed.rename_relations == "metaqa-wikidata" and renamed.datasets == suite.kgs[0].datasets


def test_shipped_suites_find_their_files_in_the_shared_data():
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not available here: {SHARED_DATA}")
    assert len(load_suite(SUITES / "all.toml", data_dir=SHARED_DATA).kgs) == 12


# ---------------------------------------------------------------------- running
def test_kg_cache_reuses_a_store_until_its_source_changes(tmp_path):
    _tiny_files(tmp_path)
    suite = load_suite(_suite(tmp_path, GOOD), data_dir=tmp_path)
    renamed = suite.kgs[1]
    first = build_kg(renamed, tmp_path / "cache")
    assert first.built and "director" in first.kg.relations and "directed_by" not in first.kg.relations
    assert not build_kg(renamed, tmp_path / "cache").built
    with open(tmp_path / "kb.txt", "a") as fh:
        fh.write("Alien|has_genre|Horror\n")
    rebuilt = build_kg(renamed, tmp_path / "cache")
    assert rebuilt.built and "genre" in rebuilt.kg.relations


def test_run_writes_one_report_and_skips_unanswerable_questions(tmp_path):
    _tiny_files(tmp_path)
    suite = load_suite(_suite(tmp_path, GOOD), data_dir=tmp_path)
    out = tmp_path / "out"
    seen: list[str] = []

    def progress(label, total):
        from contextlib import nullcontext

        seen.append(f"{label}:{total}")
        return nullcontext(lambda row: None)

    result = run_suite(suite, RunOptions(out=out, methods=["frag"], retrieval_only=True), progress=progress)
    assert seen == ["movies/frag:3", "movies-renamed/frag:1"]
    summary = json.loads((out / "summary.json").read_text())
    movies = summary["kgs"]["movies"]
    assert movies["questions"] == 4 and movies["unanswerable"] == 1
    assert movies["methods"]["frag"]["n"] == 3 and movies["methods"]["frag"]["answer_recall"] == 1.0
    assert movies["datasets"][0] == "metaqa:${data}/qa_1hop_dev.txt"
    assert str(tmp_path) not in (out / "summary.json").read_text()  # no machine paths in the summary
    assert summary["kgs"]["movies-renamed"]["kg"]["relations"] == 4
    rows = [json.loads(line) for line in (out / "movies" / "frag" / "results.jsonl").read_text().splitlines()]
    assert {r["group"] for r in rows} == {"1hop", ""} and len(rows) == 3
    (skipped,) = [json.loads(line) for line in (out / "movies" / "unanswerable.jsonl").read_text().splitlines()]
    assert skipped["question"] == "an open question" and "no gold answer" in skipped["reason"]
    report = (out / "report.md").read_text()
    assert report.startswith("# kgrag benchmark: suite")
    assert re.search(r"\| movies \| 11 \| 4 \| 12 \| 3 \| 1\.000 \|", report)
    assert "| 1hop | 2 | 1.000 |" in report
    assert (out / "movies" / "report.md").exists() and result.kgs[0].build["built"]
    # a second run resumes: nothing is asked again, the store is reused
    again = run_suite(suite, RunOptions(out=out, methods=["frag"], retrieval_only=True, only=["movies"]))
    assert [r.entry.name for r in again.kgs] == ["movies"] and not again.kgs[0].build["built"]


def test_run_rejects_unknown_kg_names(tmp_path):
    _tiny_files(tmp_path)
    suite = load_suite(_suite(tmp_path, GOOD), data_dir=tmp_path)
    with pytest.raises(SuiteError, match="no KG named nope"):
        run_suite(suite, RunOptions(out=tmp_path / "out", retrieval_only=True, only=["nope"]))


def test_cli_bad_suite_is_one_line_exit_2(tmp_path):
    path = _suite(tmp_path, '[[kg]]\nname = "a"\ndemo = "metaqa"\ndatasets = ["jsonl:missing.jsonl"]\n')
    proc = run_cli("bench", str(path), "--retrieval-only", "--out", str(tmp_path / "out"), ok=False, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {path}:4: no such question file: {tmp_path / 'missing.jsonl'}"
    assert not (tmp_path / "out").exists()  # nothing is written before the suite is known to be good
