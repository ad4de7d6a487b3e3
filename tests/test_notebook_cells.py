"""Notebook cells as one program: IPython syntax neutralized in place, positions mapped back to cells."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from _support import FIXTURES, ROOT
from torchcopy_lint.notebook import build_program, fix_cells, lint_cells, neutralize
from torchcopy_lint.notebook.magics import split_lines
from torchcopy_lint.rules import ALL_RULES

IPYTHON = [
    ("%matplotlib inline\n", "pass              \n"),
    ("!pip install torch\n", "pass              \n"),
    ("!!ls\n", "pass\n"),
    ("%ls\n", "...\n"),
    ("!l\n", "0 \n"),
    ("?\n", "0\n"),
    ("x?\n", "0 \n"),
    ("torch.tensor??\n", "pass          \n"),
    ("?torch.tensor\n", "pass         \n"),
    ("x.clone?  # why\n", "pass           \n"),
    ("/print 1\n", "pass    \n"),
    (",f a b\n", "pass  \n"),
    ("files = !ls -la\n", "files = None   \n"),
    ("a, b = %time f()\n", "a, b = None     \n"),
    ("t = !ls\n", "t = ...\n"),
    ("for i in range(3):\n    !echo $i\n", "for i in range(3):\n    pass    \n"),
    ("%time f(1, \\\n  2)\n", "pass        \n# 2)\n"),
    ("%%bash\necho hi\nx = y.clone().detach()\n", "#%bash\n#cho hi\n# = y.clone().detach()\n"),
    ("%%time\nx = 1\n!ls\n", "pass  \nx = 1\n...\n"),
    ("\n%%timeit -n 3\nf()\n", "\npass         \nf()\n"),
]


@pytest.mark.parametrize("cell, expected", IPYTHON)
def test_ipython_syntax_is_neutralized_in_place(cell, expected):
    result = neutralize(cell)
    assert result.code == expected
    assert [len(line) for line in split_lines(result.code)] == [len(line) for line in split_lines(cell)]
    assert result.error is None
    cst.parse_module(result.code)


PLAIN = [
    's = """\n%not a magic\n!nor this\n"""\n',
    "x = ('a',\n     !=\n     'b')\n" .replace("!=\n", "'!'\n"),
    "a %= 3\nb = a != 2\nc = {'k': '%d' % 1}\nprint('?')\nd = 1  # why?\n",
    "e = f'{x!r}'\ng = \"\\\"?\"\n",
    "h = '''it''' ; i = 2\n",
    "j = 'a\\\n%b'\n",
]


@pytest.mark.parametrize("code", PLAIN)
def test_plain_python_is_untouched(code):
    result = neutralize(code)
    assert result.code == code and result.changed_lines == () and result.error is None


def test_real_python_files_are_untouched():
    """The package and the fixtures: no line is mistaken for IPython syntax, no cell for cut off."""
    files = sorted(ROOT.glob("torchcopy_lint/**/*.py")) + sorted(FIXTURES.glob("TCL*/*.py"))
    assert len(files) > 40
    for path in files:
        text = path.read_text(encoding="utf-8")
        result = neutralize(text)
        assert result.error is None, path
        assert result.code == text, path


@pytest.mark.parametrize("cell, where", [
    ("x = f(1,\n", (1, 6)),
    ("s = '''open\n", (1, 5)),
    ("x = 1 + \\\n", (1, 1)),
])
def test_cells_cut_off_are_detected(cell, where):
    error = neutralize(cell).error
    assert error is not None and error[:2] == where


def test_program_maps_positions_back_to_cells():
    program = build_program([(1, "import torch\n"), (3, "x = 1\ny = 2"), (4, ""), (6, "  z = 3\n")])
    lines = split_lines(program.text)
    assert program.to_cell(*program.to_program(3, 2, 1)) == (3, 2, 1)
    assert lines[program.to_program(3, 2, 1)[0] - 1] == "y = 2\n"
    assert lines[program.to_program(6, 1, 3)[0] - 1] == "  z = 3\n"  # indented cell: under an `if True:`
    assert program.to_cell(1, 1) is None  # the preamble
    assert program.split(program.text) == ["import torch\n", "x = 1\ny = 2\n", "", "  z = 3\n"]
    cst.parse_module(program.text)


RULES = list(ALL_RULES)


def lint(*cells):
    return [(d.cell, d.line, d.column, d.code) for d in lint_cells(list(enumerate(cells, 1)), "nb.ipynb", RULES)]


def test_a_tensor_from_an_earlier_cell_is_known():
    assert lint("import torch\nx = torch.randn(3)\n", "# markdown would be here", "%time y = 1\nz = torch.tensor(x)\n") == [
        (3, 2, 5, "TCL101")]
    assert lint("import torch\nx = [1.0, 2.0]\n", "z = torch.tensor(x)\n") == []  # precision: a list


def test_a_broken_cell_is_reported_and_the_others_linted():
    hazard = "y = x.clone().detach()\n"
    assert lint("import torch\nx = torch.randn(3, requires_grad=True)\n", "def f(x) pass\n", hazard) == [
        (2, 1, 10, "TCL001"), (3, 1, 5, "TCL103")]
    # A cell that ends in an open block would swallow the next one.
    assert lint("import torch\nfor i in range(3):\n", hazard) == [(1, 2, 19, "TCL001"), (2, 1, 5, "TCL103")]
    assert lint("x = f(\n", hazard, "s = '''\n", hazard) == [
        (1, 1, 6, "TCL001"), (2, 1, 5, "TCL103"), (3, 1, 5, "TCL001"), (4, 1, 5, "TCL103")]


def test_noqa_and_columns_inside_cells():
    assert lint("import torch\nx = torch.randn(3, requires_grad=True)\n",
                "a = x.clone().detach()  # noqa: TCL103\n    \n!ls\nb = (x.clone().detach())\n") == [(2, 4, 6, "TCL103")]


def test_an_indented_cell_is_linted_with_its_own_columns():
    assert lint("import torch\nx = torch.randn(3, requires_grad=True)\n", "    y = x.clone().detach()\n    z = 1\n") == [(2, 1, 9, "TCL103")]


def test_fix_cells_changes_only_the_fixed_lines():
    cells = [(1, "import torch\nx = torch.randn(3, requires_grad=True)"), (2, "%%time\n!nvidia-smi\ny = (x.clone()\n     .detach())\n!ls"),
             (3, "def f(:\n"), (5, "    z = x.clone().detach()  # indented\n")]
    texts, applied = fix_cells(cells, RULES)
    assert applied == 2
    assert texts == ["import torch\nx = torch.randn(3, requires_grad=True)", "%%time\n!nvidia-smi\ny = (x.detach()\n     .clone())\n!ls",
                     "def f(:\n", "    z = x.detach().clone()  # indented\n"]
    assert fix_cells(list(zip((1, 2, 3, 5), texts)), RULES) == (texts, 0)


def _cut_at_statements(text: str, every: int):
    """The file cut into cells before every ``every``-th top-level statement: (first line, cell text) pairs."""
    import ast

    starts = []
    for node in ast.parse(text).body:
        decorators = getattr(node, "decorator_list", [])
        starts.append(min([node.lineno] + [d.lineno for d in decorators]))
    lines = split_lines(text)
    cuts = [1] + starts[every::every] + [len(lines) + 1]
    return [(a, "".join(lines[a - 1:b - 1])) for a, b in zip(cuts, cuts[1:]) if a < b]


@pytest.mark.parametrize("every", [1, 3])
def test_cells_cut_from_a_file_give_the_files_diagnostics(every):
    """A fixture cut into cells at statement boundaries: the same findings, mapped back to the file's lines."""
    from torchcopy_lint.engine import lint_source

    checked = 0
    for path in sorted(FIXTURES.glob("TCL*/*.py")):
        text = path.read_text(encoding="utf-8")
        pieces = _cut_at_statements(text, every)
        first = {number: start for number, (start, _) in enumerate(pieces, 1)}
        piece_of = lambda line: max(n for n, start in first.items() if start <= line)  # noqa: E731
        # A fix whose range crosses cells (e.g. one that also adds an import) is not offered in a notebook.
        starts = sorted((node.lineno, node.col_offset + 1) for node in ast.parse(text).body)
        # A cell's last expression is displayed, so a conversion there is not discarded (TCL111 stays silent).
        displayed = lambda d: d.code == "TCL111" and (d.line, d.column) in starts and not any(  # noqa: E731
            start > (d.line, d.column) and piece_of(start[0]) == piece_of(d.line) for start in starts)
        expected = [(d.line, d.column, d.end_line, d.end_column, d.code,
                     d.fix and piece_of(d.fix.start_line) == piece_of(d.fix.end_line) == piece_of(d.line)
                     and (d.fix.start_line, d.fix.content) or None)
                    for d in lint_source(text.encode(), "f", RULES) if not displayed(d)]
        found = lint_cells([(n, cell) for n, (_, cell) in enumerate(pieces, 1)], "nb", RULES)
        shift = lambda d, line: first[d.cell] + line - 1  # noqa: E731
        assert [(shift(d, d.line), d.column, shift(d, d.end_line), d.end_column, d.code,
                 d.fix and (shift(d, d.fix.start_line), d.fix.content)) for d in found] == expected, path
        checked += bool(expected)
    assert checked > 10


