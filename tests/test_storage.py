"""Storage identity (semantic/storage.py): aliases, in-place writes per statement, and hazard paths."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchcopy_lint.imports import ImportMap
from torchcopy_lint.semantic import SemanticModel


def _model(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    model = SemanticModel(module, ImportMap(module))
    return model, model.module_scope()


def _expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


@pytest.mark.parametrize("text,how,source", [
    ("x.detach()", "detach", "x"), ("x.data", "data", "x"), ("t.numpy()", "numpy", "t"),
    ("x[1:, 0]", "subscript", "x"), ("x.view(-1)", "view", "x"), ("x[None, ...]", "subscript", "x"),
])
def test_views_and_aliases_keep_the_storage(text, how, source):
    model, _ = _model("import torch\n")
    found = model.storage.alias_of(_expr(text))
    assert found is not None and found[0] == how and cst.Module([]).code_for_node(found[1]) == source


@pytest.mark.parametrize("text", ["x.clone()", "x + 1", "x[idx]", "x.to('cpu')", "x.reshape(-1)", "x.numpy(force=True)",
                                  "x.cpu()", "copy.deepcopy(x)", "torch.tensor(a)", "np.array(t)"])
def test_copies_and_unknowns_are_not_aliases(text):
    model, _ = _model("import torch\nimport numpy as np\nimport copy\n")
    assert model.storage.alias_of(_expr(text)) is None


def test_bridges_need_the_imported_names():
    model, _ = _model("import torch\nimport numpy as np\n")
    assert model.storage.alias_of(_expr("torch.from_numpy(a)"))[0] == "from_numpy"
    assert model.storage.alias_of(_expr("np.asarray(t)"))[0] == "asarray"
    assert model.storage.alias_of(_expr("torch.as_tensor(a, dtype=torch.float32)")) is None  # may copy
    assert model.storage.root(_expr("torch.from_numpy(a).permute(2, 0, 1)[0]"))[1] == ["subscript", "permute",
                                                                                       "from_numpy"]


def _writes(source: str):
    model, scope = _model(source)
    return [(w.key, w.how, w.items) for i in range(len(scope.cfg_nodes)) for w in model.storage.writes_at(scope, i)]


def test_in_place_writes_of_a_statement():
    source = """\
        import torch
        opt = torch.optim.SGD([], lr=1)
        x.add_(1)
        x[0] = 1
        x += 1
        xs[0].mul_(2)
        xs[1][0] = 7
        y.data.zero_()
        torch.nn.init.zeros_(w)
        torch.add(a, b, out=z)
        opt.step()
        x.requires_grad_()
        x = x + 1
        u = x.sum()
    """
    assert _writes(source) == [("x", "method", 0), ("x", "subscript", 0), ("x", "aug", 0), ("xs", "method", 1),
                               ("xs", "subscript", 1), ("y", "method", 0), ("w", "function", 0), ("z", "out", 0),
                               (None, "step", 0)]


def _hazard(source: str, alias_line: int, written: str, read: str, elements: bool = False):
    """The hazard from the alias made on ``alias_line`` (1-based, after dedent): sides by name."""
    model, scope = _model(source)
    storage = model.storage
    start = next(i for i, node in enumerate(scope.cfg_nodes)
                 if isinstance(node, cst.Assign) and scope.cfg_nodes[i] is _statement(model.module, alias_line))
    assign = scope.cfg_nodes[start]
    target = [b for b in scope.bindings[assign.targets[0].target.value] if b.cfg == start][0]
    source_read = next(r for r in scope.reads if r.cfg == start and r.key in (written, read)
                       and r.key != target.key)
    sides = {target.key: storage.side_of_binding(target), source_read.key: storage.side_of_read(source_read)}
    found = storage.hazard(scope, start, [sides[written]], [sides[read]], elements=elements)
    return None if found is None else (found[0].key, found[1].key)


def _statement(module: cst.Module, line: int):
    return module.body[line - 1].body[0]


def test_hazard_needs_write_then_read_of_the_other_side():
    base = "import torch\nx = torch.ones(3)\ny = x.detach()\n"
    assert _hazard(base + "y.zero_()\nprint(x)\n", 3, "y", "x") == ("y", "x")
    assert _hazard(base + "print(x)\ny.zero_()\n", 3, "y", "x") is None  # read before the write
    assert _hazard(base + "y = y + 1\nprint(x)\n", 3, "y", "x") is None  # rebinding is not a write
    assert _hazard(base + "y += 1\nprint(x)\n", 3, "y", "x") == ("y", "x")  # in place on a tensor
    assert _hazard(base + "x = torch.zeros(3)\ny.zero_()\nprint(x)\n", 3, "y", "x") is None  # x rebound first
    assert _hazard(base + "y.zero_()\nprint(x.shape, len(x))\n", 3, "y", "x") is None  # metadata only
    assert _hazard(base + "y.zero_()\nprint(y)\n", 3, "y", "x") is None  # the written side itself


def test_hazard_sees_the_next_turn_of_a_loop():
    source = "import torch\nx = torch.ones(3)\ny = x.detach()\nfor i in range(3):\n    print(x)\n    y.add_(1)\n"
    assert _hazard(source, 3, "y", "x") == ("y", "x")  # x read at the next turn, after the write
    body = "".join(f"    y{i} = y.sum()\n" for i in range(2000))
    source = "import torch\nx = torch.ones(3)\ny = x.detach()\nfor i in range(3):\n" + body + "    y.add_(1)\n"
    assert _hazard(source, 3, "y", "x") is None  # x never read again


def test_the_writing_statements_own_reads_come_before_its_write():
    base = "import torch\nx = torch.ones(3)\ny = x.detach()\n"
    for line in ("y[0] = x[0] * 2", "y.copy_(x * 2)", "y.add_(x)", "y += x", "torch.add(y, x, out=y)"):
        assert _hazard(base + line + "\n", 3, "y", "x") is None, line
        assert _hazard(base + line + "\nprint(x)\n", 3, "y", "x") == ("y", "x"), line
        assert _hazard(base + "for _ in range(3):\n    " + line + "\n", 3, "y", "x") == ("y", "x"), line


def test_elements_another_passes_element_is_not_counted():
    base = "import torch\nx = torch.ones(3)\ny = x.detach()\n"
    blocks = base + "for k in range(3):\n    y[k] = x[k] * 2\n"
    assert _hazard(blocks, 3, "y", "x") == ("y", "x")  # without elements: the next pass reads x
    assert _hazard(blocks, 3, "y", "x", elements=True) is None  # k rebound first: another element
    split = base + "for k in range(3):\n    v = x[k] * 2\n    y[k] = v\n"
    assert _hazard(split, 3, "y", "x", elements=True) is None
    for body, why in (("y[0] = x[0] * 2", "a constant index: the element written"),
                      ("y[k] = x[k - 1] * 2", "another index"),
                      ("y[k] = x.sum()", "a whole read"),
                      ("y[k] = x[k] * 2\n    y.mul_(2)", "a whole write after it"),
                      ("y[k] = 0\n    print(x[k])", "the element just written, on the same pass"),
                      ("y[k] = x[k] * 2\n    if k:\n        k = 2", "k kept on one way back")):
        source = base + "k = 0\nwhile k < 3:\n    " + body + "\n    k += 1\n" if "if k" not in body \
            else base + "k = 0\nwhile k < 3:\n    " + body + "\n"
        assert _hazard(source, 3, "y", "x", elements=True) == ("y", "x"), why
    assert _hazard(blocks + "print(x)\n", 3, "y", "x", elements=True) == ("y", "x")  # read after the loop


def test_walks_of_a_scope_stay_linear_in_its_size():
    from torchcopy_lint.semantic.storage import BUDGET_BASE, BUDGET_PER_NODE

    # 400 aliases, each written, the original never read: every walk would run to the end of the scope.
    aliases = "".join(f"x{i} = torch.ones(3)\ny{i} = x{i}.detach()\ny{i}.zero_()\n" for i in range(400))
    model, scope = _model("import torch\n" + aliases)
    storage = model.storage
    asked = 0
    for i, node in enumerate(scope.cfg_nodes):
        if isinstance(node, cst.Assign) and node.targets[0].target.value.startswith("y"):
            target = [b for b in scope.bindings[node.targets[0].target.value] if b.cfg == i][0]
            source = next(r for r in scope.reads if r.cfg == i and r.key.startswith("x"))
            assert storage.hazard(scope, i, [storage.side_of_binding(target)], [storage.side_of_read(source)]) is None
            asked += 1
    assert asked == 400
    assert storage.visited[id(scope)] <= BUDGET_PER_NODE * len(scope.cfg_nodes) + BUDGET_BASE


def test_no_walk_when_no_side_is_ever_written():
    aliases = "".join(f"y{i} = x.detach()\nprint(x, y{i})\n" for i in range(50))
    model, scope = _model("import torch\nx = torch.ones(3)\n" + aliases)
    storage = model.storage
    start = next(i for i, node in enumerate(scope.cfg_nodes) if isinstance(node, cst.Assign) and i > 2)
    target = [b for b in scope.bindings["y0"]][0]
    source = next(r for r in scope.reads if r.cfg == start and r.key == "x")
    assert storage.hazard(scope, start, [storage.side_of_binding(target)], [storage.side_of_read(source)]) is None
    assert storage.visited.get(id(scope), 0) == 0


def test_list_of_one_tensor_and_element_writes():
    model, _ = _model("import torch\n")
    assert cst.Module([]).code_for_node(model.storage.repeated(_expr("[torch.zeros(2)] * 3"))) == "torch.zeros(2)"
    assert cst.Module([]).code_for_node(model.storage.repeated(_expr("n * [t]"))) == "t"
    assert model.storage.repeated(_expr("[t, u] * 3")) is None and model.storage.repeated(_expr("[t] + [u]")) is None
    source = "import torch\nxs = [torch.zeros(2)] * 3\n{}\nprint(xs)\n"
    for line, found in (("xs[0].add_(1)", True), ("xs[1][0] = 7", True), ("xs[2] += 1", True),
                        ("xs[0] = xs[0] + 1", False)):
        model, scope = _model(source.format(line))
        side = model.storage.side_of_binding(scope.bindings["xs"][0])
        hazard = model.storage.hazard(scope, scope.bindings["xs"][0].cfg, [side], [side], items=1)
        assert (hazard is not None) == found, line
