"""The rule pass: one walk of the parsed file with every active rule, its violations made diagnostics.

In: the file's source, the rules that passed the text prefilter and the ``Plan`` (plan/), and the
project index. Out: a ``ParsedFile`` (the LibCST module and the rules' violations) and, from it, the
file's sorted diagnostics with positions and fixes.

``parsing.py`` drives it: pruning and LibCST's parse (parse/), then ``rule.py``'s walk (the rule base
that rules/ subclass, ``FileContext`` with the semantic model, ``run_rules``: one traversal for all
rules), suppressions (``noqa.py``); ``fix_text.py`` prints a fix as a text edit (exactly what replacing
its target prints) and ``fix_safety.py`` judges a fix's applicability and turns violations into
diagnostics. The engine (engine.py) calls it; it imports parse/, plan/, source/, semantic/ and the
shared modules below it, never the engine or rules/.
"""
