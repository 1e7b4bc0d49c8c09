"""Run text2cypher_bench.py at today's code, reusing an earlier run's replies where a fresh call would write them.

A token check's name is part of the response-cache key, so a new version of text2cypher's check
(:mod:`kgrag.methods.text2cypher.bound_names`) misses every cached reply. Where the new version only refuses
more than the old one, an old reply none of whose characters it refuses is what greedy decoding under the new
check writes too: every token the old reply chose is still allowed, and it was the likeliest allowed one among
a larger set. Such replies are copied into the new cache under the new key before the call; every other call
(a reply the new check refuses, or a prompt the old run never sent) is fresh. Only valid when the grammar,
prompts and model are unchanged and the new check refuses a superset of what the old one did.

    python benchmarks/text2cypher_replay.py OLD_CACHE OLD_CHECK_NAME -- TEXT2CYPHER_BENCH_ARGS...
"""

from __future__ import annotations

import runpy
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from kgrag.models.cache import ResponseCache
from kgrag.models.llm import base
from kgrag.models.llm.token_checks import new_check

BENCH = Path(__file__).parent / "text2cypher_bench.py"


def replayable(text: str, check_name: str) -> bool:
    """Whether the check registered as ``check_name`` lets ``text`` be written, character by character."""
    check = new_check(check_name)
    for ch in text:
        if not check.allows(ch):
            return False
        check.accept(ch)
    return True


def replaying(old: ResponseCache, old_name: str, stats: Counter[str]) -> Any:
    """A replacement for :meth:`LLM.generate` that first copies a replayable old reply into the LLM's cache."""
    original = base.LLM.generate

    def generate(self: base.LLM, prompt: Any, *, token_check: str | None = None, **kw: Any) -> base.Generation:
        if self.cache is not None:
            messages = base.to_messages(prompt)
            decoding = {k: v for k, v in kw.items() if k != "name"}  # generate's keywords but the prompt's name
            params = base.GenerationParams.of_call(**decoding, token_check=token_check)
            then = replace(params, token_check=old_name if token_check else None)
            new_key, old_key = (base.cache_key(self.model_id, messages, p.as_dict()) for p in (params, then))
            hit = old.get(old_key)
            if hit is None:
                stats["absent"] += 1
            elif token_check and not replayable(hit[0], token_check):
                stats["refused"] += 1
            elif self.cache.get(new_key) is None:
                self.cache.put(new_key, hit[0], hit[1], hit[2], old.logprobs(old_key))
                stats["replayed"] += 1
        return original(self, prompt, token_check=token_check, **kw)

    return generate


def main(argv: list[str]) -> None:
    if len(argv) < 3 or argv[2] != "--":
        raise SystemExit(__doc__.strip().splitlines()[-1].strip())
    stats: Counter[str] = Counter()
    base.LLM.generate = replaying(ResponseCache(argv[0]), argv[1], stats)  # type: ignore[method-assign]
    sys.path.insert(0, str(BENCH.parent))
    sys.argv = [str(BENCH), *argv[3:]]
    try:
        runpy.run_path(str(BENCH), run_name="__main__")
    finally:
        print(f"replayed {stats['replayed']}, refused {stats['refused']}, absent {stats['absent']}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
