"""TCL109's fix: where `import copy` goes, and when the existing import is reused (or no fix is offered)."""

from __future__ import annotations

import pytest

from torchcopy_lint.engine import lint_source
from torchcopy_lint.fixing.fixer import fix_source
from torchcopy_lint.rules import RULES_BY_CODE

RULE = [RULES_BY_CODE["TCL109"]]
BODY = "best = model.state_dict()\nloss.backward()\nmodel.load_state_dict(best)\n"
FIXED_BODY = BODY.replace("model.state_dict()", "copy.deepcopy(model.state_dict())", 1)


@pytest.mark.parametrize(("header", "fixed_header"), [
    ("", "import copy\n"),
    ('"""Doc."""\n', '"""Doc."""\nimport copy\n'),
    ('"""Doc."""\nfrom __future__ import annotations\n\n# ours\nimport torch\n',
     '"""Doc."""\nfrom __future__ import annotations\n\nimport copy\n# ours\nimport torch\n'),
    ("import copy\n", "import copy\n"),
])
def test_import_copy_is_added_once_in_the_right_place(header, fixed_header):
    fixed = fix_source((header + BODY).encode(), RULE, unsafe=True).source.decode()
    assert fixed == fixed_header + FIXED_BODY
    compile(fixed, "x.py", "exec")


def test_deepcopy_imported_by_name_is_reused():
    source = "from copy import deepcopy\n" + BODY
    fixed = fix_source(source.encode(), RULE, unsafe=True).source.decode()
    assert fixed == "from copy import deepcopy\n" + BODY.replace("model.state_dict()", "deepcopy(model.state_dict())", 1)


def test_no_fix_where_copy_means_something_else():
    source = "copy = 3\n" + BODY
    [diagnostic] = lint_source(source, "x.py", RULE)
    assert diagnostic.fix is None
    assert fix_source(source.encode(), RULE, unsafe=True).source.decode() == source


def test_not_applied_without_unsafe_fixes():
    assert fix_source(BODY.encode(), RULE).source.decode() == BODY
