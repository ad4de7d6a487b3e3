"""Pruning and parsing: the text the plan kept, made a LibCST module, with positions back to the file.

In: the file's bytes, CPython's ``ast`` and the structural ``Plan`` (plan/). Out: a LibCST module of the
pruned text, and positions of the few nodes a rule reports, in the file's own lines.

``prune.py`` blanks what no rule can look at (functions and classes with no trigger, keeping every
position) and cuts out the top-level statements the plan dropped; ``callers.py`` finds the functions
whose text the autograd context reads for a ``.data`` write, which pruning must keep. ``cst_parse.py``
is LibCST's parse without re-validating what its own parser built; in an editor ``reparse.py``
re-parses only the top-level statements an edit touched (with ``incremental_ast.py``: CPython's tree
compiled again only there). ``positions.py`` computes the positions of chosen nodes by code
generation, mapped back past the statements pruning cut out. Imports plan/, source/ and ``walk``
below it: nothing of the rules or the semantic model.
"""
