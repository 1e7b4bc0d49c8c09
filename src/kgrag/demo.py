"""Demo KGs shipped inside the package, so a user can try kgrag with no download."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from kgrag.errors import KGRagError


@dataclass(frozen=True)
class DemoKG:
    name: str
    resource: str
    format: str
    description: str
    licence: str
    example_questions: tuple[tuple[str, str], ...] = ()
    property_graph: bool = False  # resource is a mapping.json of CSV files (see kgrag.graph.property_graph)


DEMOS: dict[str, DemoKG] = {
    "metaqa": DemoKG(
        name="metaqa",
        resource="data/metaqa/kb.txt.gz",
        format="spo",
        description="MetaQA movie KB: 43,234 entities, 9 relations, 133,582 triples",
        licence="CC BY 3.0 (Zhang et al., AAAI 2018); see kgrag/data/metaqa/ATTRIBUTION.md",
        example_questions=(
            ("who directed Kismet", "Kismet"),
            ("what films did Michael Mann direct", "Michael Mann"),
            ("which genre is The Matrix", "The Matrix"),
        ),
    ),
    "northwind": DemoKG(
        name="northwind",
        resource="data/northwind/mapping.json",
        format="property-graph",
        description="Northwind as a property graph (Product, Category, Supplier, Customer, Order)",
        licence="Microsoft sample database; see kgrag/data/northwind/ATTRIBUTION.md",
        property_graph=True,
    ),
}


def demo_path(name: str) -> Path:
    """Filesystem path of a bundled demo KG file."""
    demo = get_demo(name)
    path = Path(str(resources.files("kgrag").joinpath(demo.resource)))
    if not path.exists():
        raise KGRagError(f"demo KG {name!r} is missing from this installation ({path})")
    return path


def get_demo(name: str) -> DemoKG:
    try:
        return DEMOS[name]
    except KeyError:
        raise KGRagError(f"unknown demo KG {name!r}; available: {', '.join(DEMOS)}") from None
