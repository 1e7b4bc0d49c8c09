"""Contract suites, one module per pluggable kind: methods, graph backends, LLM backends, embedders, metrics.

Each suite is parametrised over its kind's registry, so a newly registered implementation runs every test of
its kind without a line of test code. Where an implementation needs a setup (a server, a model, a script file),
the suite's ``SETUPS`` table names it, and a registered name missing from that table fails the suite until one
is added (PyKEEN's generic test cases, as a table instead of a subclass per implementation).
"""
