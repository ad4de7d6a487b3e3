"""The structural plan: which rules can fire in a file, and which of its statements LibCST must see.

In: the file's bytes, CPython's ``ast`` of them (source/precheck.py) and the rules the text prefilter
passed (``codes.TRIGGERS``: a rule's trigger words occur somewhere in the text). Out: a ``Plan``
(``structure.py``): the rules that can still fire, and the top-level statements no rule needs, which
pruning (parse/) cuts out before LibCST parses. A file no rule can fire in is answered here, without
importing LibCST.

``structure.py`` decides from shape tokens: ``shapes.py`` reads one statement's tokens (TCL120's:
``index_shapes.py``; TCL105's: ``training.py``; the aliases' and writes': ``alias_shapes.py``), ``arguments.py``
whether a call's argument may be what TCL101/107/108 need (from ``function_values.py``: what a function binds its
names to, ``annotations.py``: which parameter annotations are never a tensor class's, ``tensor_guards.py``: which
guards may narrow a name to a tensor, and ``binding_names.py``: the names a node binds), ``scope_groups.py`` the tokens by flow scope. Imports only ``codes``, ``knowledge`` (torch's
table of tensor attributes, read when a loop variable's attribute needs it) and source/ below it: nothing of LibCST,
the semantic model or the parser.
"""
