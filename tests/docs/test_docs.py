"""The documentation site builds, its settings page is current, and every example on it runs.

Pages are read in the site's order in one working directory (the tutorial's KG is there for the API page).
Fenced ``bash`` blocks are run line by line as a user would type them; ``python`` blocks as scripts. ``sh``
blocks are shown, not run (a server that does not return, an install). The LLM is a scripted one, named by
``$KGRAG_LLM`` exactly as a user would name theirs, so the commands on the page are the ones that run; the
examples are checked for running, not for their answers (the local models' accuracy is measured elsewhere).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def _pages() -> list[Path]:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))["nav"]
    return [ROOT / "docs" / next(iter(item.values())) for item in nav]


def _commands(block: str) -> list[str]:
    """The block's commands: continuation lines joined, comments and blank lines dropped."""
    joined = block.replace("\\\n", " ")
    return [line.split("  #")[0].strip() for line in joined.splitlines() if line.strip() and not line.startswith("#")]


def test_site_builds_strictly(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "site" / "tutorial" / "index.html").exists()


def test_settings_page_is_what_the_code_says():
    from kgrag.methods.settings_doc import settings_markdown

    assert (ROOT / "docs" / "settings.md").read_text("utf-8") == settings_markdown(), (
        "docs/settings.md is stale: python -m kgrag methods --markdown > docs/settings.md"
    )


def test_every_example_runs(tmp_path):
    for shipped in ("examples", "benchmarks"):  # the pages run from the repository's root
        (tmp_path / shipped).symlink_to(ROOT / shipped)
    script = tmp_path / "llm.json"
    script.write_text(json.dumps({"default": "<answers>\nMaria Lopez\n</answers>"}))
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "KGRAG_LLM": f"scripted:{script}", "PATH": bin_dir + os.pathsep + os.environ["PATH"]}
    ran = 0
    for page in _pages():
        for language, block in FENCE.findall(page.read_text("utf-8")):
            if language == "bash":
                scripts = _commands(block)
            elif language == "python":
                scripts = [block]
            else:
                continue
            for script in scripts:
                argv = ["bash", "-c", script] if language == "bash" else [sys.executable, "-c", script]
                proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
                assert proc.returncode == 0, f"{page.name}: {script}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
                ran += 1
    assert ran >= 8
    assert (tmp_path / "runs" / "university" / "report.md").exists()
    assert shutil.which("kgrag", path=env["PATH"])
