"""Speed of the models layer on this machine; writes benchmarks/results/models.json.

Measures
- each ready local GGUF model: load seconds, prompt-processing and generation tokens/s (streamed, so the
  time to the first token separates prompt evaluation from generation);
- the KV-cache prefix reuse speed-up: the same prompt after one sharing a long fixed prefix, vs after a reset;
- the response-cache speed-up: a cached call vs the same call uncached;
- embedders: texts/s on 10,000 verbalised MetaQA triples, and seconds to embed all 43,234 MetaQA entity names.

Usage: python benchmarks/models_bench.py [--models smollm2-135m,qwen2.5-coder-0.5b,...] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from kgrag.graph.io import load_file
from kgrag.graph.verbalize import humanize, verbalize_triples
from kgrag.models import manager
from kgrag.models.embeddings import load_embedder
from kgrag.models.llm import load_llm

ROOT = Path(__file__).resolve().parents[1]
KB = ROOT / "src" / "kgrag" / "data" / "metaqa" / "kb.txt.gz"
OUT = ROOT / "benchmarks" / "results" / "models.json"

FIXED_PREFIX = (
    "You answer questions about movies using facts from a knowledge graph. Each fact is written as "
    "'subject relation object'. Use only the facts; if they do not contain the answer, say so.\n\nFacts:\n"
)


def facts_block(kg, n: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    tids = rng.choice(kg.num_triples, size=n, replace=False)
    return "\n".join(verbalize_triples(kg, tids))


def bench_llm(name: str, kg, gen_tokens: int) -> dict:
    from llama_cpp import Llama

    path = manager.setup(name, install=False)
    start = time.perf_counter()
    llama = Llama(model_path=str(path), n_ctx=4096, n_threads=2, n_threads_batch=2, verbose=False, seed=0)
    load_s = time.perf_counter() - start
    prompt = FIXED_PREFIX + facts_block(kg, 45) + "\n\nQuestion: who directed Kismet?\nAnswer:"
    n_prompt = len(llama.tokenize(prompt.encode()))
    llama.reset()
    t0 = time.perf_counter()
    first = None
    n_gen = 0
    for _chunk in llama.create_completion(prompt, max_tokens=gen_tokens, temperature=0.0, stream=True):
        n_gen += 1
        if first is None:
            first = time.perf_counter()
    end = time.perf_counter()
    assert first is not None
    prompt_tps = n_prompt / (first - t0)
    gen_tps = (n_gen - 1) / (end - first) if n_gen > 1 else float("nan")

    # KV-cache prefix reuse: same long prefix, different question.
    long_prefix = FIXED_PREFIX + facts_block(kg, 45, seed=1) + "\n\nQuestion: "
    q1, q2 = "who wrote Heat?\nAnswer:", "which year was Alien released?\nAnswer:"
    llama.reset()
    t0 = time.perf_counter()
    llama.create_completion(long_prefix + q2, max_tokens=1, temperature=0.0)
    cold = time.perf_counter() - t0
    llama.create_completion(long_prefix + q1, max_tokens=1, temperature=0.0)
    t0 = time.perf_counter()
    llama.create_completion(long_prefix + q2, max_tokens=1, temperature=0.0)
    warm = time.perf_counter() - t0
    prefix_tokens = len(llama.tokenize(long_prefix.encode()))
    del llama
    return {
        "model": name,
        "load_seconds": round(load_s, 2),
        "prompt_tokens": n_prompt,
        "prompt_tokens_per_s": round(prompt_tps, 1),
        "generated_tokens": n_gen,
        "generation_tokens_per_s": round(gen_tps, 1),
        "prefix_reuse": {
            "prefix_tokens": prefix_tokens,
            "cold_seconds": round(cold, 3),
            "warm_seconds": round(warm, 3),
            "speedup": round(cold / warm, 1),
        },
    }


def bench_response_cache(name: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        llm = load_llm(f"llamacpp:{name}", cache=Path(tmp) / "c.sqlite")
        prompt = "List three famous film directors, one per line."
        t0 = time.perf_counter()
        llm.generate(prompt, max_tokens=32)
        uncached = time.perf_counter() - t0
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            gen = llm.generate(prompt, max_tokens=32)
            times.append(time.perf_counter() - t0)
            assert gen.cached
        cached = statistics.median(times)
    return {
        "model": name,
        "uncached_seconds": round(uncached, 3),
        "cached_seconds": round(cached, 6),
        "speedup": round(uncached / cached),
    }


def bench_embedder(spec: str, triples: list[str], names: list[str], full_names: bool) -> dict:
    t0 = time.perf_counter()
    emb = load_embedder(spec)
    load_s = time.perf_counter() - t0
    emb.encode(triples[:64])  # warm-up
    t0 = time.perf_counter()
    emb.encode(triples)
    tri_s = time.perf_counter() - t0
    row = {
        "embedder": spec,
        "id": emb.id,
        "dim": emb.dim,
        "load_seconds": round(load_s, 2),
        "triples": len(triples),
        "triples_per_s": round(len(triples) / tri_s, 1),
    }
    if full_names:
        t0 = time.perf_counter()
        emb.encode(names)
        row["all_entity_names"] = len(names)
        row["all_entity_names_seconds"] = round(time.perf_counter() - t0, 2)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(manager.MODELS), help="comma-separated local model names")
    parser.add_argument("--quick", action="store_true", help="fewer texts, skip full entity-name embedding")
    parser.add_argument("--gen-tokens", type=int, default=64)
    args = parser.parse_args()

    kg = load_file(KB)
    rng = np.random.default_rng(0)
    n_triples = 1000 if args.quick else 10_000
    triples = verbalize_triples(kg, rng.choice(kg.num_triples, size=n_triples, replace=False))
    names = [humanize(n) for n in kg.entities]
    result: dict = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d")},
        "llms": [],
        "embedders": [],
    }
    try:
        import llama_cpp  # noqa: F401

        have_llama = True
    except ImportError:
        have_llama = False
    ready = [m for m in args.models.split(",") if m and manager.get_model(m).installed()]
    for name in ready if have_llama else []:
        print(f"LLM {name} …", flush=True)
        row = bench_llm(name, kg, args.gen_tokens)
        print(f"  {row}", flush=True)
        result["llms"].append(row)
    if have_llama and ready:
        smallest = min(ready, key=lambda m: manager.get_model(m).size)
        result["response_cache"] = bench_response_cache(smallest)
        print(f"response cache: {result['response_cache']}", flush=True)
    for spec in ("static", "minilm"):
        print(f"embedder {spec} …", flush=True)
        row = bench_embedder(spec, triples, names, full_names=not args.quick)
        print(f"  {row}", flush=True)
        result["embedders"].append(row)
    out = OUT.with_name("models-quick.json") if args.quick else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
