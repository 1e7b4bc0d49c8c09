"""Property reads the schema does not allow, moved to where the property is.

A small model reads a property from the wrong variable of a pattern: ``-[r:ORDERS]->`` then ``r.freight``
(only the Order ``o`` has it), or ``o.quantity`` (only the ORDERS relationship beside ``o`` has it). When
exactly one place in the query holds the property, the read moves there; otherwise it stays a problem, named
for the repair call ("Supplier has no property 'name'; it has companyName, ...").
"""

from __future__ import annotations

from kgrag.graph.backends.guard import Token
from kgrag.methods.text2cypher.joins import binding_match, route_clause
from kgrag.methods.text2cypher.patterns import Node, Rel, fresh_name, patterns, property_read, variables
from kgrag.methods.text2cypher.schema import GraphSchema, RelationshipType


def listing(names: object, limit: int = 12) -> str:
    names = sorted(names)  # type: ignore[call-overload]
    more = f", ... ({len(names)} in all)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def wrong_variable_reads(
    schema: GraphSchema, tokens: list[Token], nodes: dict[str, str], rels: dict[str, str], fixed: list[str]
) -> list[str]:
    """``var.prop`` reads of properties the variable's label (or relationship type) does not have. When exactly
    one other variable of the query has the property, the read moves to it (``-[r:ORDERS]->`` then
    ``r.freight``, where only the ``Order`` node ``o`` has ``freight``: ``o.freight``) and ``fixed`` says so;
    otherwise it is a problem for the repair call."""

    def has(name: str) -> dict[str, str] | None:
        if name in nodes and nodes[name] in schema.labels:
            return schema.labels[nodes[name]]
        if name in rels and rels[name] in schema.types():
            return schema.relationship_properties(rels[name])
        return None

    problems = []
    for i in range(len(tokens) - 2):
        read = property_read(tokens, i)
        if read is None:
            continue
        var, prop = read
        have = has(var)
        if have is None or prop in have:
            continue
        owners = [v for v in [*nodes, *rels] if v != var and prop in (has(v) or {})]
        label = nodes.get(var) or rels[var]
        if len(owners) == 1:
            tokens[i] = tokens[i]._replace(value=owners[0])
            fixed.append(f"{label} has no property {prop!r}: read from {owners[0]}.{prop}")
        else:
            problems.append(f"{label} has no property {prop!r}; it has {listing(have)}{_held_by(schema, prop)}")
    return list(dict.fromkeys(problems))


def _held_by(schema: GraphSchema, prop: str) -> str:
    """Where the schema does have ``prop``, for a repair prompt: "; discount is on (:Order)-[:ORDERS]->(:Product)"."""
    places = [f"(:{label})" for label, props in schema.labels.items() if prop in props]
    places += [f"(:{r.source})-[:{r.name}]->(:{r.target})" for r in schema.relationships if prop in r.properties]
    return f"; {prop} is on {', '.join(places[:4])}" if places else ""


def name_relationship_read(tokens: list[Token], schema: GraphSchema) -> tuple[list[Token], list[str]]:
    """``o.quantity`` where ``o`` is an Order, which has no quantity, but the one unnamed relationship beside
    it (``<-[:ORDERS]-(o:Order)``) does: the relationship is named and read (``-[r1:ORDERS]-`` … ``r1.quantity``),
    the only reading in which the property exists."""
    chains = patterns(tokens)
    nodes, _ = variables(chains)
    for i in range(len(tokens) - 2):
        read = property_read(tokens, i)
        if read is None or read[0] not in nodes:
            continue
        var, prop = read
        if nodes[var] not in schema.labels or prop in schema.labels[nodes[var]]:
            continue
        beside = [
            chain[j]
            for chain in chains
            for k, part in enumerate(chain)
            if isinstance(part, Node) and part.var == var
            for j in (k - 1, k + 1)
            if 0 <= j < len(chain)
        ]
        rels = [
            r
            for r in beside
            if isinstance(r, Rel) and r.var is None and r.bracket and len(r.types) == 1
            if prop in schema.relationship_properties(r.types[0])
        ]
        if len({id(r) for r in rels}) != 1:
            continue
        rel, name = rels[0], fresh_name("r", tokens)
        assert rel.bracket is not None
        out = [*tokens[: rel.bracket[0] + 1], Token("word", name), *tokens[rel.bracket[0] + 1 :]]
        at = i + 1 if i > rel.bracket[0] else i
        out[at] = out[at]._replace(value=name)
        done = f"{nodes[var]} has no property {prop!r}, {rel.types[0]} has: read from {name}.{prop}"
        rest, more = name_relationship_read(out, schema)
        return rest, [done, *more]
    return tokens, []


