"""The semantic model's queries: reaching definitions, value kinds, narrowing, loops, training steps."""

from __future__ import annotations

import textwrap
from typing import List, Tuple

import libcst as cst

from torchcopy_lint.imports import ImportMap
from torchcopy_lint.semantic import Kind, SemanticModel
from torchcopy_lint.walk import children


def _model(source: str) -> Tuple[SemanticModel, cst.Module]:
    module = cst.parse_module(textwrap.dedent(source))
    return SemanticModel(module, ImportMap(module)), module


def _reads(module: cst.Module, name: str) -> List[Tuple[cst.Name, list]]:
    """Every Name ``name`` in load position with its stack of ancestors, in source order."""
    found = []

    def walk(node, stack):
        stack = stack + [node]
        binding = len(stack) > 1 and isinstance(stack[-2], (cst.AssignTarget, cst.Param, cst.CompFor))
        if isinstance(node, cst.Name) and node.value == name and not binding:
            found.append((node, stack))
        for child in children(node):
            walk(child, stack)

    walk(module, [])
    return found


def _value_at(source: str, name: str, index: int = -1):
    model, module = _model(source)
    node, stack = _reads(module, name)[index]
    return model.value_of(node, stack)


def test_branches_merge_and_kinds_join():
    src = """
    import torch
    if c:
        x = torch.zeros(2)
    else:
        x = torch.nn.Parameter(torch.zeros(2))
    use(x)
    """
    assert _value_at(src, "x").kind is Kind.TENSOR
    assert _value_at(src.replace("torch.nn.Parameter(torch.zeros(2))", "[1]"), "x").kind is Kind.UNKNOWN


def test_loop_back_edge_reaches_reads_before_the_rebinding():
    src = """
    import torch
    x = 0
    for i in range(3):
        use(x)
        x = torch.zeros(2)
    """
    model, module = _model(src)
    node, stack = _reads(module, "x")[0]
    hows = sorted(b.value.__class__.__name__ for b in model.reaching(node, stack))
    assert hows == ["Call", "Integer"]
    assert model.value_of(node, stack).kind is Kind.UNKNOWN  # a number or a tensor


def test_rebinding_before_every_read_hides_older_bindings():
    src = """
    import torch
    x = [1]
    while cond():
        x = torch.zeros(2)
        use(x)
    """
    assert _value_at(src, "x").kind is Kind.TENSOR


def test_early_exit_and_isinstance_narrowing():
    src = """
    import torch
    def f(x):
        if not isinstance(x, torch.Tensor):
            return None
        return torch.tensor(x)
    """
    assert _value_at(src, "x").kind is Kind.TENSOR
    guard = """
    import torch
    def f(x):
        ok = torch.is_tensor(x)
        if ok and x.dim() > 0:
            use(x)
    """
    assert _value_at(guard, "x").kind is Kind.TENSOR


def test_comprehension_and_lambda_have_their_own_scopes():
    src = """
    import torch
    x = torch.zeros(2)
    ys = [x for x in range(3)]
    f = lambda x: x
    use(x)
    """
    assert _value_at(src, "x", 0).kind is Kind.NUMBER  # the comprehension's x
    assert _value_at(src, "x", 1).kind is Kind.UNKNOWN  # the lambda's parameter
    assert _value_at(src, "x").kind is Kind.TENSOR  # the module's x, untouched by both


def test_records_mappings_lists_and_optimizers():
    src = """
    import argparse
    from collections import OrderedDict, namedtuple
    import torch
    Binding = namedtuple("Binding", "name data")
    class Net(torch.nn.Module):
        pass
    class Holder:
        def __init__(self):
            self.bindings = OrderedDict()
            self.bindings["a"] = Binding("a", torch.zeros(1))
        def get(self):
            return self.bindings["a"]
    args = argparse.ArgumentParser().parse_args()
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    params = list(net.parameters())
    sd = net.state_dict()
    use(args, net, opt, params, sd)
    """
    model, module = _model(src)
    expected = {"args": (Kind.RECORD, "argparse.Namespace"), "net": (Kind.MODULE, "Net"),
                "opt": (Kind.OPTIMIZER, "torch.optim.SGD"), "params": (Kind.TENSOR_LIST, None),
                "sd": (Kind.MAPPING, None)}
    for name, (kind, cls) in expected.items():
        node, stack = _reads(module, name)[-1]
        value = model.value_of(node, stack)
        assert (value.kind, value.cls) == (kind, cls), name
    node, stack = _reads(module, "sd")[-1]
    assert model.value_of(node, stack).item.kind is Kind.TENSOR
    holder = next(s for s in module.body if isinstance(s, cst.ClassDef) and s.name.value == "Holder")
    get = holder.body.body[1]
    ret = get.body.body[0].body[0].value  # self.bindings["a"]
    value = model.value_of(ret, [module, holder, holder.body, get, get.body])
    assert (value.kind, value.cls) == (Kind.RECORD, "Binding")


