"""Evaluation: datasets, metrics, the runner behind ``kgrag eval`` and its report."""

from kgrag.eval.datasets import Example, load_dataset, load_datasets, select
from kgrag.eval.metrics import metrics, normalize_answer

__all__ = ["Example", "load_dataset", "load_datasets", "metrics", "normalize_answer", "select"]
