"""ULTRAG's logical query language: grammar, parser, validator, printer and the symbolic executor.

>>> from kgrag.methods.ultrag.dsl import parse, format_query
>>> format_query(parse('AND(Heat -> starred_actors, [The Insider] -> starred_actors) -> starred_actors_inv'))
'AND("Heat" -> starred_actors, "The Insider" -> starred_actors) -> starred_actors_inv'
"""

from kgrag.methods.ultrag.dsl.executor import (
    Execution,
    ExecutionError,
    FuzzyExecutor,
    SymbolicExecutor,
    executors,
    supporting_triples,
)
from kgrag.methods.ultrag.dsl.gbnf import query_grammar
from kgrag.methods.ultrag.dsl.nodes import Entity, Intersection, Projection, Query, depth, leaves, relations, shape
from kgrag.methods.ultrag.dsl.parser import DSLSyntaxError, extract_query, parse
from kgrag.methods.ultrag.dsl.printer import format_query
from kgrag.methods.ultrag.dsl.validator import Validation, feedback, parse_and_validate, validate

__all__ = [
    "DSLSyntaxError",
    "Entity",
    "Execution",
    "ExecutionError",
    "FuzzyExecutor",
    "Intersection",
    "Projection",
    "Query",
    "SymbolicExecutor",
    "Validation",
    "depth",
    "executors",
    "extract_query",
    "feedback",
    "format_query",
    "leaves",
    "parse",
    "parse_and_validate",
    "query_grammar",
    "relations",
    "shape",
    "supporting_triples",
    "validate",
]