def test_loop_of_and_training_steps_between_binding_and_read():
    src = """
    import torch
    def train(model, opt: torch.optim.Optimizer, data):
        best = model.state_dict()
        for x in data:
            loss = model(x).sum()
            loss.backward()
            opt.step()
        torch.save(best, "best.pt")
        fresh = model.state_dict()
        torch.save(fresh, "now.pt")
    """
    model, module = _model(src)
    (best_read, stack), = [r for r in _reads(module, "best")]
    binding, = model.reaching(best_read, stack)
    read = model.read_of(best_read, stack)
    assert model.step_between(binding, read)
    assert [r.node for r in model.reads_of(binding)] == [best_read]
    (fresh_read, fstack), = _reads(module, "fresh")
    fresh, = model.reaching(fresh_read, fstack)
    assert not model.step_between(fresh, model.read_of(fresh_read, fstack))
    (loss_read, lstack) = _reads(module, "loss")[0]
    loop = model.loop_of(lstack)
    assert isinstance(loop.node, cst.For)
    assert [c.func.attr.value for c in loop.calls_method("backward", "step")] == ["backward", "step"]
    assert all(model.is_training_step(c) for c in loop.calls_method("backward", "step"))


def test_step_in_a_later_iteration_reaches_a_read_through_the_back_edge():
    src = """
    def train(model, data):
        for x in data:
            if x is None:
                snapshot = model.state_dict()
                continue
            use(snapshot)
            model(x).backward()
    """
    model, module = _model(src)
    (read_node, stack), = _reads(module, "snapshot")
    binding, = model.reaching(read_node, stack)
    # bound, `continue`, read, backward, back to the head, read again: a step between on that path
    assert model.step_between(binding, model.read_of(read_node, stack))


