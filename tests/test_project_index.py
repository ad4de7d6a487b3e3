"""The project index answers cross-module questions from a temporary project tree."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from torchcopy_lint.cache import content_digest
from torchcopy_lint.semantic import project as project_module
from torchcopy_lint.semantic import project_files, summaries
from torchcopy_lint.semantic.lazy import LazyEntries
from torchcopy_lint.semantic.project import ProjectIndex, configure_summary_cache, find_root
from torchcopy_lint.semantic.summaries import SUMMARY_FORMAT

PROJECT: Dict[str, str] = {
    "pyproject.toml": "[project]\nname = 'det'\n",
    "models/__init__.py": "from .yolo import Model\nfrom . import common\n",
    "models/common.py": (
        "import torch.nn as nn\n"
        "from collections import namedtuple\n\n"
        "Binding = namedtuple('Binding', ('name', 'dtype', 'shape', 'data', 'ptr'))\n\n\n"
        "class BaseModel(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x\n"
    ),
    "models/yolo.py": (
        "import torch\n"
        "from models.common import BaseModel\n\n\n"
        "class DetectionModel(BaseModel):\n"
        "    def __init__(self, cfg):\n"
        "        super().__init__()\n"
        "        self.cfg = cfg\n"
        "        self.stride = torch.zeros(3)\n\n"
        "    def fuse(self):\n"
        "        return self\n\n\n"
        "Model = DetectionModel  # an alias, as in YOLOv5\n"
    ),
    "utils/__init__.py": "",
    "utils/torch_utils.py": (
        "import math\n"
        "from copy import deepcopy\n"
        "import torch.nn as nn\n\n\n"
        "def is_parallel(model):\n"
        "    return type(model) in (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel)\n\n\n"
        "def de_parallel(model):\n"
        "    return model.module if is_parallel(model) else model\n\n\n"
        "class ModelEMA:\n"
        "    def __init__(self, model, decay=0.9999, tau=2000, updates=0):\n"
        "        self.ema = deepcopy(de_parallel(model)).eval()\n"
        "        self.updates = updates\n"
        "        self.decay = lambda x: decay * (1 - math.exp(-x / tau))\n"
        "        for p in self.ema.parameters():\n"
        "            p.requires_grad_(False)\n"
    ),
    "utils/build.py": (
        "import utils.torch_utils as tu\n"
        "from models import Model\n"
        "from .torch_utils import de_parallel\n"
        "from models.common import Binding\n\n\n"
        "def build(cfg):\n"
        "    model = Model(cfg)\n"
        "    return model\n\n\n"
        "def bindings(names):\n"
        "    return {n: Binding(n, None, None, None, 0) for n in names}\n\n\n"
        "def ema_of(model):\n"
        "    return tu.ModelEMA(model)\n\n\n"
        "def unwrap(model):\n"
        "    return de_parallel(model)\n"
    ),
    "models/heads/__init__.py": "",
    "models/heads/trainer.py": (
        "import copy\n"
        "from ..yolo import Model\n"
        "from ...outside import Nothing\n\n\n"
        "class Trainer:\n"
        "    def __init__(self, cfg):\n"
        "        self.model = Model(cfg)\n\n"
        "    def fit(self, loader, opt):\n"
        "        for x in loader:\n"
        "            self.model(x).sum().backward()\n"
        "            opt.step()\n"
        "            best = copy.deepcopy(self.model)\n"
    ),
    "train.py": (
        "import copy\n"
        "from models import Model\n\n\n"
        "class Trainer:\n"
        "    def __init__(self, cfg):\n"
        "        self.model = Model(cfg)\n\n"
        "    def fit(self, loader, opt):\n"
        "        for x in loader:\n"
        "            loss = self.model(x).sum()\n"
        "            loss.backward()\n"
        "            opt.step()\n"
        "            best = copy.deepcopy(self.model)\n"
    ),
}


def write_tree(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture(autouse=True)
def fresh_index():
    ProjectIndex.clear()
    configure_summary_cache(None)
    yield
    ProjectIndex.clear()
    configure_summary_cache(None)


@pytest.fixture
def det(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "det", PROJECT)


def test_classes_through_bases_in_other_modules(det: Path):
    index = ProjectIndex.for_path(str(det / "train.py"))
    assert index.root == str(det)
    assert index.module_class_kind("models.yolo.Model") == "module"  # Model -> BaseModel -> nn.Module
    assert index.module_class_kind("models.Model") == "module"  # re-exported by models/__init__.py
    assert index.module_class_kind("models.common.Binding") == "not-tensor"
    assert index.module_class_kind("utils.torch_utils.ModelEMA") == "not-tensor"
    assert index.module_class_kind("utils.torch_utils.missing") is None
    assert index.module_class_kind("thirdparty.Thing") is None
    assert index.class_fields("models.common.Binding") == ["name", "dtype", "shape", "data", "ptr"]
    assert index.used >= {"models", "models.yolo", "models.common", "utils.torch_utils"}
    deps = index.dependencies()
    assert deps[str(det / "models/common.py")] == content_digest((det / "models/common.py").read_bytes())
    assert deps[str(det / "thirdparty.py")] == ""  # probed and absent: creating it must invalidate


def test_each_file_view_reports_its_own_dependencies(det: Path):
    first = ProjectIndex.for_path(str(det / "train.py"))
    assert first.module_class_kind("models.Model") == "module"
    second = ProjectIndex.for_path(str(det / "utils/build.py"))  # same project: answers are memoised
    assert second.module_class_kind("models.Model") == "module"
    assert second.dependencies() == first.dependencies() and second.used == first.used
    third = ProjectIndex.for_path(str(det / "utils/build.py"))
    assert third.module_class_kind("models.common.Binding") == "not-tensor"
    assert str(det / "models/yolo.py") not in third.dependencies()


def test_resolve_follows_reexports(det: Path):
    index = ProjectIndex.for_path(str(det / "train.py"))
    assert index.resolve("models.Model") == "models.yolo.DetectionModel"
    assert index.resolve("models.common.BaseModel") == "models.common.BaseModel"
    assert index.resolve("models.common") == "models.common"  # ``from . import common``
    assert index.resolve("models.yolo.BaseModel") == "models.common.BaseModel"
    assert index.resolve("models.yolo.Model.fuse") == "models.yolo.DetectionModel.fuse"
    assert index.resolve("models.yolo.torch") == "torch"  # an import of an external module
    assert index.resolve("models.common.nn.Module") == "torch.nn.Module"
    assert index.resolve("torch.nn.Module") is None


def test_function_returns(det: Path):
    index = ProjectIndex.for_path(str(det / "train.py"))
    assert index.function_return("utils.torch_utils.de_parallel") == "arg:0"
    assert index.function_returns("utils.torch_utils.de_parallel") == {"arg:0", "arg:0.module"}
    assert index.function_return("utils.torch_utils.is_parallel") == "not-tensor"
    assert index.function_return("utils.build.build") == "module"  # via a local, a relative import
    assert index.function_return("utils.build.bindings") == "mapping"
    assert index.function_return("utils.build.ema_of") == "not-tensor"  # ``import pkg.mod as m``
    assert index.function_return("utils.build.unwrap") == "arg:0"  # through de_parallel
    assert index.function_return("models.yolo.Model.fuse") == "module"  # returns self
    assert index.function_return("utils.torch_utils.nothing") is None
    assert index.function_return("torch.nn.SyncBatchNorm.convert_sync_batchnorm") == "module"  # external
    assert index.function_return("copy.deepcopy") == "arg:0"


def test_returns_of_operators_and_annotations(tmp_path: Path):
    root = write_tree(tmp_path / "ops", {"setup.cfg": "", "h.py": (
        "from typing import List, Optional\nimport torch\n\n"
        "def mask(x: torch.Tensor):\n    return x > 0\n\n"
        "def same(a, b):\n    return a is b\n\n"
        "def scaled(t: torch.Tensor):\n    return t * 2\n\n"
        "def maybe() -> Optional[torch.Tensor]:\n    return load()\n\n"
        "def many() -> List[torch.Tensor]:\n    return load()\n\n"
        "def rows():\n    yield torch.zeros(1)\n\n"
        "def pair(t: torch.Tensor):\n    return t, t.clone()\n\n"
        "x = torch.zeros(1)\n\n"
        "def grid(n):\n    return [torch.empty(0) for _ in range(n)]\n\n"
        "def shadowed(xs):\n    return [x for x in xs]\n"
    )})
    index = ProjectIndex.for_path(str(root / "h.py"))
    names = ("mask", "same", "scaled", "maybe", "many", "rows", "pair", "grid", "shadowed")
    returns = {name: index.function_return(f"h.{name}") for name in names}
    assert returns == {"mask": "tensor", "same": "not-tensor", "scaled": "tensor", "maybe": "tensor",
                       "many": "tensor-list", "rows": "not-tensor", "pair": "tensor-list", "grid": "tensor-list",
                       "shadowed": "not-tensor"}  # a list of unknown items (not the module's ``x``)


def test_attributes_assigned_in_methods(det: Path):
    index = ProjectIndex.for_path(str(det / "train.py"))
    assert index.attribute_kind("utils.torch_utils.ModelEMA", "ema") == "module"
    assert index.attribute_kind("utils.torch_utils.ModelEMA", "updates") is None  # a parameter: unknown
    assert index.attribute_kind("models.Model", "stride") == "tensor"
    assert index.attribute_kind("models.Model", "cfg") is None
    assert index.attribute_kind("train.Trainer", "model") == "module"


def test_relative_imports(det: Path):
    index = ProjectIndex.for_path(str(det / "models/heads/trainer.py"))
    assert index.module_name == "models.heads.trainer"
    assert index.absolute_import("..yolo.Model") == "models.yolo.Model"
    assert index.absolute_import(".") == "models.heads"
    assert index.absolute_import("....too.far") is None
    assert index.attribute_kind("models.heads.trainer.Trainer", "model") == "module"
    package = ProjectIndex.for_path(str(det / "models/__init__.py"))
    assert package.module_name == "models" and package.absolute_import(".yolo") == "models.yolo"


def test_null_index_answers_none(tmp_path: Path):
    for index in (ProjectIndex.for_path(None), ProjectIndex.for_path("-"), ProjectIndex()):
        assert index.module_class_kind("models.Model") is None
        assert index.function_return("a.b") is None
        assert index.attribute_kind("a.B", "x") is None
        assert index.resolve("a.b") is None
        assert index.used == set() and index.dependencies() == {}


def test_root_markers_and_init_chain(tmp_path: Path):
    write_tree(tmp_path / "a", {"setup.cfg": "", "x/y/__init__.py": "", "x/y/z.py": ""})
    assert find_root(str(tmp_path / "a/x/y/z.py")) == str(tmp_path / "a")
    write_tree(tmp_path / "b", {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/m.py": ""})
    if not any((p / m).exists() for p in tmp_path.parents for m in project_module.ROOT_MARKERS):
        assert find_root(str(tmp_path / "b/pkg/sub/m.py")) == str(tmp_path / "b")


def test_src_layout_and_script_directory(tmp_path: Path):
    root = write_tree(tmp_path / "s", {
        "pyproject.toml": "",
        "src/lib/__init__.py": "from .nets import Net\n",
        "src/lib/nets.py": "import torch.nn as nn\nclass Net(nn.Sequential):\n    pass\n",
        "tools/helpers.py": "import lightning\nclass Lit(lightning.LightningModule):\n    pass\n",
        "tools/train.py": "",
    })
    index = ProjectIndex.for_path(str(root / "tools/train.py"))
    assert index.module_class_kind("lib.Net") == "module"
    assert index.module_class_kind("helpers.Lit") == "module"  # beside a script, as ``python tools/train.py``


def test_cycles_and_unknown_bases_stay_unknown(tmp_path: Path):
    root = write_tree(tmp_path / "c", {
        ".git/HEAD": "",
        "a.py": "from b import B\nclass A(B):\n    pass\ndef f(x):\n    return g(x)\nfrom b import g\n",
        "b.py": "from a import A\nimport somelib\nclass B(A):\n    pass\nclass C(somelib.Base):\n    pass\n"
                "def g(x):\n    from a import f\n    return f(x)\n",
    })
    index = ProjectIndex.for_path(str(root / "a.py"))
    assert index.module_class_kind("a.A") is None
    assert index.module_class_kind("b.C") is None
    assert index.function_return("a.f") is None


def test_star_imports_and_ambiguous_bindings(tmp_path: Path):
    root = write_tree(tmp_path / "st", {
        "setup.py": "",
        "layers/__init__.py": "from .blocks import *\n",
        "layers/blocks.py": "import torch.nn as nn\nclass Block(nn.Module):\n    pass\n",
        "compat.py": "try:\n    from layers import Block\nexcept ImportError:\n    Block = None\n",
    })
    index = ProjectIndex.for_path(str(root / "compat.py"))
    assert index.module_class_kind("layers.Block") == "module"
    assert index.resolve("layers.Block") == "layers.blocks.Block"
    assert index.module_class_kind("compat.Block") is None  # bound two ways: unknown


def test_summaries_cached_on_disk_by_content(det: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    configure_summary_cache(str(cache))
    assert ProjectIndex.for_path(str(det / "train.py")).module_class_kind("models.Model") == "module"
    entries = sorted(cache.rglob(f"*-{SUMMARY_FORMAT}.json"))
    assert len(entries) >= 3
    for number, entry in enumerate(entries):  # corrupt every entry: the next process rebuilds them
        entry.write_text("{not json" if number % 2 else '{"classes": [], "symbols": 3}')
    ProjectIndex.clear()
    assert ProjectIndex.for_path(str(det / "train.py")).module_class_kind("models.Model") == "module"
    assert all(json.loads(e.read_text())["classes"] is not None for e in entries)


def _run(*args: str, cwd: Path, stdin: bytes = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "torchcopy_lint", "--isolated", *args], cwd=cwd,
                          capture_output=True, input=stdin, env=env)


def _codes(result: subprocess.CompletedProcess):
    return [(d["path"].replace(os.sep, "/").split("/")[-1], d["code"]) for d in json.loads(result.stdout)]


def test_deepcopy_of_self_model_is_flagged_only_thanks_to_the_index(det: Path, tmp_path: Path):
    flagged = _run("--no-cache", "--output-format", "json", str(det / "train.py"), cwd=tmp_path)
    assert _codes(flagged) == [("train.py", "TCL105")]
    lone = write_tree(tmp_path / "lone", {"train.py": PROJECT["train.py"]})  # same code, no project
    assert _codes(_run("--no-cache", "--output-format", "json", str(lone / "train.py"), cwd=tmp_path)) == []


def test_relative_import_in_a_nested_package_end_to_end(det: Path, tmp_path: Path):
    result = _run("--no-cache", "--output-format", "json", str(det / "models/heads/trainer.py"), cwd=tmp_path)
    assert _codes(result) == [("trainer.py", "TCL105")]


def test_cached_result_is_recomputed_when_a_used_module_changes(det: Path, tmp_path: Path):
    args = ("--cache-dir", str(tmp_path / "cache"), "--output-format", "json", str(det))
    assert ("train.py", "TCL105") in _codes(_run(*args, cwd=tmp_path))
    assert ("train.py", "TCL105") in _codes(_run(*args, cwd=tmp_path))  # warm: from the cache
    common = det / "models/common.py"
    common.write_text(common.read_text().replace("class BaseModel(nn.Module)", "class BaseModel(object)"))
    assert ("train.py", "TCL105") not in _codes(_run(*args, cwd=tmp_path))  # train.py itself unchanged
    common.write_text(PROJECT["models/common.py"])
    assert ("train.py", "TCL105") in _codes(_run(*args, cwd=tmp_path))


def test_same_content_in_another_project_is_not_answered_from_the_cache(det: Path, tmp_path: Path):
    lone = write_tree(tmp_path / "lone", {"train.py": PROJECT["train.py"]})
    cache = ("--cache-dir", str(tmp_path / "cache"), "--output-format", "json")
    for _ in range(2):  # cold, then warm: each file keeps its own project's answer
        assert _codes(_run(*cache, str(det / "train.py"), cwd=tmp_path)) == [("train.py", "TCL105")]
        assert _codes(_run(*cache, str(lone / "train.py"), cwd=tmp_path)) == []


def test_cached_result_notices_a_new_module(tmp_path: Path):
    files = {k: v for k, v in PROJECT.items() if not k.startswith("models/")}
    root = write_tree(tmp_path / "late", files)
    args = ("--cache-dir", str(tmp_path / "cache"), "--output-format", "json", str(root / "train.py"))
    assert _codes(_run(*args, cwd=tmp_path)) == []
    write_tree(root, {k: v for k, v in PROJECT.items() if k.startswith("models/")})
    assert _codes(_run(*args, cwd=tmp_path)) == [("train.py", "TCL105")]


def test_stdin_finds_the_project_from_its_filename(det: Path, tmp_path: Path):
    source = PROJECT["train.py"].encode()
    inside = _run("--stdin-filename", str(det / "train.py"), "--output-format", "json", "-", cwd=tmp_path,
                  stdin=source)
    assert _codes(inside) == [("train.py", "TCL105")]
    outside = _run("--stdin-filename", str(tmp_path / "elsewhere.py"), "--output-format", "json", "-",
                   cwd=tmp_path, stdin=source)
    assert _codes(outside) == []


def test_flake8_plugin_finds_the_project_from_the_path(det: Path, tmp_path: Path):
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "TCL", "--format", "%(code)s:%(row)d",
         str(det / "train.py")], capture_output=True, text=True, cwd=tmp_path,
    )
    assert result.stdout.split() == ["TCL105:14"], result.stderr


def test_refresh_forgets_after_an_edit_for_long_lived_processes(det: Path):
    index = ProjectIndex.for_path(str(det / "train.py"))
    assert index.module_class_kind("models.Model") == "module"
    assert ProjectIndex.refresh() is False  # nothing changed: answers stay memoised
    common = det / "models/common.py"
    common.write_text(common.read_text().replace("class BaseModel(nn.Module)", "class BaseModel"))
    os.utime(common, ns=(1, 1))  # a different mtime even on a coarse clock
    assert ProjectIndex.refresh() is True
    index = ProjectIndex.for_path(str(det / "train.py"))
    assert index.module_class_kind("models.Model") == "not-tensor"
    assert index.module_class_kind("thirdparty.Thing") is None
    (det / "thirdparty.py").write_text("class Thing:\n    pass\n")  # a probed, absent module appears
    assert ProjectIndex.refresh() is True
    assert ProjectIndex.for_path(str(det / "train.py")).module_class_kind("thirdparty.Thing") == "not-tensor"


def test_every_file_is_read_once_per_process(det: Path, monkeypatch):
    reads = []
    original = project_module.project_files.FileData.__init__

    def counting(self, path):
        reads.append(path)
        original(self, path)

    monkeypatch.setattr(project_module.project_files.FileData, "__init__", counting)
    for anchor in ("train.py", "utils/build.py", "models/yolo.py", "utils/torch_utils.py"):
        index = ProjectIndex.for_path(str(det / anchor))
        index.module_class_kind("models.Model")
        index.function_return("utils.build.build")
        index.attribute_kind("utils.torch_utils.ModelEMA", "ema")
    assert reads and len(reads) == len(set(reads))


def test_a_well_known_library_linted_as_the_project_consults_its_own_index(tmp_path: Path):
    """``timm`` names skip the index in user code (NON_PROJECT_ROOTS), but not in timm itself."""
    from torchcopy_lint.engine import lint_source
    from torchcopy_lint.rules import ALL_RULES

    train = (
        "import copy\n"
        "{imp}\n\n\n"
        "def fit(loader, opt):\n"
        "    model = Mlp()\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        opt.step()\n"
        "        best = copy.deepcopy(model)\n"
        "    return best\n"
    )
    files = {
        "pyproject.toml": "[project]\nname = 'timm'\n",
        "timm/__init__.py": "",
        "timm/layers.py": "import torch.nn as nn\n\n\nclass Mlp(nn.Module):\n    pass\n",
        "timm/train.py": train.format(imp="from .layers import Mlp"),
        "timm/train_absolute.py": train.format(imp="from timm.layers import Mlp"),
    }
    root = write_tree(tmp_path / "timm-src", files)
    for name in ("train.py", "train_absolute.py"):
        path = root / "timm" / name
        found = lint_source(path.read_bytes(), str(path), ALL_RULES)
        assert [d.code for d in found] == ["TCL105"], name
    user = write_tree(tmp_path / "user", {"pyproject.toml": "", "train.py": files["timm/train_absolute.py"]})
    assert lint_source((user / "train.py").read_bytes(), str(user / "train.py"), ALL_RULES) == []


def test_unmarked_package_of_scripts_sees_the_folder_above(tmp_path: Path):
    """yolov5's layout without its .git: ``segment/train.py`` is a script in a folder with no
    ``__init__.py``, so ``segment/`` is its root, but yolov5's scripts put the folder above on
    sys.path and import ``models`` from there."""
    files = {k: v for k, v in PROJECT.items() if k != "pyproject.toml" and not k.startswith("models/heads")}
    files["segment/train.py"] = PROJECT["train.py"]
    root = write_tree(tmp_path / "yolo", files)
    if any((p / m).exists() for p in root.parents for m in project_module.ROOT_MARKERS):
        pytest.skip("a root marker above the temporary folder decides the root")
    assert find_root(str(root / "segment/train.py")) == str(root / "segment")
    index = ProjectIndex.for_path(str(root / "segment/train.py"))
    assert index.module_class_kind("models.Model") == "module"
    result = _run("--no-cache", "--output-format", "json", str(root / "segment/train.py"), cwd=tmp_path)
    assert _codes(result) == [("train.py", "TCL105")]
    # a marked root is the project: nothing above it is searched
    (root / "segment" / "setup.cfg").write_text("")
    ProjectIndex.clear()
    result = _run("--no-cache", "--output-format", "json", str(root / "segment/train.py"), cwd=tmp_path)
    assert _codes(result) == []


LAZY_MODULE = b"""import torch
class Net(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
def make(n):
    return torch.zeros(n)
def other():
    return [1]
"""


def test_summaries_summarize_a_class_or_function_when_first_asked_for():
    summary = summaries.summarize(LAZY_MODULE)
    assert set(summary["functions"]) == {"make", "other"} and set(summary["classes"]) == {"Net"}
    assert summary["functions"].summarized() == {"make": None, "other": None}  # nothing summarized yet
    make = summary["functions"]["make"]
    assert make == summaries._function_summary(ast.parse(LAZY_MODULE).body[2], method=False)
    assert summary["functions"].summarized() == {"make": make, "other": None}
    assert summary["classes"]["Net"]["methods"].keys() == {"forward"}


def test_a_summary_kept_on_disk_summarizes_what_it_had_not_from_the_bytes(tmp_path: Path):
    configure_summary_cache(str(tmp_path / "cache"))
    try:
        first = project_files.cached_summary("d" * 40, LAZY_MODULE)
        first["functions"]["make"]  # summarized in this process, after the entry was written
        (entry,) = (tmp_path / "cache").rglob(f"*-{SUMMARY_FORMAT}.json")
        assert json.loads(entry.read_text())["functions"] == {"make": None, "other": None}
        again = project_files.cached_summary("d" * 40, LAZY_MODULE)  # read back: summarized when asked for
        assert again is not first and isinstance(again["functions"], LazyEntries)
        assert again["functions"]["other"] == summaries.summarize(LAZY_MODULE)["functions"]["other"]
        assert again["classes"]["Net"] == summaries.summarize(LAZY_MODULE)["classes"]["Net"]
    finally:
        configure_summary_cache(None)


def test_a_function_too_deep_to_summarize_keeps_its_signature(monkeypatch):
    real = summaries._function_summary

    def deep(node, method):
        if not (len(node.body) == 1 and isinstance(node.body[0], ast.Pass)):
            raise RecursionError
        return real(node, method)

    monkeypatch.setattr(summaries, "_function_summary", deep)
    made = summaries.summarize(LAZY_MODULE)["functions"]["make"]
    assert made["params"] == real(ast.parse(LAZY_MODULE).body[2], method=False)["params"] and made["ret"] == []


# --- the linted file's own star imports ---------------------------------------------------------------

_STAR_USER = (
    "{imports}\n\n"
    "def step(n):\n"
    "    label = torch.ones(n, 1).long()\n"
    "    return label\n"
)


def _star_codes(root: Path, name: str = "train.py") -> list:
    from torchcopy_lint.codes import DEFAULT_CODES
    from torchcopy_lint.run.runner import _lint_bytes

    path = root / name
    return [d.code for d in _lint_bytes(path.read_bytes(), str(path), frozenset(DEFAULT_CODES))]


@pytest.mark.parametrize("files, flagged", [
    # yolov5's `from models.common import *`: torch comes from the starred module's own import
    ({"common.py": "import torch\nimport torch.nn as nn\n", "train.py": "from common import *"}, True),
    # through a package whose __init__ stars a module of its own
    ({"pkg/__init__.py": "from .core import *\n", "pkg/core.py": "import torch\n", "train.py": "from pkg import *"},
     True),
    # a relative star in a package
    ({"app/__init__.py": "", "app/base.py": "import torch\n", "app/train.py": "from .base import *"}, True),
    # an __all__ says what a star exports: not read here, so nothing is told
    ({"common.py": "import torch\n__all__ = ['x']\nx = 1\n", "train.py": "from common import *"}, False),
    # the file binds the name itself
    ({"common.py": "import torch\n", "train.py": "from common import *\ntorch = None"}, False),
    ({"common.py": "import torch\n", "train.py": "from common import *\ndef run(torch):\n    return torch"}, False),
    # two starred modules bind it differently, or one binds it to a value
    ({"a.py": "import torch\n", "b.py": "import numpy as torch\n", "train.py": "from a import *\nfrom b import *"},
     False),
    ({"common.py": "torch = object()\n", "train.py": "from common import *"}, False),
    # a try/except fallback binds it two ways
    ({"common.py": "try:\n    import torch\nexcept ImportError:\n    torch = None\n", "train.py": "from common import *"},
     False),
    # a star of a module outside the project may bind anything
    ({"common.py": "import torch\n", "train.py": "from common import *\nfrom somewhere_else import *"}, False),
    # a private name is not exported by a star
    ({"common.py": "import torch as _torch\n", "train.py": "from common import *\ntorch = _torch"}, False),
])
def test_names_from_the_linted_files_star_imports(tmp_path: Path, files: Dict[str, str], flagged: bool):
    user = next(name for name in files if name.endswith("train.py"))
    files = {**files, user: _STAR_USER.format(imports=files[user]), "setup.py": ""}
    root = write_tree(tmp_path / "proj", files)
    assert _star_codes(root, user) == (["TCL116"] if flagged else [])


def test_star_resolution_is_recorded_as_a_dependency(tmp_path: Path):
    root = write_tree(tmp_path / "proj", {"setup.py": "", "common.py": "import torch\n",
                                          "train.py": _STAR_USER.format(imports="from common import *")})
    index = ProjectIndex.for_path(str(root / "train.py"))
    assert index.star_name(("common",), "torch") == "torch"
    assert index.star_name(("common",), "nothing_here") is None
    assert any(path.endswith("common.py") for path in index.dependencies())


def test_names_bound_is_a_superset_of_the_bindings():
    import libcst as cst

    from torchcopy_lint.imports import names_bound

    module = cst.parse_module(
        "import a.b\nimport c as d\nfrom e import f\nx, (y, *z) = 1, (2, 3)\nw: int = 1\nv += 1\n"
        "for i, j in k: pass\n[m for n in o]\nwith p as q: pass\ntry: pass\nexcept E as r: pass\n"
        "def g(s, *t, u=1, **kw):\n    global gl\n    nonlocal_ = lambda la: la\nclass C: pass\n(wal := 3)\n"
        "obj.attr = 1\nitems[0] = 1\n"
    )
    bound = names_bound(module)
    assert {"a", "d", "x", "y", "z", "w", "v", "i", "j", "n", "q", "r", "g", "s", "t", "u", "kw", "gl", "nonlocal_",
            "la", "C", "wal", "obj", "items"} <= bound
    assert not {"k", "o", "E", "p", "b", "e", "f"} & bound  # read, not bound (`f` is the ImportMap's business)


def test_instances_of_a_project_tensor_subclass_are_not_taken_for_plain_tensors(tmp_path: Path):
    """TCL111: a conversion of an instance of the project's own Tensor subclass (its dispatch may change the
    receiver, torchrec's UInt4Tensor) is not reported; the same statement on a torch tensor is."""
    root = write_tree(tmp_path / "sub", {
        "pyproject.toml": "[project]\nname = 'sub'\n",
        "sub/__init__.py": "",
        "sub/tensor_types.py": (
            "import torch\n\n\nclass UIntXTensor(torch.Tensor):\n    pass\n\n\n"
            "class UInt4Tensor(UIntXTensor):\n    pass\n"),
        "sub/check.py": (
            "import torch\nfrom sub.tensor_types import UInt4Tensor\n\n\n"
            "def check(device: torch.device):\n"
            "    packed = UInt4Tensor(torch.zeros(4, dtype=torch.uint8))\n"
            "    packed.to(device)\n"
            "    plain = torch.zeros(4)\n"
            "    plain.to(device)\n"),
    })
    index = ProjectIndex.for_path(str(root / "sub/check.py"))
    assert index.module_class_kind("sub.tensor_types.UInt4Tensor") == "tensor"
    result = _run("--no-cache", "--select", "TCL111", "--output-format", "json", str(root / "sub/check.py"),
                  cwd=tmp_path)
    assert [(d["line"], d["code"]) for d in json.loads(result.stdout)] == [(9, "TCL111")]
