"""The prompt tokens the local model would read for each question, offline in minutes (issue #26).

A prompt layout change (fixed instructions moved before the variable part, a shorter evidence format) changes
what llama.cpp must evaluate; measuring it with the model takes an hour of LLM time per method and set. The
tokens themselves need no model: each call is rendered with the default model's own chat template, tokenised
with its vocabulary (``vocab_only``, no weights), and its *evaluated* tokens are its length less the longest
prefix it shares with a prompt whose KV state llama.cpp would still keep (the same 512 MB budget of states,
~28 KB a token, as ``models/llm/llamacpp.py``'s prefix states). No reply is generated.

Only single-call methods whose prompt does not depend on an earlier reply are exact (``frag``, ``kaping``,
``llm``); the script refuses the others. Checked against a real run: frag on the WebQSP proxy's first 100
gives a median of 414.5 prompt tokens here and in the run, and 220 evaluated here and in a fresh run.

    python benchmarks/prompt_tokens.py --methods frag,kaping --suites webqsp,user_kgs --limit 100 \\
        [--sample N --seed S] [--set KEY=VALUE ...] [--out benchmarks/results/prompt_tokens.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import deque
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import emit_json, parse_value
from kgrag.eval.suite import RunOptions, run_suite
from kgrag.eval.suite_file import find_suite, load_suite
from kgrag.models.llm.base import LLM, Generation, GenerationParams, Messages

REPO = Path(__file__).resolve().parents[1]
EXACT = ("frag", "kaping", "llm")
KEPT_TOKENS = 512 * 1024 // 28  # llamacpp.PREFIX_STATES_MB of KV states at ~28 KB a token (Qwen2.5-1.5B)


class PromptReader(LLM):
    """Counts what each prompt would cost the default local model; replies are empty."""

    def __init__(self, model_path: Path) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        super().__init__()
        self._vocab = Llama(str(model_path), vocab_only=True, verbose=False)
        meta = self._vocab.metadata
        self._format = Jinja2ChatFormatter(
            template=meta["tokenizer.chat_template"],
            eos_token=self._vocab.detokenize([self._vocab.token_eos()]).decode("utf-8", "replace"),
            bos_token=self._vocab.detokenize([self._vocab.token_bos()]).decode("utf-8", "replace"),
        )
        self._kept: deque[list[int]] = deque()
        self.model_id = f"llamacpp:{model_path.stem}:prompt-tokens-only"

    def count_tokens(self, text: str) -> int:
        return len(self._vocab.tokenize(text.encode("utf-8"), add_bos=False))

    def _generate(self, messages: Messages, params: GenerationParams) -> Generation:
        text = self._format(messages=messages).prompt
        ids = self._vocab.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        shared = max((_common_prefix(ids, kept) for kept in self._kept), default=0)
        self._kept.append(ids)
        while sum(map(len, self._kept)) > KEPT_TOKENS and len(self._kept) > 1:
            self._kept.popleft()
        return Generation("", prompt_tokens=len(ids), evaluated_prompt_tokens=len(ids) - shared)


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--methods", default="frag,kaping", help=f"comma-separated, of {', '.join(EXACT)}")
    parser.add_argument("--suites", default="webqsp,user_kgs", help="suites under benchmarks/suites")
    parser.add_argument("--limit", type=int, default=100, help="first N questions per group")
    parser.add_argument("--sample", type=int, default=None, help="N questions drawn per group instead (with --seed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--data", type=Path, default=None, help="benchmark data (default: as kgrag bench)")
    parser.add_argument("--kg-cache", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here too")
    args = parser.parse_args(argv)
    methods = args.methods.split(",")
    inexact = sorted(set(methods) - set(EXACT))
    if inexact:
        parser.error(f"{', '.join(inexact)}: a later call's prompt depends on an earlier reply; use llm_cost.py")
    from kgrag.models.llm import DEFAULT_LLM
    from kgrag.models.manager import resolve

    reader = PromptReader(resolve(DEFAULT_LLM.split(":", 1)[-1]))
    settings = {k: parse_value(v) for k, _, v in (s.partition("=") for s in args.settings)}
    report: dict[str, Any] = {
        "command": "python benchmarks/prompt_tokens.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "model": reader.model_id,
        "note": "medians per question; evaluated = not restored from a kept KV prefix; questions in suite order",
        "settings": settings,
        "sets": {},
    }
    with tempfile.TemporaryDirectory(prefix="kgrag-prompt-tokens-") as tmp:
        for method in methods:
            for suite_name in args.suites.split(","):
                suite = load_suite(find_suite(suite_name, REPO), data_dir=args.data)
                options = RunOptions(
                    out=Path(tmp) / method / suite_name,
                    methods=[method],
                    settings=dict(settings),
                    llm=reader,
                    limit=args.limit,
                    sample=args.sample,
                    seed=args.seed,
                    kg_cache=args.kg_cache,
                )
                for kg in run_suite(suite, options).kgs:
                    for rows in kg.rows_by_method.values():
                        groups: dict[str, list[dict[str, Any]]] = {"": rows}  # the KG's questions, then per group
                        for row in rows:
                            if row.get("group"):
                                groups.setdefault(row["group"], []).append(row)
                        for group, members in groups.items():
                            name = f"{method} {kg.entry.name}" + (f"/{group}" if group else "")
                            report["sets"][name] = {
                                "n": len(members),
                                "prompt_tokens_median": statistics.median(r["prompt_tokens"] for r in members),
                                "evaluated_prompt_tokens_median": statistics.median(
                                    r["evaluated_prompt_tokens"] for r in members
                                ),
                            }
                            print(name, report["sets"][name], file=sys.stderr)
    emit_json(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
