"""Loopback load test of `kgrag serve`: concurrent clients sending POST /retrieve to a real uvicorn server.

    .venv/bin/python benchmarks/service_load.py [--clients 20 --requests 50 --questions 60]

Method: the MetaQA demo KG is ingested into a temporary directory and served by `kgrag serve` (a child
process on 127.0.0.1, free port). The questions are real MetaQA 1-hop dev questions with the bracketed topic
removed (so linking is part of every request) when ../shared/data is present, else "who directed X" for
movies of the KG. A warm-up pass sends each distinct question once (kaping embeds its candidate triples on
first touch; that cost is reported separately), then CLIENTS concurrent clients each send REQUESTS
requests over one keep-alive connection, cycling through the questions. The run is bounded by count and by
a per-request timeout, only talks to 127.0.0.1 and stops by itself. Reports errors (non-200 or transport
failures; expected zero), p50/p90/p99/max latency and requests per second to
benchmarks/results/service_load.json. The machine (2 cores) is shared, so numbers vary between runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from bench_common import first_line_value, module_version  # noqa: E402
from kgrag.service.process import running_server  # noqa: E402

SHARED_QA = REPO.parent / "shared" / "data" / "metaqa" / "qa_1hop_dev.txt"
OUT = HERE / "results" / "service_load.json"


def load_questions(n: int, kg_dir: Path, seed: int = 0) -> tuple[list[str], str]:
    rng = random.Random(seed)
    if SHARED_QA.exists():
        lines = SHARED_QA.read_text("utf-8").splitlines()
        picked = rng.sample(lines, n)
        source = "shared/data/metaqa/qa_1hop_dev.txt (topic brackets removed)"
        return [re.sub(r"\[([^\]]+)\]", r"\1", line.split("\t")[0]) for line in picked], source
    from kgrag.graph.store import load_kg

    kg = load_kg(kg_dir)
    rel = kg.relation_id("directed_by")
    films = sorted({kg.entities[h] for h in kg.heads[kg.rels == rel][:5000].tolist()})
    return [f"who directed {name}" for name in rng.sample(films, n)], "generated: who directed <film>"


async def client_loop(
    url: str, questions: list[str], offset: int, count: int, latencies: list[float], errors: list[str]
) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        for i in range(count):
            question = questions[(offset + i) % len(questions)]
            start = time.perf_counter()
            try:
                resp = await client.post("/retrieve", json={"question": question, "method": "kaping"})
                ok = resp.status_code == 200 and bool(resp.json().get("evidence") is not None)
                if not ok:
                    errors.append(f"{resp.status_code}: {resp.text[:200]}")
            except httpx.HTTPError as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
            latencies.append(time.perf_counter() - start)


async def run_load(url: str, questions: list[str], clients: int, requests: int) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    start = time.perf_counter()
    await asyncio.gather(
        *(client_loop(url, questions, c * requests, requests, latencies, errors) for c in range(clients))
    )
    wall = time.perf_counter() - start
    ms = np.asarray(latencies) * 1000
    return {
        "requests": len(latencies),
        "errors": len(errors),
        "error_samples": errors[:5],
        "wall_seconds": round(wall, 3),
        "requests_per_second": round(len(latencies) / wall, 2),
        "latency_ms": {
            "p50": round(float(np.percentile(ms, 50)), 1),
            "p90": round(float(np.percentile(ms, 90)), 1),
            "p99": round(float(np.percentile(ms, 99)), 1),
            "max": round(float(ms.max()), 1),
            "mean": round(float(ms.mean()), 1),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=50, help="requests per client")
    parser.add_argument("--questions", type=int, default=60, help="distinct questions")
    parser.add_argument("--workers", type=int, default=4, help="the server's method threads")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="kgrag-load-") as tmp:
        kg_dir = Path(tmp) / "metaqa"
        subprocess.run(
            [sys.executable, "-m", "kgrag", "ingest", "--demo", "metaqa", "--out", str(kg_dir), "--json"],
            check=True,
            capture_output=True,
        )
        questions, source = load_questions(args.questions, kg_dir)
        # no LLM: /retrieve never loads one (a missing script would fail loudly if it tried)
        with running_server(kg_dir, "--llm", "scripted:/nonexistent.json", "--workers", str(args.workers)) as url:
            start = time.perf_counter()
            warm = asyncio.run(run_load(url, questions, 1, len(questions)))
            warm_seconds = time.perf_counter() - start
            print(f"warm-up: {len(questions)} questions in {warm_seconds:.1f} s ({warm['errors']} errors)")
            result = asyncio.run(run_load(url, questions, args.clients, args.requests))
            health = httpx.get(url + "/health").json()
    mem_kib = first_line_value("/proc/meminfo", "MemTotal")
    report = {
        "benchmark": "service_load",
        "endpoint": "POST /retrieve (kaping, default settings: 2 hops, top 30 of <=2000 candidate triples)",
        "kg": "MetaQA demo (43,234 entities, 133,582 triples)",
        "clients": args.clients,
        "requests_per_client": args.requests,
        "server_workers": args.workers,
        "distinct_questions": len(questions),
        "questions_from": source,
        "warmup": {"requests": warm["requests"], "seconds": round(warm_seconds, 2), "errors": warm["errors"]},
        **result,
        "zero_errors": result["errors"] == 0 and warm["errors"] == 0,
        "llm_loaded_after_run": health["llm"]["loaded"],
        "machine": {
            "python": platform.python_version(),
            "cpu": first_line_value("/proc/cpuinfo", "model name"),
            "mem_gib": round(int(mem_kib.split()[0]) / 2**20, 1) if mem_kib else None,
            "note": "2 shared cores; other jobs were running",
            "versions": {m: module_version(m) for m in ("kgrag", "fastapi", "uvicorn", "httpx", "numpy")},
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    lat = result["latency_ms"]
    print(
        f"{result['requests']} requests, {result['errors']} errors, p50 {lat['p50']} ms, p99 {lat['p99']} ms, "
        f"{result['requests_per_second']} req/s → {args.out}"
    )
    if not report["zero_errors"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
