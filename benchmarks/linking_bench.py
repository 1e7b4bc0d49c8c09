"""Entity-linking benchmark on the MetaQA dev questions; writes ``benchmarks/results/linking.json``.

Usage::

    python benchmarks/linking_bench.py              # all dev questions of the 1/2/3-hop files (~39k)
    python benchmarks/linking_bench.py --limit 500  # the first 500 questions of each file (quick run)

Every MetaQA question carries its topic entity in brackets (``what movies did [Tom Cullen] act in``) and
that text is exactly an entity name of the KB, so it is the gold entity.  Measured:

0. Index build on a fresh store (temporary directory, nothing cached on disk): ``NameIndex``,
   ``FuzzyLinker``, ``EmbeddingLinker`` (loading the static embedder + embedding every name + faiss).
   Each repeat loads the store again, deletes the saved embedding index and clears the in-process caches
   (token folding, embedder), so every repeat is a cold build.
1. Mention given: ``HybridLinker.link(bracket text, k=3)``; top-1 and top-3 accuracy.
2. Mention finding: brackets removed, ``HybridLinker.find_mentions(question)``; the first (most salient)
   span's candidates give top-1 / top-3; also "gold among any span's candidates" and "no mention found".
3. Typos: 1–2 random letter edits (substitution, deletion, insertion, transposition; never the first
   character; only mentions of ≥ 4 characters; re-drawn when the result is another name of the KB) in the
   gold mention, then ``link(typo, k=3)``, and ``find_mentions`` on the question with the typo'd mention.
4. Speed: questions/s of ``HybridLinker.link_text`` (mention finding + candidates) on the bracket-free
   questions that take the exact-name path; fuzzy-fallback rate and its per-question time; per-call times.

Method: the machine is small (2 cores) and shared, so timings are medians over repeats (build, speed) or
over calls (latencies).  faiss runs flat inner-product search with OpenMP threads; on a busy 2-core box a
single-query search with 2 threads is several times slower than with one, so the accuracy passes use
``--faiss-threads`` (default 1; the search is exact, so results do not depend on it) and the typo-link
latency is measured both ways, interleaved.  Failures are classified (wrong span, span too long/short,
case duplicates, punctuation variants, names as close as the gold one, ...) and up to 30 examples per
measurement, spread over the categories, are stored in the JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import gzip
import importlib
import importlib.util
import json
import os
import platform
import random
import re
import shutil
import statistics
import string
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_common import first_line_value, module_version

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
RESULTS = ROOT / "benchmarks" / "results"
KB_BUNDLED = SRC / "kgrag" / "data" / "metaqa" / "kb.txt.gz"
DATA_DIR = Path("/work/shared/data/metaqa")
QA_FILES = ("qa_1hop_dev.txt", "qa_2hop_dev.txt.gz", "qa_3hop_dev.txt.gz")
K = 3
MAX_EXAMPLES = 30
BRACKET = re.compile(r"\[([^\]]+)\]")

if importlib.util.find_spec("kgrag") is None:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(SRC))

perf = time.perf_counter


# ---------------------------------------------------------------------- recording
@dataclass
class Metric:
    name: str
    value: float
    unit: str
    goal: float | None = None
    cmp: str = ">="  # the value passes when ``value <cmp> goal``
    note: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool | None:
        if self.goal is None:
            return None
        if self.value != self.value:  # NaN
            return False
        return self.value >= self.goal if self.cmp == ">=" else self.value < self.goal

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "value": round(self.value, 6),
            "unit": self.unit,
            "goal": self.goal,
            "cmp": self.cmp if self.goal is not None else None,
            "pass": self.passed,
        }
        if self.note:
            out["note"] = self.note
        if self.details:
            out["details"] = self.details
        return out


@dataclass
class Recorder:
    metrics: list[Metric] = field(default_factory=list)
    sections: dict[str, Any] = field(default_factory=dict)

    def add(self, name: str, value: float, unit: str, goal: float | None = None, cmp: str = ">=", **kw: Any) -> Metric:
        metric = Metric(name, float(value), unit, goal, cmp, **kw)
        self.metrics.append(metric)
        return metric


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def ms_stats(seconds: Sequence[float]) -> dict[str, Any]:
    """Median / p90 / max of per-call times, in milliseconds."""
    if not seconds:
        return {"calls": 0}
    ordered = sorted(seconds)
    return {
        "calls": len(ordered),
        "median_ms": round(1e3 * median(ordered), 4),
        "p90_ms": round(1e3 * ordered[int(0.9 * (len(ordered) - 1))], 4),
        "max_ms": round(1e3 * ordered[-1], 4),
    }


def share(count: int, total: int) -> float:
    return count / total if total else float("nan")


def progress(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------- machine info
def machine_info() -> dict[str, Any]:
    mem_kib = first_line_value("/proc/meminfo", "MemTotal")
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": first_line_value("/proc/cpuinfo", "model name"),
        "nproc": os.cpu_count(),
        "nproc_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "mem_total_gib": round(int(mem_kib.split()[0]) / 2**20, 1) if mem_kib else None,
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "versions": {m: module_version(m) for m in ("kgrag", "numpy", "faiss", "rapidfuzz", "tokenizers")},
    }


# ---------------------------------------------------------------------- data
@dataclass
class Question:
    file: str
    line: int
    raw: str  # with the bracketed topic entity
    gold: str  # the bracket text = the gold entity's name
    plain: str  # brackets removed
    start: int  # gold mention span in ``plain``
    end: int

    def with_mention(self, mention: str) -> tuple[str, int, int]:
        """The question with ``mention`` in place of the bracketed entity, and the mention's span."""
        text = self.plain[: self.start] + mention + self.plain[self.end :]
        return text, self.start, self.start + len(mention)


