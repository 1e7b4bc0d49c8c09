"""Writing a KG's triples back to a file in any readable format (export, and round-trip tests)."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kgrag.graph.io.formats import detect_format_from_name
from kgrag.graph.kg import KnowledgeGraph

_NT_BASE = "urn:kgrag:"


def write_file(kg: KnowledgeGraph, path: str | Path, format: str | None = None) -> Path:
    """Write ``kg``'s triples to ``path`` in ``format`` (default: from the extension); ``.gz`` compresses.

    Used for export and for round-trip tests: loading the written file gives back the same KG.
    """
    path = Path(path)
    fmt = format or detect_format_from_name(path)
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        _write_triples(kg, tmp, fmt, opener)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(path)
    return path


def _write_triples(kg: KnowledgeGraph, tmp: Path, fmt: str, opener: Any) -> None:
    with opener(tmp, "wt", encoding="utf-8", newline="") as fh:
        triples = kg.iter_triples()
        if fmt == "spo":
            for h, r, t in triples:
                if "|" in h + r + t:
                    raise ValueError(f"cannot write {h!r} {r!r} {t!r} as spo: a name contains '|'")
                fh.write(f"{h}|{r}|{t}\n")
        elif fmt == "tsv":
            fh.write("head\trelation\ttail\n")
            for h, r, t in triples:
                if "\t" in h + r + t:
                    raise ValueError(f"cannot write {h!r} {r!r} {t!r} as tsv: a name contains a tab")
                fh.write(f"{h}\t{r}\t{t}\n")
        elif fmt == "csv":
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(["head", "relation", "tail"])
            writer.writerows(triples)
        elif fmt == "jsonl":
            for h, r, t in triples:
                fh.write(json.dumps({"head": h, "relation": r, "tail": t}, ensure_ascii=False) + "\n")
        elif fmt == "nt":
            for h, r, t in triples:
                fh.write(
                    f"<{_NT_BASE}e/{quote(h, safe='')}> <{_NT_BASE}r/{quote(r, safe='')}> "
                    f"<{_NT_BASE}e/{quote(t, safe='')}> .\n"
                )
        else:
            raise ValueError(f"unknown format {fmt!r}")