VALID_LINES = [
    "import torch", "x = torch.randn(3)", "y = x.clone().detach()", "z = torch.tensor(x)", "%time f()", "!ls",
    "files = !ls", "x?", "for i in range(2):\n    w = x.clone().detach()\n    !echo hi", "# comment ?",
    "v = {'k': '%d' % 1}", "é = 'ü'  # noqa", "    q = x.clone().detach()", "t = (1,\n2)", "s = \'\'\'\n!x\n\'\'\'",
]
TRICKY_LINES = ["%%time", "%%bash", "def f(:", "    ", "", "\tq = 1", "if x:", "a = b \\", "\\", "?", "%", "(", ")",
                "s = \'\'\'", "u = 'a\\"]


def test_random_cells_never_crash_and_keep_shapes():
    """Derandomized: cells drawn from a pool of tricky lines; lint and fix never raise, shapes are kept."""
    import random

    from torchcopy_lint.fixing.fixer import FixError

    rng = random.Random(12)
    fixed = 0
    for _ in range(150):
        pick = lambda: rng.choice(TRICKY_LINES if rng.random() < 0.1 else VALID_LINES)  # noqa: E731
        cells = [(n, "\n".join(pick() for _ in range(rng.randint(0, 6))) + rng.choice(["", "\n"]))
                 for n in range(1, rng.randint(2, 5))]
        for _, text in cells:
            code = neutralize(text).code
            assert [len(line) for line in split_lines(code)] == [len(line) for line in split_lines(text)]
        numbers = [n for n, _ in cells]
        found = lint_cells(cells, "nb", RULES)
        for d in found:
            assert d.cell in numbers or (d.cell is None and d.code == "TCL001")
        try:
            texts, applied = fix_cells(cells, RULES)
        except FixError:
            continue
        if not applied:
            assert texts == [text for _, text in cells]
            continue
        fixed += applied
        left = lint_cells(list(zip(numbers, texts)), "nb", RULES)
        assert not [d for d in left if d.fix is not None and d.fix.applicability.value == "safe"]
        errors = lambda ds: [(d.cell, d.line, d.column) for d in ds if d.code == "TCL001"]  # noqa: E731
        # a fix never adds a syntax error; one may go unreported after the fix when no rule's trigger text is left
        # (a file no rule can match is not parsed: `).detach(` fixed into `.detach().clone()`)
        assert set(errors(left)) <= set(errors(found))
    assert fixed > 50


def test_program_diagnostics_outside_a_cell():
    from torchcopy_lint.diagnostics import Applicability, Diagnostic, Fix

    program = build_program([(2, "a = 1\nbb = 2\n"), (4, "c = 3\n")])
    start = program.to_program(2, 2, 1)[0]
    spill = Diagnostic("nb", start, 1, start + 2, 3, "TCL101", "m",
                       Fix(Applicability.SAFE, "x", start, 1, start + 2, 3))
    mapped = program.cell_diagnostic(spill)
    assert (mapped.cell, mapped.line, mapped.end_line, mapped.end_column, mapped.fix) == (2, 2, 2, 7, None)
    preamble = program.cell_diagnostic(Diagnostic("nb", 1, 3, 1, 5, "TCL003", "m"))
    assert (preamble.cell, preamble.line, preamble.column) == (None, 1, 1)
    with pytest.raises(ValueError):
        program.split(program.text.replace(program.marker, "# gone", 1))
