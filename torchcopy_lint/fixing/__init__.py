"""Fixing: diagnostics' fixes applied to the file, to a fixed point.

In: a file's source, a lint function (the engine's ``lint_source`` with the file's project index,
environment and settings) and the applicability allowed (safe, or with ``--unsafe-fixes``). Out: the
fixed source (written atomically, or shown as a diff) and what was fixed.

``fixer.py`` lints, applies the fixes of those very diagnostics as text edits, re-parses and lints again
until nothing changes; ``edits.py`` holds a fix as a text edit (which edits apply together, applying
them: the editor's quick fixes use it too); ``add_noqa.py`` (``--add-noqa``) writes a ``# noqa: CODE``
on each remaining finding's line. It sits above the engine (engine.py) and imports it; notebooks, the
runner, the CLI and the language server call it.
"""
