"""Output: what the person or the tool at the other end is shown.

In: the run's sorted diagnostics (and, for the summary, what was fixed). Out: text on stdout or in
``--output-file`` (``formats.py``: text, json, github annotations, sarif via ``sarif.py``; statistics),
the summary, ``--show-fixes`` and ``--add-noqa`` reports on stderr (``report.py``), and rule docs pages
(``ruledocs.py``: for ``torchcopy-lint rule CODE``, SARIF's help and the language server's links). It
imports rules/ and fixing/ below it; the CLI and the language server call it.
"""
