"""What a GBNF grammar costs per written token with the default local model (issue #26).

byokg's KG-Linker grammar (``methods/byokg/artifacts.py: linker_grammar``) stopped its replies from running to
the token cap, yet made the question slower end to end (benchmarks/RESULTS.md, 2026-12-05). This isolates the
sampling cost: the same prompt, written with no grammar, a grammar of free text lines, and KG-Linker's grammar
over 40 relation names, through kgrag's own llama.cpp backend (so with its log-probability sampler too), each
call after a warm-up that keeps the prompt's KV state. Reports milliseconds per written token (median of
``--repeats``) and the ratio to no grammar measured in the same run. llama.cpp checks every one of the
vocabulary's tokens (152k for Qwen2.5) against the grammar at each step, so the cost grows with the vocabulary,
not with the reply. Each grammar runs twice: checked over the whole vocabulary (llama-cpp-python's chain) and over
the likeliest tokens first (kgrag's greedy chain, ``kgrag.models.llm.grammar_first``), which must write the same
text.

    python benchmarks/grammar_cost.py [--repeats 3] [--tokens 120] [--out benchmarks/results/grammar_cost.json]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import emit_json
from kgrag.methods.byokg.artifacts import linker_grammar
from kgrag.models.llm import DEFAULT_LLM, load_llm
from kgrag.prompts.gbnf import choice_grammar

PROMPT = [
    {"role": "system", "content": "You write short lists, one item per line."},
    {"role": "user", "content": "Name relations between people, places and works, one per line, as many as you can."},
]
RELATIONS = [
    f"{domain}.{kind}.{name}"
    for domain in ("people", "location", "film", "music")
    for kind, name in (
        ("person", "place_of_birth"),
        ("person", "spouse_s"),
        ("place", "contains"),
        ("work", "directed_by"),
        ("work", "written_by"),
        ("group", "member"),
        ("thing", "genre"),
        ("event", "date"),
        ("role", "actor"),
        ("item", "language"),
    )
]
GRAMMARS = {
    "none": None,
    "free text lines": 'root ::= line{0,60}\nline ::= [^\\n<] [^\\n]{0,150} "\\n"',
    "byokg KG-Linker, 40 relations": linker_grammar(RELATIONS, query=False),
    "a choice among 40 names (frag's answer call)": choice_grammar(RELATIONS),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm", default=DEFAULT_LLM)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=120, help="max tokens written per call")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    llm = load_llm(args.llm)
    llm.generate(PROMPT, max_tokens=4)  # load, and keep the prompt's KV state for every call below
    report: dict = {
        "command": "python benchmarks/grammar_cost.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "llm": llm.model_id,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "note": "ms per written token, median of the repeats; ratio against no grammar in the same run. "
        "'whole vocabulary': llama.cpp's grammar sampler checks every token; 'likeliest first': the grammar "
        "checks the 256 likeliest (kgrag.models.llm.grammar_first), with the same text",
        "grammars": {},
    }
    for name, grammar in GRAMMARS.items():
        modes = {"": False} if grammar is None else {", whole vocabulary": False, ", likeliest first": True}
        texts = {}
        for suffix, first in modes.items():
            llm.grammar_first = first  # type: ignore[attr-defined]
            per_token, written = [], []
            for _ in range(args.repeats):
                gen = llm.generate(PROMPT, max_tokens=args.tokens, grammar=grammar)
                per_token.append(1000 * gen.seconds / max(gen.completion_tokens, 1))
                written.append(gen.completion_tokens)
            texts[suffix] = gen.text
            row = {"ms_per_token": round(statistics.median(per_token), 1), "written": written}
            report["grammars"][name + suffix] = row
            print(name + suffix, row, file=sys.stderr)
        if len(texts) == 2:
            report["grammars"][name + ", likeliest first"]["same_text"] = len(set(texts.values())) == 1
    base = report["grammars"]["none"]["ms_per_token"]
    for row in report["grammars"].values():
        row["ratio"] = round(row["ms_per_token"] / base, 2)
    emit_json(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
