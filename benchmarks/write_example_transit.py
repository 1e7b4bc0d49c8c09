"""Write examples/transit: a fourth user-style KG, in a layout none of the others has (#24).

Written on 2026-12-07 as a KG no method setting had been tuned on: a fictional city's transit network as a
user might export it from a spreadsheet, with a ``subject,predicate,object`` header and Title Case relation
names with spaces (``Stops At``, ``Operated By``, ``Designed By``), relations that point from the line to the
station rather than the way most questions ask (``Stops At``), a year as a literal, and one city every district
belongs to (a small hub). Gold answers come from :func:`write_example_kgs.follow`, as for the other examples.

    python benchmarks/write_example_transit.py [OUT_DIR]   # default: examples/
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import write_example_kgs as examples

lines = {  # line: (operator, colour, stations in order)
    "Amber Line": ("Varn Metro", "amber", ["Kelder Quay", "Tannery Gate", "Ashgrove Market", "Sorrel Park"]),
    "Teal Line": ("Varn Metro", "teal", ["Kelder Quay", "Brightwater", "Millbank Rise", "Foundry Square"]),
    "Violet Line": ("Estrade Rail", "violet", ["Tannery Gate", "Brightwater", "Orchard Hill", "Lantern Wharf"]),
    "Copper Line": ("Estrade Rail", "copper", ["Foundry Square", "Orchard Hill", "Sorrel Park", "North Cistern"]),
    "Harbour Shuttle": ("Quayside Transit", "grey", ["Lantern Wharf", "Kelder Quay"]),
}
stations = {  # station: (district, architect, year opened)
    "Kelder Quay": ("Old Harbour", "Mira Castellane", "1931"),
    "Tannery Gate": ("Old Tannery", "Mira Castellane", "1934"),
    "Ashgrove Market": ("Ashgrove", "Tobias Renn", "1958"),
    "Sorrel Park": ("Sorrel Heights", "Tobias Renn", "1962"),
    "Brightwater": ("Brightwater", "Yusra Delacroix", "1979"),
    "Millbank Rise": ("Millbank", "Yusra Delacroix", "1981"),
    "Foundry Square": ("Old Tannery", "Oskar Vint", "1990"),
    "Orchard Hill": ("Sorrel Heights", "Oskar Vint", "1994"),
    "Lantern Wharf": ("Old Harbour", "Helena Mour", "2008"),
    "North Cistern": ("Millbank", "Helena Mour", "2015"),
}
architects = {  # architect: where they studied
    "Mira Castellane": "Varnholm School of Building",
    "Tobias Renn": "Estrade Polytechnic",
    "Yusra Delacroix": "Varnholm School of Building",
    "Oskar Vint": "Estrade Polytechnic",
    "Helena Mour": "Lisle Academy of Design",
}
operators = {  # operator: the district of its head office
    "Varn Metro": "Brightwater",
    "Estrade Rail": "Ashgrove",
    "Quayside Transit": "Old Harbour",
}
districts = ["Old Harbour", "Old Tannery", "Ashgrove", "Sorrel Heights", "Brightwater", "Millbank"]

T: list[tuple[str, str, str]] = []
for line, (operator, colour, stops) in lines.items():
    T += [(line, "Operated By", operator), (line, "Line Colour", colour)] + [(line, "Stops At", s) for s in stops]
for station, (district, architect, year) in stations.items():
    T += [(station, "In District", district), (station, "Designed By", architect), (station, "Opened In", year)]
T += [(a, "Studied At", school) for a, school in architects.items()]
T += [(o, "Head Office In", d) for o, d in operators.items()]
T += [(d, "Part Of", "Varnholm") for d in districts]

Q = [
    ("Which stations does the Violet Line stop at?", "Violet Line", [("Stops At", ">")], "1-hop"),
    ("Who designed Orchard Hill station?", "Orchard Hill", [("Designed By", ">")], "1-hop"),
    ("Which lines stop at Kelder Quay?", "Kelder Quay", [("Stops At", "<")], "1-hop"),
    ("When did Millbank Rise open?", "Millbank Rise", [("Opened In", ">")], "1-hop"),
    ("Who operates the Copper Line?", "Copper Line", [("Operated By", ">")], "1-hop"),
    ("Which stations are in the Old Tannery district?", "Old Tannery", [("In District", "<")], "1-hop"),
    (
        "Which lines does Estrade Rail run?",
        "Estrade Rail",
        [("Operated By", "<")],
        "1-hop",
    ),
    ("Where did Helena Mour study?", "Helena Mour", [("Studied At", ">")], "1-hop"),
    (
        "Who designed the stations on the Amber Line?",
        "Amber Line",
        [("Stops At", ">"), ("Designed By", ">")],
        "2-hop",
    ),
    (
        "Which company operates the lines that stop at Sorrel Park?",
        "Sorrel Park",
        [("Stops At", "<"), ("Operated By", ">")],
        "2-hop",
    ),
    (
        "Which districts does the Teal Line serve?",
        "Teal Line",
        [("Stops At", ">"), ("In District", ">")],
        "2-hop",
    ),
    (
        "In which district is the head office of the operator of the Harbour Shuttle?",
        "Harbour Shuttle",
        [("Operated By", ">"), ("Head Office In", ">")],
        "2-hop",
    ),
    (
        "Which stations did Tobias Renn design?",
        "Tobias Renn",
        [("Designed By", "<")],
        "1-hop",
    ),
    (
        "What colours are the lines that stop at Brightwater?",
        "Brightwater",
        [("Stops At", "<"), ("Line Colour", ">")],
        "2-hop",
    ),
    (
        "Where did the architect of Lantern Wharf study?",
        "Lantern Wharf",
        [("Designed By", ">"), ("Studied At", ">")],
        "2-hop",
    ),
    (
        "Which schools did the architects of the Copper Line's stations attend?",
        "Copper Line",
        [("Stops At", ">"), ("Designed By", ">"), ("Studied At", ">")],
        "3-hop",
    ),
    (
        "Which companies run lines through stations in the Millbank district?",
        "Millbank",
        [("In District", "<"), ("Stops At", "<"), ("Operated By", ">")],
        "3-hop",
    ),
    (
        "In which years did the stations on the lines run by Quayside Transit open?",
        "Quayside Transit",
        [("Operated By", "<"), ("Stops At", ">"), ("Opened In", ">")],
        "3-hop",
    ),
]

if __name__ == "__main__":
    if len(sys.argv) > 1:
        examples.OUT = Path(sys.argv[1])
    examples.write("transit", T, Q, header=("subject", "predicate", "object"))
