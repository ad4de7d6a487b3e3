"""The rule codes, importable without LibCST.

A warm run (every file answered by the cache) needs the codes for the cache keys
but never parses: keeping them here spares it the LibCST import (~0.12 s).
tests/test_registry.py checks this list against the rule registry.
"""

RULE_CODES = ("TCL101", "TCL102", "TCL103", "TCL104", "TCL105")
