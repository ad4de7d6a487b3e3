"""The source: a file's bytes, made safe to hand to the parsers.

In: a path (``files.py``: regular files only, never a read that blocks) or bytes. Out: the decoded
text or a TCL001 diagnostic for what Python cannot decode, and CPython's ``ast`` of it
(``precheck.py``: CPython's parser first, because LibCST's would crash on nesting it rejects; a deep
stack for the parse and the rules). Everything above reads files and trees through here: the
structural plan (plan/), pruning (parse/), the project index (semantic/), the engine. Imports only
``diagnostics`` below it.
"""
