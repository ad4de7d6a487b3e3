"""Calling a module instance across the project: what the class's forward returns (through the project
index), and a class that overrides state_dict() (TCL109 stays silent)."""

from __future__ import annotations

from pathlib import Path

from torchcopy_lint.engine import lint_source
from torchcopy_lint.rules import ALL_RULES
from torchcopy_lint.semantic.project import ProjectIndex

MODELS = (
    "import copy\n"
    "import torch.nn as nn\n\n\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(3, 3)\n\n"
    "    def forward(self, x):\n"
    "        return self.fc(x)\n\n"
    "    def state_dict(self, *args, **kwargs):\n"
    "        return copy.deepcopy(super().state_dict(*args, **kwargs))\n\n\n"
    "class Child(Net):\n"
    "    pass\n\n\n"
    "class Wide(nn.Linear):\n"
    "    pass\n\n\n"
    "class Called(nn.Module):\n"
    "    def __call__(self, x):\n"
    "        return [x]\n\n"
    "    def forward(self, x):\n"
    "        return self.fc(x)\n\n\n"
    "class Unknown(nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x.relu()\n"
)
TRAIN = (
    "import copy\n"
    "import torch\n"
    "import torch.nn as nn\n"
    "from pkg.models import Called, Child, Net, Unknown, Wide\n\n"
    "x = torch.zeros(3)\n"
    "net = Net()\n"
    "a = copy.copy(net(x))\n"  # 8: Net.forward returns self.fc(x), a Linear's output
    "b = copy.copy(Child()(x))\n"  # 9: inherited forward
    "c = copy.copy(Wide(3, 3)(x))\n"  # 10: nn.Linear's forward, through a project subclass
    "d = copy.copy(Called()(x))\n"  # __call__ decides
    "e = copy.copy(Unknown()(x))\n"  # x is not known inside forward
    "best = net.state_dict()\n"  # Net's own state_dict(): a deep copy
    "plain = nn.Linear(3, 3)\n"
    "kept = plain.state_dict()\n"  # 15: nn.Module.state_dict: live
    "for _ in range(3):\n"
    "    net(x).sum().backward()\n"
    "    plain(x).sum().backward()\n"
    "net.load_state_dict(best)\n"
    "plain.load_state_dict(kept)\n"
)


def test_module_calls_and_own_state_dict_across_modules(tmp_path: Path):
    root = tmp_path / "proj"
    for name, text in {"pyproject.toml": "[project]\nname = 'pkg'\n", "pkg/__init__.py": "",
                       "pkg/models.py": MODELS, "pkg/train.py": TRAIN}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    ProjectIndex.clear()
    index = ProjectIndex.for_path(str(root / "pkg/train.py"))
    assert index.function_return("pkg.models.Net.forward") == "tensor"
    assert index.method_of("pkg.models.Child", "state_dict") == "pkg.models.Net.state_dict"
    assert index.method_of("pkg.models.Wide", "state_dict") is None
    path = root / "pkg/train.py"
    found = [(d.line, d.code) for d in lint_source(path.read_bytes(), str(path), ALL_RULES)]
    assert found == [(8, "TCL108"), (9, "TCL108"), (10, "TCL108"), (15, "TCL109")]


def _value(source: str, name: str):
    """The value of the last read of ``name`` in ``source``, by a model without a project index."""
    import textwrap

    import libcst as cst

    from torchcopy_lint.imports import ImportMap
    from torchcopy_lint.semantic import SemanticModel
    from torchcopy_lint.walk import children

    module = cst.parse_module(textwrap.dedent(source))
    model = SemanticModel(module, ImportMap(module))
    found = []

    def walk(node, stack):
        stack = stack + [node]
        if isinstance(node, cst.Name) and node.value == name and isinstance(stack[-2], cst.Arg):
            found.append((node, stack))
        for child in children(node):
            walk(child, stack)

    walk(module, [])
    node, stack = found[-1]
    return model.value_of(node, stack)


HEADER = "import torch\nimport torch.nn as nn\nx = torch.zeros(2, 3)\n"


def test_values_from_torch_annotations_without_an_index():
    from torchcopy_lint.semantic import Kind

    cases = {
        "values, idx = torch.topk(x, 2)\nprint(idx)": "idx",
        "m = x.max(1)[0]\nprint(m)": "m",
        "s = x.sort(dim=0).values\nprint(s)": "s",
        "out, (h, c) = nn.LSTM(3, 4)(x)\nprint(c)": "c",
        "y = nn.Linear(3, 3)(x)\nprint(y)": "y",
        "class Net(nn.Module):\n    def forward(self, t):\n        return torch.relu(t)\nout = Net()(x)\nprint(out)": "out",
        "class Deep(nn.Conv2d):\n    pass\nout = Deep(1, 1, 1)(x)\nprint(out)": "out",
    }
    for source, name in cases.items():
        assert _value(HEADER + source, name).kind is Kind.TENSOR, source
    others = {
        "pair = x.max(1)\nprint(pair)": Kind.TENSOR_LIST,  # the named tuple (values, indices)
        "r = nn.LSTM(3, 4)(x)\nprint(r)": Kind.NOT_TENSOR,  # (Tensor, (Tensor, Tensor)): a tuple
        "w = torch.where(x > 0)\nprint(w)": Kind.TENSOR_LIST,  # where(condition): a tuple of index tensors
        "e = x.max(y)\nprint(e)": Kind.UNKNOWN,  # y unknown: max(other) or max(dim)
        "class H(nn.Module):\n    def __call__(self, t):\n        return [t]\n    def forward(self, t):\n"
        "        return t * 2\nh = H()(x)\nprint(h)": Kind.UNKNOWN,
        "s = nn.Sequential()(x)\nprint(s)": Kind.UNKNOWN,
    }
    for source, kind in others.items():
        assert _value(HEADER + source, name := source.split("(")[-1].rstrip(")")).kind is kind, source