def test_attributes_of_classes_come_from_the_project_index(tmp_path):
    from torchcopy_lint.engine import lint_source
    from torchcopy_lint.rules import ALL_RULES
    from torchcopy_lint.semantic.project import ProjectIndex

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn
        class Flava(nn.Module):
            def __init__(self):
                super().__init__()
                self.logit_scale = nn.Parameter(torch.ones([]))
        class ForPretraining(nn.Module):
            def __init__(self):
                super().__init__()
                self.flava = Flava()
            def forward(self, x):
                y = x * self.flava.logit_scale  # saves it: a graph holds it at the write
                self.flava.logit_scale.data.clamp_(0, 4.6)
                return y
        """)
    path = tmp_path / "pkg" / "model.py"
    path.write_text(source)
    ProjectIndex.clear()
    found = lint_source(source, str(path), ALL_RULES)
    assert [(d.code, d.fix is not None) for d in found] == [("TCL104", True)]  # known: a parameter
    alone = lint_source(source, "-", ALL_RULES)  # no project: nothing says what logit_scale is
    assert alone == []


def test_a_binding_renewed_in_every_iteration_is_not_stale():
    src = """
    def train(model, data):
        for x in data:
            snapshot = model.state_dict()
            use(snapshot)
            model(x).backward()
    """
    model, module = _model(src)
    (read_node, stack), = _reads(module, "snapshot")
    binding, = model.reaching(read_node, stack)
    # the path round the loop passes `snapshot = ...` again: the read sees a fresh binding
    assert not model.step_between(binding, model.read_of(read_node, stack))


def test_records_know_their_fields():
    src = """
    import dataclasses
    from collections import namedtuple
    from typing import NamedTuple
    Binding = namedtuple("Binding", ("name", "data"))
    class Pair(NamedTuple):
        left: int
        right: int
    @dataclasses.dataclass
    class Sample:
        data: list
        label: int = 0
    b, p, s = Binding("x", 1), Pair(1, 2), Sample([1])
    use(b, p, s)
    """
    model, module = _model(src)
    for name, fields in (("b", ("name", "data")), ("p", ("left", "right")), ("s", ("data", "label"))):
        node, stack = _reads(module, name)[-1]
        value = model.value_of(node, stack)
        assert (value.kind, value.fields) == (Kind.RECORD, fields), name


def test_module_returning_torch_functions():
    src = """
    import torch
    import torch.nn as nn
    def f(x):
        return x
    m = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    c = torch.compile(nn.Linear(2, 2))
    g = torch.compile(f)
    use(m, c, g)
    """
    assert _value_at(src, "m").kind is Kind.MODULE
    assert _value_at(src, "c").kind is Kind.MODULE
    assert _value_at(src, "g").kind is Kind.UNKNOWN  # a compiled function is not a module


def test_a_value_or_none_is_the_value():
    src = """
    import torch.nn as nn
    ema = nn.Linear(2, 2) if rank == 0 else None
    opts = None if rank else {"lr": 1}
    none = None if rank else None
    use(ema, opts, none)
    """
    assert _value_at(src, "ema").kind is Kind.MODULE
    assert _value_at(src, "opts").kind is Kind.MAPPING
    assert _value_at(src, "none").kind is Kind.NOT_TENSOR
    assert _value_at(src.replace("else None", "else [1]"), "ema").kind is Kind.UNKNOWN


def test_the_module_a_parallel_wrapper_holds():
    src = """
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    model = nn.Sequential()
    if ddp:
        model = DDP(model)
    elif dp:
        model = nn.DataParallel(model)
    use(model.module, DDP(model).module, nn.Linear(2, 2).module)
    """
    model, module = _model(src)
    call = module.body[-1].body[0].value
    args = [a.value for a in call.args]
    stack = [module, module.body[-1], module.body[-1].body[0], call]
    kinds = [model.value_of(a, stack + [a]).kind for a in args]
    assert kinds == [Kind.MODULE, Kind.MODULE, Kind.UNKNOWN]  # a Linear's `.module` is whatever was set


def test_a_walrus_in_a_loop_body_reaches_reads_at_the_loop_head():
    src = """
    import torch
    x = 0
    for i in range(3):
        use(x)
        if (x := torch.zeros(2)) is not None:
            pass
        f = lambda: (x := 1)
    """
    model, module = _model(src)
    node, stack = _reads(module, "x")[0]
    hows = sorted(b.value.__class__.__name__ for b in model.reaching(node, stack))
    assert hows == ["Call", "Integer"]  # the lambda's walrus binds in the lambda
    assert model.value_of(node, stack).kind is Kind.UNKNOWN  # a number or a tensor


def test_a_function_nested_in_a_method_sees_the_class_attributes_through_self():
    src = """
    import torch
    class Trainer:
        def __init__(self):
            self.buf = torch.zeros(2)
        def run(self):
            def inner():
                return self.buf
            def shadowed(self):
                return self.buf
            return inner, shadowed
    """
    model, module = _model(src)
    found = []

    def walk(node, stack):
        stack = stack + [node]
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.attr.value == "buf" \
                and isinstance(stack[-2], cst.Return):
            found.append(model.value_of(node, stack).kind)
        for child in children(node):
            walk(child, stack)

    walk(module, [])
    assert found == [Kind.TENSOR, Kind.UNKNOWN]  # `shadowed` binds its own `self`


def test_requires_grad_evidence():
    from torchcopy_lint.semantic import Grad

    src = """
    import torch
    def f(x: torch.Tensor, h):
        w = torch.nn.Parameter(torch.ones(3))
        mask = w > 0
        made = torch.zeros(3)
        with torch.no_grad():
            fresh = w * 2
            view = w.view(-1)
        off = torch.ones(3, requires_grad=True)
        off.requires_grad = False
        use(w, mask, made, fresh, view, off, x, h)
    """
    model, module = _model(src)
    expected = {"w": Grad.YES, "mask": Grad.NO, "made": Grad.NO, "fresh": Grad.NO, "view": Grad.YES,
                "off": Grad.NO, "x": Grad.UNKNOWN, "h": Grad.UNKNOWN}
    for name, grad in expected.items():
        node, stack = _reads(module, name)[-1]
        assert model.grads.at(node, stack) is grad, name