def join_read_owner(tokens: list[Token], schema: GraphSchema) -> tuple[list[Token], list[str]]:
    """``x.prop`` where ``x``'s label lacks ``prop``, no other variable of the query has it, and exactly one
    thing one relationship away from that label does — the relationship itself or the node at its other end:
    it is matched from ``x`` after the clause that binds ``x``, named, and read.

    "What is the average discount given on orders during …" came out as ``avg(o.discount)`` on an Order, and
    only ``(:Order)-[:ORDERS {discount}]->(:Product)`` has a discount: ``MATCH (o)-[r1:ORDERS]->(:Product)`` …
    ``avg(r1.discount)``. "List the first 3 products from suppliers located in 'USA'" came out as ``RETURN
    s.productName`` on a Supplier: ``MATCH (s)-[:SUPPLIES]->(p1:Product)`` … ``p1.productName``. The engine
    refuses both as written ("Cannot find property discount for o")."""
    nodes, rels = variables(patterns(tokens))
    held = {p for t in rels.values() for p in schema.relationship_properties(t)}
    held |= {p for label in nodes.values() for p in schema.labels.get(label, {})}
    for i in range(len(tokens) - 2):
        read = property_read(tokens, i)
        if read is None or read[0] not in nodes or read[1] in held:
            continue
        var, prop = read
        label = nodes[var]
        owners = _owners(schema, label, prop) if label in schema.labels else []
        binding = binding_match(tokens, var)
        if len(owners) != 1 or binding is None or binding.end > i:
            continue
        (rel, on_rel), out_way = owners[0], owners[0][0].source == label
        other = rel.target if out_way else rel.source
        name = fresh_name("r" if on_rel else other[0].lower(), tokens)
        step = (rel.name, "out" if out_way else "in", other)
        join = route_clause(var, [step], name, name_relationship=on_rel)
        out = [*tokens[: binding.end], *join, *tokens[binding.end :]]
        out[i + len(join)] = out[i + len(join)]._replace(value=name)
        where = (
            f"its {rel.name} relationship"
            if on_rel
            else f"the {other} it {rel.name}"
            if out_way
            else f"the {other} {rel.name} it"
        )
        rest, more = join_read_owner(out, schema)
        return rest, [f"{label} has no property {prop!r}, {where} has: matched it as {name}", *more]
    return tokens, []


def _owners(schema: GraphSchema, label: str, prop: str) -> list[tuple[RelationshipType, bool]]:
    """What one relationship from ``label`` has ``prop``: the relationship types that do, as (type, True); if
    none does, the types whose node at the other end does, as (type, False). The relationship comes first: an
    Order's ``productID`` is on its ORDERS relationship and on the Product beyond it, the same value."""
    at = [rel for rel in schema.relationships if label in (rel.source, rel.target)]
    on_rel = [(rel, True) for rel in at if prop in rel.properties]
    if on_rel:
        return on_rel
    ends = [(rel, rel.target if rel.source == label else rel.source) for rel in at]
    return [(rel, False) for rel, other in ends if other != label and prop in schema.labels.get(other, {})]


def separate_shared_names(tokens: list[Token], schema: GraphSchema) -> tuple[list[Token], list[str]]:
    """``-[p:ORDERS]->(p:Product)``: one name for a relationship and a node, which the engine refuses ("p has
    data type NODE but REL was expected"). The relationship gets a name of its own, and reads of properties only
    its type has (not the node's label) follow it; everything else the name stood for is the node."""
    chains = patterns(tokens)
    nodes, rels = variables(chains)
    out, done = list(tokens), []
    for name in sorted(set(nodes) & set(rels)):
        fresh = fresh_name("r", out)
        for part in (p for chain in chains for p in chain):
            if isinstance(part, Rel) and part.var == name and part.bracket:
                out[part.bracket[0] + 1] = out[part.bracket[0] + 1]._replace(value=fresh)
        own = set(schema.relationship_properties(rels[name])) - set(schema.labels.get(nodes[name], {}))
        for i in range(len(out) - 2):
            if out[i].value == name and out[i + 1].value == "." and out[i + 2].value in own:
                out[i] = out[i]._replace(value=fresh)
        done.append(f"{name} named both a {nodes[name]} and a {rels[name]} relationship: the relationship is {fresh}")
    return out, done


__all__ = ["listing", "name_relationship_read", "separate_shared_names", "wrong_variable_reads"]