def _open_text(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def load_questions(data_dir: Path, limit: int | None) -> tuple[list[Question], dict[str, int]]:
    questions: list[Question] = []
    counts: dict[str, int] = {}
    for name in QA_FILES:
        n = 0
        with _open_text(data_dir / name) as fh:
            for lineno, line in enumerate(fh, 1):
                if limit is not None and n >= limit:
                    break
                raw = line.rstrip("\n").split("\t", 1)[0]
                match = BRACKET.search(raw)
                if not match or not raw.strip():
                    continue
                gold = match.group(1)
                plain = raw[: match.start()] + gold + raw[match.end() :]
                questions.append(Question(name, lineno, raw, gold, plain, match.start(), match.start() + len(gold)))
                n += 1
        counts[name] = n
    return questions, counts


# ---------------------------------------------------------------------- helpers
@contextlib.contextmanager
def faiss_threads(n: int) -> Iterator[None]:
    """Run with ``n`` faiss OpenMP threads (``0``: leave the default)."""
    import faiss

    before = faiss.omp_get_max_threads()
    if n > 0:
        faiss.omp_set_num_threads(n)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def spans_json(spans: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {
            "text": s.text,
            "start": s.start,
            "end": s.end,
            "salience": round(float(s.salience), 3),
            "candidates": [[c.name, round(float(c.score), 4)] for c in s.candidates],
        }
        for s in spans
    ]


def pick_examples(failures: list[dict[str, Any]], limit: int = MAX_EXAMPLES) -> list[dict[str, Any]]:
    """Up to ``limit`` failures, round-robin over categories (most frequent first) so every kind shows."""
    by_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f in failures:
        by_cat[f["category"]].append(f)
    queues = sorted(by_cat.values(), key=len, reverse=True)
    out: list[dict[str, Any]] = []
    depth = 0
    while len(out) < limit and any(depth < len(q) for q in queues):
        for q in queues:
            if depth < len(q) and len(out) < limit:
                out.append(q[depth])
        depth += 1
    return out


def classify_span_failure(gold: str, start: int, end: int, spans: Sequence[Any]) -> str:
    """Why the first span's first candidate is not the gold entity (gold mention at ``[start, end)``)."""
    from kgrag.linking import normalize

    if not spans:
        return "no_mention"
    first = spans[0]
    top = first.candidates[0].name if first.candidates else None
    if first.start == start and first.end == end:
        if top is None:
            return "right_span_no_candidate"
        if top.lower() == gold.lower():
            return "right_span_case_duplicate"
        if normalize(top) == normalize(gold):
            return "right_span_same_normalised_name"
        return "right_span_other_entity"
    if normalize(first.text) == normalize(gold):
        # e.g. 'Moulin Rouge!' -> span 'Moulin Rouge': punctuation at the edge is not part of any token, so
        # the verbatim bonus goes to the punctuation-less twin name
        return "punctuation_variant"
    if first.start < end and start < first.end:
        if first.start <= start and first.end >= end:
            return "span_too_long"
        if first.start >= start and first.end <= end:
            return "span_too_short"
        return "span_crosses_gold"
    if any(c.name == gold for s in spans[1:] for c in s.candidates):
        return "wrong_span_gold_ranked_lower"
    return "wrong_span_gold_missed"


# ---------------------------------------------------------------------- 0. index build
def build_store(kb: Path, directory: Path, rec: Recorder) -> Path:
    from kgrag.graph.io import load_file

    t0 = perf()
    kg = load_file(kb)
    t1 = perf()
    store = kg.save(directory)
    t2 = perf()
    rec.add("store: load_file + save (MetaQA KB)", t2 - t0, "s", details={"load_file_s": t1 - t0, "save_s": t2 - t1})
    return store


def bench_build(store: Path, rec: Recorder, repeats: int) -> Any:
    """Cold index builds; returns the HybridLinker of the last repeat (indexes in memory)."""
    from kgrag.graph.kg import KnowledgeGraph
    from kgrag.linking import HybridLinker
    from kgrag.linking.normalize import fold
    from kgrag.models.embeddings import load_embedder

    runs: list[dict[str, float]] = []
    linker = None
    for r in range(repeats):
        shutil.rmtree(store / "embeddings", ignore_errors=True)
        fold.cache_clear()
        load_embedder.cache_clear()
        linker = None
        gc.collect()
        t0 = perf()
        kg = KnowledgeGraph.load(store)
        t1 = perf()
        linker = HybridLinker(kg)  # builds NameIndex.of(kg)
        t2 = perf()
        _ = linker.fuzzy
        t3 = perf()
        load_embedder("static")
        t4 = perf()
        _ = linker.embedding  # EmbeddingLinker: embeds every name, builds + saves the faiss index
        t5 = perf()
        run = {
            "store_load_s": t1 - t0,
            "name_index_s": t2 - t1,
            "fuzzy_linker_s": t3 - t2,
            "embedder_load_s": t4 - t3,
            "embedding_index_s": t5 - t4,
        }
        run["embedding_linker_s"] = run["embedder_load_s"] + run["embedding_index_s"]
        run["total_s"] = run["name_index_s"] + run["fuzzy_linker_s"] + run["embedding_linker_s"]
        runs.append(run)
        progress(f"build {r + 1}/{repeats}: " + ", ".join(f"{k} {v:.2f}" for k, v in run.items()))
    assert linker is not None
    med = {k: median([run[k] for run in runs]) for k in runs[0]}
    per_run = {"runs": [{k: round(v, 4) for k, v in run.items()} for run in runs]}
    names = linker.names
    rec.sections["index"] = {
        "entities": linker.kg.num_entities,
        "normalised_keys": len(names.keys),
        "entities_sharing_a_key": sum(len(v) for v in names.by_key.values() if len(v) > 1),
        "keys_with_more_than_k_entities": sum(1 for v in names.by_key.values() if len(v) > K),
        "max_tokens": names.max_tokens,
        "embedder": linker.embedding.embedder.id,
        "faiss_index": type(linker.embedding.index).__name__,
        **per_run,
    }
    rec.add("build: NameIndex", med["name_index_s"], "s")
    rec.add("build: FuzzyLinker", med["fuzzy_linker_s"], "s")
    rec.add(
        "build: EmbeddingLinker (static embedder + faiss)",
        med["embedding_linker_s"],
        "s",
        details={"embedder_load_s": med["embedder_load_s"], "embed_names_and_faiss_s": med["embedding_index_s"]},
    )
    rec.add(
        "build: total index build",
        med["total_s"],
        "s",
        goal=60.0,
        cmp="<",
        note=f"median of {repeats} cold builds: NameIndex + FuzzyLinker + EmbeddingLinker",
        details={"max_s": max(run["total_s"] for run in runs)},
    )

    # warm start: the saved faiss index is read back from the store
    kg = KnowledgeGraph.load(store)
    t0 = perf()
    _ = HybridLinker(kg).embedding
    rec.add("build: EmbeddingLinker from saved index (warm)", perf() - t0, "s")
    return linker


# ---------------------------------------------------------------------- 1. mention given
def bench_mention_given(linker: Any, questions: list[Question], rec: Recorder) -> None:
    from kgrag.linking import normalize

    top1 = top3 = 0
    times: list[float] = []
    failures: list[dict[str, Any]] = []
    for q in questions:
        t0 = perf()
        cands = linker.link(q.gold, k=K)
        times.append(perf() - t0)
        names = [c.name for c in cands]
        if names[:1] == [q.gold]:
            top1 += 1
        else:
            if not names:
                cat = "no_candidate"
            elif names[0].lower() == q.gold.lower():
                cat = "case_duplicate"
            elif normalize(names[0]) == normalize(q.gold):
                cat = "same_normalised_name"
            else:
                cat = "other_entity"
            failures.append(
                {
                    "category": cat,
                    "mention": q.gold,
                    "in_top3": q.gold in names,
                    "candidates": [[c.name, round(c.score, 4)] for c in cands],
                }
            )
        if q.gold in names[:K]:
            top3 += 1
    n = len(questions)
    rec.add("mention given: top-1 accuracy", share(top1, n), "fraction", goal=0.99, details={"n": n})
    rec.add("mention given: top-3 accuracy", share(top3, n), "fraction", details={"n": n})
    rec.add("mention given: link() per call (median)", 1e3 * median(times), "ms", details=ms_stats(times))
    rec.sections["mention_given"] = {
        "n": n,
        "top1_failures": len(failures),
        "failure_categories": dict(Counter(f["category"] for f in failures).most_common()),
        "failure_examples": pick_examples(failures),
    }


# ---------------------------------------------------------------------- 2. mention finding
def bench_find_mentions(linker: Any, questions: list[Question], rec: Recorder) -> None:
    top1 = top3 = anywhere = none = right_span = 0
    times: list[float] = []
    failures: list[dict[str, Any]] = []
    for q in questions:
        t0 = perf()
        spans = linker.find_mentions(q.plain)
        times.append(perf() - t0)
        first = [c.name for c in spans[0].candidates] if spans else []
        if not spans:
            none += 1
        if spans and spans[0].start == q.start and spans[0].end == q.end:
            right_span += 1
        if first[:1] == [q.gold]:
            top1 += 1
        else:
            failures.append(
                {
                    "category": classify_span_failure(q.gold, q.start, q.end, spans),
                    "question": q.plain,
                    "gold": q.gold,
                    "gold_span": [q.start, q.end],
                    "file": q.file,
                    "line": q.line,
                    "spans": spans_json(spans),
                }
            )
        if q.gold in first[:K]:
            top3 += 1
        if any(c.name == q.gold for s in spans for c in s.candidates):
            anywhere += 1
    n = len(questions)
    rec.add("find_mentions: top-1 accuracy (first span)", share(top1, n), "fraction", goal=0.95, details={"n": n})
    rec.add("find_mentions: top-3 accuracy (first span)", share(top3, n), "fraction", goal=0.98, details={"n": n})
    rec.add("find_mentions: gold among any span's candidates", share(anywhere, n), "fraction")
    rec.add("find_mentions: first span == gold mention span", share(right_span, n), "fraction")
    rec.add("find_mentions: no mention found", share(none, n), "fraction")
    rec.add("find_mentions: per question (median)", 1e3 * median(times), "ms", details=ms_stats(times))
    per_file = Counter(f["file"] for f in failures)
    rec.sections["find_mentions"] = {
        "n": n,
        "top1_failures": len(failures),
        "failure_categories": dict(Counter(f["category"] for f in failures).most_common()),
        "top1_failures_per_file": dict(per_file),
        "most_frequent_failing_gold": Counter(f["gold"] for f in failures).most_common(15),
        "failure_examples": pick_examples(failures),
    }


# ---------------------------------------------------------------------- 3. typos
def _edit(s: str, rng: random.Random) -> str:
    """One random letter edit at a position ≥ 1."""
    letters = [i for i in range(1, len(s)) if s[i].isalpha()]
    op = rng.choice(("substitute", "delete", "insert", "transpose"))
    if op == "transpose":
        pairs = [i for i in letters if i + 1 < len(s) and s[i + 1].isalpha() and s[i].lower() != s[i + 1].lower()]
        if pairs:
            i = rng.choice(pairs)
            return s[:i] + s[i + 1] + s[i] + s[i + 2 :]
        op = "substitute"
    if op == "insert":
        i = rng.randint(1, len(s))
        return s[:i] + rng.choice(string.ascii_lowercase) + s[i:]
    if not letters:
        return s
    i = rng.choice(letters)
    if op == "delete":
        return s[:i] + s[i + 1 :]
    new = rng.choice([c for c in string.ascii_lowercase if c != s[i].lower()])
    return s[:i] + (new.upper() if s[i].isupper() else new) + s[i + 1 :]


def make_typo(
    mention: str, rng: random.Random, known: Callable[[str], bool], tries: int = 20
) -> tuple[str, int] | None:
    """(typo, number of edits): 1–2 edits; ``None`` when the mention is too short, has no letter after the
    first character, or every draw gives back the name itself or another name of the KB (``known``)."""
    if len(mention) < 4 or not any(ch.isalpha() for ch in mention[1:]):
        return None
    for _ in range(tries):
        typo = mention
        n_edits = rng.choice((1, 2))
        for _ in range(n_edits):
            typo = _edit(typo, rng)
        if typo != mention and not known(typo):
            return typo, n_edits
    return None


def classify_typo_failure(linker: Any, typo: str, gold: str, names: list[str], key_pos: dict[str, int]) -> str:
    """Why ``gold`` is not the first candidate for ``typo``."""
    from rapidfuzz import fuzz

    from kgrag.linking import normalize

    if not names:
        return "no_candidate"
    top = names[0]
    if top.lower() == gold.lower():
        return "case_duplicate"
    if normalize(top) == normalize(gold):
        return "same_normalised_name"
    q, g = normalize(typo), normalize(gold)
    gold_ratio = fuzz.ratio(q, g)
    if fuzz.ratio(q, normalize(top)) >= gold_ratio:
        return "other_name_as_close"
    if gold_ratio < 60:
        return "below_fuzzy_cutoff"
    pool_fn = getattr(linker.fuzzy, "_pool", None)
    if pool_fn is not None and g in key_pos and key_pos[g] not in set(pool_fn(q).tolist()):
        return "fuzzy_prefilter_missed_gold"
    return "ranked_below_worse_match"


def bench_typos(linker: Any, questions: list[Question], rec: Recorder, seed: int) -> list[str]:
    """Returns the typo'd mentions (for the latency comparison)."""
    from kgrag.linking import normalize

    known = linker.names.by_key.__contains__
    key_pos = {k: i for i, k in enumerate(linker.names.keys)}
    skipped = Counter()
    typos: list[str] = []
    link_top1 = link_top3 = fm_top1 = fm_top3 = fm_any = fm_exact_path = 0
    link_times: list[float] = []
    fm_times: list[float] = []
    link_failures: list[dict[str, Any]] = []
    fm_failures: list[dict[str, Any]] = []
    by_group: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # group -> [top-3 hits, n]
    for idx, q in enumerate(questions):
        if idx and idx % 5000 == 0:
            progress(f"typos: {idx}/{len(questions)}")
        rng = random.Random(f"{seed}:{q.file}:{q.line}")
        made = make_typo(q.gold, rng, lambda s: known(normalize(s)))
        if made is None:
            skipped[
                "too short / no letters"
                if len(q.gold) < 4 or not any(ch.isalpha() for ch in q.gold[1:])
                else "every draw was another KB name"
            ] += 1
            continue
        typo, n_edits = made
        typos.append(typo)
        length = "4-5" if len(q.gold) <= 5 else "6-9" if len(q.gold) <= 9 else "10+"
        groups = (f"{n_edits} edit{'s' if n_edits > 1 else ''}", f"{length} chars")
        # (a) the typo'd mention given
        t0 = perf()
        cands = linker.link(typo, k=K)
        link_times.append(perf() - t0)
        names = [c.name for c in cands]
        if names[:1] == [q.gold]:
            link_top1 += 1
        else:
            link_failures.append(
                {
                    "category": classify_typo_failure(linker, typo, q.gold, names, key_pos),
                    "mention": q.gold,
                    "typo": typo,
                    "in_top3": q.gold in names,
                    "candidates": [[c.name, round(c.score, 4)] for c in cands],
                }
            )
        hit = q.gold in names[:K]
        link_top3 += hit
        for g in groups:
            by_group[g][0] += hit
            by_group[g][1] += 1
        # (b) the question with the typo'd mention, no brackets
        text, start, end = q.with_mention(typo)
        t0 = perf()
        spans = linker.find_mentions(text)
        fm_times.append(perf() - t0)
        exact_path = bool(linker.names.find_mentions(text))
        fm_exact_path += exact_path
        first = [c.name for c in spans[0].candidates] if spans else []
        if first[:1] == [q.gold]:
            fm_top1 += 1
        if q.gold in first[:K]:
            fm_top3 += 1
        else:
            fm_failures.append(
                {
                    "category": classify_span_failure(q.gold, start, end, spans),
                    "path": "exact" if exact_path else "fuzzy",
                    "question": text,
                    "gold": q.gold,
                    "typo_span": [start, end],
                    "spans": spans_json(spans),
                }
            )
        if any(c.name == q.gold for s in spans for c in s.candidates):
            fm_any += 1
    n = len(typos)
    rec.add("typo: link top-3 accuracy", share(link_top3, n), "fraction", goal=0.90, details={"n": n})
    rec.add("typo: link top-1 accuracy", share(link_top1, n), "fraction", details={"n": n})
    rec.add(
        "typo: link() per call (median)",
        1e3 * median(link_times),
        "ms",
        details=ms_stats(link_times),
        note="faiss threads as in --faiss-threads",
    )
    rec.add("typo: find_mentions top-3 accuracy (first span)", share(fm_top3, n), "fraction", details={"n": n})
    rec.add("typo: find_mentions top-1 accuracy (first span)", share(fm_top1, n), "fraction", details={"n": n})
    rec.add("typo: find_mentions gold among any span", share(fm_any, n), "fraction", details={"n": n})
    rec.add(
        "typo: find_mentions took the exact path",
        share(fm_exact_path, n),
        "fraction",
        note="an exact name elsewhere in the question (or inside the typo'd mention) prevents the fuzzy pass",
    )
    rec.add("typo: find_mentions per question (median)", 1e3 * median(fm_times), "ms", details=ms_stats(fm_times))
    top3_missed = [f for f in link_failures if not f["in_top3"]]
    fm_cats = Counter(f"{f['category']} ({f['path']} path)" for f in fm_failures)
    rec.sections["typos"] = {
        "n_with_typo": n,
        "skipped": dict(skipped),
        "link_top3_by_group": {
            g: {"n": n_g, "top3": round(share(h, n_g), 4)} for g, (h, n_g) in sorted(by_group.items())
        },
        "link_top1_failure_categories": dict(Counter(f["category"] for f in link_failures).most_common()),
        "link_top3_failure_categories": dict(Counter(f["category"] for f in top3_missed).most_common()),
        "link_top3_failure_examples": pick_examples(top3_missed),
        "link_top1_only_failure_examples": pick_examples([f for f in link_failures if f["in_top3"]], 10),
        "find_mentions_top3_failure_categories": dict(fm_cats.most_common()),
        "find_mentions_top3_failure_examples": pick_examples(fm_failures),
    }
    return typos


def bench_typo_latency(linker: Any, typos: list[str], rec: Recorder, sample: int, seed: int) -> None:
    """Per-call ``link(typo)`` time with faiss's default thread count vs one thread, interleaved."""
    import faiss

    default = faiss.omp_get_max_threads()
    chosen = random.Random(seed).sample(typos, min(sample, len(typos)))
    times: dict[int, list[float]] = {default: [], 1: []}
    for i, typo in enumerate(chosen):
        order = (default, 1) if i % 2 == 0 else (1, default)
        for threads in order:
            with faiss_threads(threads):
                t0 = perf()
                linker.link(typo, k=K)
                times[threads].append(perf() - t0)
    rec.add(
        f"typo: link() per call, faiss {default} threads (median)",
        1e3 * median(times[default]),
        "ms",
        details=ms_stats(times[default]),
        note="interleaved with the 1-thread calls",
    )
    if default != 1:
        rec.add(
            "typo: link() per call, faiss 1 thread (median)", 1e3 * median(times[1]), "ms", details=ms_stats(times[1])
        )


# ---------------------------------------------------------------------- 4. speed
def bench_speed(linker: Any, questions: list[Question], rec: Recorder, repeats: int, chunk: int) -> None:
    plain = [q.plain for q in questions]
    has_exact = [bool(linker.names.find_mentions(t)) for t in plain]
    exact = [t for t, ok in zip(plain, has_exact) if ok]
    fallback = [t for t, ok in zip(plain, has_exact) if not ok]
    for t in exact[:500]:  # warm-up
        linker.link_text(t)
    pass_rates: list[float] = []
    chunk_rates: list[float] = []
    all_rates: list[float] = []
    for _ in range(repeats):  # exact-path pass and all-questions pass interleaved, so noise hits both alike
        gc.collect()
        total = 0.0
        for i in range(0, len(exact), chunk):
            part = exact[i : i + chunk]
            t0 = perf()
            for t in part:
                linker.link_text(t)
            dt_ = perf() - t0
            total += dt_
            if len(part) == chunk or i == 0:
                chunk_rates.append(len(part) / dt_)
        pass_rates.append(len(exact) / total)
        gc.collect()
        t0 = perf()
        for t in plain:
            linker.link_text(t)
        all_rates.append(len(plain) / (perf() - t0))
    rec.add(
        "speed: link_text questions/s (exact path)",
        median(pass_rates),
        "questions/s",
        goal=2000.0,
        note=f"median of {repeats} passes over the {len(exact)} bracket-free questions with an exact name",
        details={
            "passes": [round(r, 1) for r in pass_rates],
            "median_chunk_rate": round(median(chunk_rates), 1),
            "min_chunk_rate": round(min(chunk_rates), 1),
            "max_chunk_rate": round(max(chunk_rates), 1),
            "chunk": chunk,
        },
    )
    rec.add(
        "speed: fuzzy fallback rate (bracket-free questions)",
        share(len(fallback), len(plain)),
        "fraction",
        details={"fallback_questions": len(fallback)},
    )
    if fallback:
        times = []
        for t in fallback[:500]:
            t0 = perf()
            linker.link_text(t)
            times.append(perf() - t0)
        rec.add(
            "speed: link_text per question on the fuzzy fallback (median)",
            1e3 * median(times),
            "ms",
            details=ms_stats(times),
        )
    rec.add(
        "speed: link_text questions/s (all bracket-free questions)",
        median(all_rates),
        "questions/s",
        details={"passes": [round(r, 1) for r in all_rates]},
    )


# ---------------------------------------------------------------------- reporting
def print_summary(rec: Recorder) -> None:
    width = max(len(m.name) for m in rec.metrics)
    print()
    print(f"{'metric':{width}s}  {'value':>12s}  {'goal':>9s}  result")
    print("-" * (width + 40))
    for m in rec.metrics:
        goal = "" if m.goal is None else f"{m.cmp}{m.goal:g}"
        verdict = {True: "PASS", False: "FAIL", None: "info"}[m.passed]
        print(f"{m.name:{width}s}  {m.value:12.4g}  {goal:>9s}  {verdict}  {m.unit}")
    print()
    for section, key in (
        ("mention_given", "failure_categories"),
        ("find_mentions", "failure_categories"),
        ("typos", "link_top3_failure_categories"),
        ("typos", "find_mentions_top3_failure_categories"),
    ):
        cats = rec.sections.get(section, {}).get(key)
        if cats:
            print(f"{section} {key}: " + ", ".join(f"{k} {v}" for k, v in cats.items()))
    failed = [m.name for m in rec.metrics if m.passed is False]
    print(f"\n{len(failed)} goal(s) missed" + (": " + "; ".join(failed) if failed else ""))


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="questions per file (default: all)")
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR, help="directory of the MetaQA qa_*hop_dev files")
    ap.add_argument("--kb", type=Path, default=KB_BUNDLED, help="MetaQA kb.txt(.gz) (default: the bundled copy)")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="JSON output (default benchmarks/results/linking.json; linking-limitN.json with --limit)",
    )
    ap.add_argument("--seed", type=int, default=20240611, help="seed of the typo generator")
    ap.add_argument("--build-repeats", type=int, default=3, help="cold index builds (median reported)")
    ap.add_argument("--speed-repeats", type=int, default=5, help="timed passes over the questions")
    ap.add_argument("--chunk", type=int, default=1000, help="questions per timed chunk")
    ap.add_argument(
        "--typo-sample", type=int, default=6000, help="questions (random, seeded) for the typo part; 0 = all"
    )
    ap.add_argument("--latency-sample", type=int, default=300, help="typo mentions for the faiss-threads latency")
    ap.add_argument(
        "--faiss-threads",
        type=int,
        default=1,
        help="faiss OpenMP threads during the accuracy passes (0: faiss default)",
    )
    args = ap.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        ap.error("--limit must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    out_path = args.out or RESULTS / ("linking.json" if args.limit is None else f"linking-limit{args.limit}.json")
    started = perf()
    info = machine_info()
    rec = Recorder()
    questions, counts = load_questions(args.data_dir, args.limit)
    progress(f"{len(questions)} questions: {counts}")

    with tempfile.TemporaryDirectory(prefix="kgrag-linking-bench-") as tmp:
        store = build_store(args.kb, Path(tmp) / "metaqa", rec)
        linker = bench_build(store, rec, args.build_repeats)
        import faiss

        info["faiss_default_threads"] = faiss.omp_get_max_threads()
        with faiss_threads(args.faiss_threads):
            progress("1. mention given")
            bench_mention_given(linker, questions, rec)
            progress("2. find_mentions")
            bench_find_mentions(linker, questions, rec)
            progress("3. typos")
            typo_questions = questions
            if args.typo_sample and args.typo_sample < len(questions):
                pick = random.Random(args.seed).sample(range(len(questions)), args.typo_sample)
                typo_questions = [questions[i] for i in sorted(pick)]
            typos = bench_typos(linker, typo_questions, rec, args.seed)
            progress("4. speed")
            bench_speed(linker, questions, rec, args.speed_repeats, args.chunk)
        progress("typo latency vs faiss threads")
        bench_typo_latency(linker, typos, rec, args.latency_sample, args.seed)

    info["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    report = {
        "benchmark": "entity linking on MetaQA dev questions (kgrag.linking.HybridLinker)",
        "command": "python benchmarks/linking_bench.py" + " ".join(["", *sys.argv[1:]]),
        "settings": {
            "limit_per_file": args.limit,
            "k": K,
            "seed": args.seed,
            "build_repeats": args.build_repeats,
            "speed_repeats": args.speed_repeats,
            "faiss_threads_accuracy_passes": args.faiss_threads or "faiss default",
        },
        "data": {
            "dir": str(args.data_dir),
            "kb": str(args.kb),
            "questions_per_file": counts,
            "questions": len(questions),
        },
        "machine": info,
        "wall_time_s": round(perf() - started, 1),
        "metrics": [m.as_dict() for m in rec.metrics],
        "goals_missed": [m.name for m in rec.metrics if m.passed is False],
        **rec.sections,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print_summary(rec)
    print(f"\nwrote {out_path} ({report['wall_time_s']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
