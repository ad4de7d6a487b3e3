"""The semantic model: scopes, bindings, one forward flow pass per scope, and value kinds.

Rules never walk the tree to find out what a name holds; they ask ``FileContext`` (rule.py), which
asks the ``SemanticModel`` of the file. The queries (stable API for rules):

- ``context.kind_of(expr) -> Kind``: TENSOR (tensors and parameters), MODULE, NOT_TENSOR (anything
  else that is known) or UNKNOWN. Unknown means silent.
- ``context.value_of(expr) -> Value``: the fine answer: ``.kind`` is one of ``Kind`` (TENSOR,
  PARAMETER, MODULE, OPTIMIZER, TENSOR_LIST, RECORD, MAPPING, NUMBER, NOT_TENSOR, UNKNOWN; see
  ``Kind.is_tensor`` / ``Kind.is_known_other``), ``.cls`` the class of a module/record/optimizer when
  known (of a tensor: the project's own Tensor subclass it is an instance of, never a torch class), ``.item`` the value of a mapping's items, ``.fields`` a record's field names when declared,
  ``.items`` a tuple's values by position when its length is known (``torch.topk``'s named tuple).
- ``context.reaching(node) -> [Binding]``: the bindings that can reach the read ``node`` (a Name or
  an attribute chain such as ``self.best``); ``Binding.how`` says what made it (assign, aug, iter,
  param, import, def, class, buffer, with, ann, unknown), ``Binding.node`` / ``.value`` where.
- ``context.semantic.reads_of(binding) -> [Read]``: the reads a binding can reach (``Read.node``).
- ``context.loop() -> Loop | None``: the innermost for/while around the visited node in its
  function; ``Loop.node``, ``Loop.calls`` (every call in the body, nested loops included),
  ``Loop.calls_method("backward", "step")``.
- ``context.semantic.is_training_step(call)``: ``.backward()``, ``torch.autograd.backward``, or
  ``.step()`` on a known optimizer.
- ``context.semantic.step_between(binding, read, is_step=None) -> bool``: whether some path from the
  binding to the read (not rebinding it; through loop back edges) runs a training step.
- ``context.read(node) -> Read | None``: the read record of a Name/attribute chain node (``Read.falsy``: a
  test found it false on every path there, ``if not xs`` / ``len(xs) == 0``, and nothing changed it since).
- ``context.semantic.ensure(stack)``, ``.module_scope()``, ``.function_scope(fn) -> Scope``: run the
  forward pass of the scopes around a node / of one scope (each runs once); ``Scope.bindings`` (key ->
  bindings), ``Scope.reads``, ``Scope.item_stores`` (``d[k] = v``, ``xs.append(v)``), ``Scope.returns``.
- ``context.graph_context(written=None) -> GraphContext`` (``semantic/autograd.py``): whether a graph
  can be live at the visited node (``.live``; ``.kind``: no_grad, grad, nn.init, init, apply, load,
  optimizer, or forward, hook, unknown; ``.where``: a phrase for messages). Graph-free needs evidence.

- ``context.requires_grad(expr) -> Grad`` (``semantic/requires_grad.py``): whether an op on ``expr`` at the
  visited node records an autograd node: YES (evidence it requires grad: a parameter, ``requires_grad=True``,
  a layer's output), NO (it cannot: bool/integer results, factories, ``.data``, ``.detach()``, hook gradients,
  made under no_grad, returned by a project function that computes it under no_grad, ``requires_grad = False``;
  or grad mode is off at the node, also in a private function called only where it is off), UNKNOWN.

- ``context.semantic.storage``: storage identity (storage.py): ``alias_of``/``root`` (views, ``.detach()``,
  ``.data``, the numpy bridge), ``writes_at`` (in-place writes of a statement), ``Side``s and ``hazard``
  (a path where one side is written in place and the other read afterwards).

Cross-module facts come from ``project.ProjectIndex`` (``context.project``, may be None).
"""

from .autograd import GraphContext
from .kinds import Grad, Kind, Value, join
from .model import SemanticModel
from .scopes import Binding, Loop, Read

__all__ = ["Binding", "GraphContext", "Grad", "Kind", "Loop", "Read", "SemanticModel", "Value", "join"]
