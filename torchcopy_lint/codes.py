"""The part of the rule table that must be importable without LibCST: codes and trigger texts.

A warm run (every file answered by the cache) needs the codes for the cache keys,
and the flake8 plugin needs the triggers to skip files no rule can match, and
neither should pay for the LibCST import (~0.11 s). Each rule module takes its
``triggers`` from here; tests/test_registry.py checks the table against the rules.

A rule's triggers are regexes that must *all* occur in a file's text for the rule
to possibly report anything in it (the prefilter: a superset, never a guess).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Dict, FrozenSet, Iterable, Optional, Tuple, Union

from .trigger_syntax import (DOT, GAP, IDENTIFIER_CHAR, IDENTIFIER_START, NAME, NOT_IDENTIFIER, NOT_UNDERSCORE, Trigger,
                             call_of, word)
from .trigger_syntax import alternatives, compile_trigger  # noqa: F401  (the prefilter's API, used from here)

#: Names the rules, their text triggers and the structural prefilter (structure.py) share; names only.
#: A tensor's dtype casts with a `torch` dtype of the same name's meaning (`x.float()`: `dtype=torch.float`) ...
CASTS = ("float", "half", "double", "bfloat16", "long", "int", "bool")
#: ... the other casts (`x.byte()`: torch.uint8) and the device moves.
MORE_CASTS = ("byte", "char", "short")
DEVICE_MOVES = ("to", "cuda", "cpu")
#: The conversions of TCL116-TCL118: a possible copy to another dtype or device.
CONVERSION_METHODS = DEVICE_MOVES + CASTS + MORE_CASTS
#: What TCL111 finds thrown away as a statement: conversions that return a new tensor, copies and views.
DISCARDABLE_METHODS = DEVICE_MOVES + CASTS + ("contiguous", "detach", "clone")
#: TCL116's creation functions of `torch`.
CREATION_FUNCTIONS = ("zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like", "eye",
                      "arange", "linspace", "tensor")
#: Methods that give a view of their receiver's storage (semantic/storage.py), and attributes that are views.
VIEW_METHODS = frozenset("""detach numpy view view_as transpose t permute squeeze unsqueeze expand expand_as
    narrow select unfold diagonal as_strided movedim swapaxes swapdims unflatten""".split())
VIEW_ATTRIBUTES = frozenset({"data", "T", "mT"})
#: The last names of the functions that share their argument's memory (storage.SHARING_FUNCTIONS has them whole).
SHARING_NAMES = frozenset({"from_numpy", "as_tensor", "asarray"})
#: torch's legacy constructors and the numpy dtype of an array whose memory each shares (any other dtype: a copy;
#: `Tensor` follows the default dtype, float32 unless a file sets it; TCL113-legacy-constructor-shares).
LEGACY_CONSTRUCTORS = {"Tensor": "float32", "FloatTensor": "float32", "DoubleTensor": "float64",
                       "HalfTensor": "float16", "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
                       "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool"}
#: Methods ending in `_` that do not write values (the aliasing rules' in-place writes are the others).
NOT_WRITES = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "pin_memory_", "record_stream_"})
#: What the semantic model (semantic/calls.py) calls a number or another non-tensor value by name alone, which
#: arguments.py reads too: builtins called by a name the file never binds (`len(xs)`; `list`/`tuple` give a list),
#: and methods whatever their receiver (`x.item()`, `x.size()`) when the receiver's name is no import.
NUMBER_BUILTINS = frozenset("len int float bool hash id ord".split())
NOT_TENSOR_BUILTINS = frozenset(
    """len int float bool str list tuple dict set frozenset range sorted enumerate zip map filter repr format
    ord chr hash id type isinstance hasattr print iter""".split()
)
NUMBER_METHODS = frozenset("item numel nelement dim ndimension element_size data_ptr get_device".split())
NOT_TENSOR_METHODS = frozenset(
    """tolist item numpy size dim ndimension numel nelement element_size stride data_ptr storage_offset
    is_contiguous is_floating_point is_complex get_device keys values items""".split()
)
NOT_TENSOR_ATTRIBUTES = frozenset(
    "shape ndim dtype device is_cuda requires_grad is_leaf layout names is_sparse itemsize nbytes".split()
)


def attribute_makers(text: str, name: str) -> FrozenSet[str]:
    """The top-level classes and functions of ``text`` (a file's) called in a store ``obj.name = maker(...)``: where
    there is none, semantic/field_types.py gives ``<anything>.name`` no class (and the plan relies on that)."""
    makers = set(re.findall(r"\.[ \t]*" + re.escape(name) + r"[ \t]*(?::[^=\n]*)?=[ \t]*(\w+)[ \t]*\(", text))
    return frozenset(maker for maker in makers if re.search(r"(?m)^(?:class|def)[ \t]+" + maker + r"\b", text))


def is_in_place(name: str) -> bool:
    """A method or function name that writes its receiver (or first argument) in place: ends in one `_` (torch's
    convention: `add_`; no name of torch, its Tensor, torch.nn.init/functional or numpy ends in `__` without
    starting with `_`), not a dunder or private name (`__iadd__`, `_foo_`), not NOT_WRITES."""
    return name.endswith("_") and not name.startswith("_") and not name.endswith("__") and name not in NOT_WRITES


#: A call of a name ``is_in_place`` accepts, literal-first (any gap before the parenthesis): a `_` before a gap or
#: `(` (checked first: the cheapest test of the many `_` of a file), after a character that is not `_` (so never a
#: dunder's `__init__(`), not the end of a NOT_WRITES name (`x.requires_grad_(`). A superset: `_private_(` passes.
IN_PLACE_CALL = call_of(r"_(?=[\s(\\#])(?<=" + NOT_UNDERSCORE + "_)" + "".join(
    "(?<!" + NOT_IDENTIFIER + name + ")" for name in sorted(NOT_WRITES)))
#: A method call of such a name right after a dot (a method name does not start with `_`).
IN_PLACE_METHOD = DOT + "(?!_)" + IDENTIFIER_CHAR + "*" + IN_PLACE_CALL
#: A name or an attribute chain (`self.w`), parenthesised anywhere it may be (`(self).w`, `((w))`), then `[`: the
#: first argument of a call that TCL120 reads as a dotted name's subscript; GAP around every token (the call's
#: parentheses allow any line break). Each loop turn eats a `(`, `)` or `.`: a failing search is linear.
DOTTED_SUBSCRIPT = (GAP + r"(?:\(" + GAP + ")*" + NAME + r"(?:" + GAP + r"\))*(?:" + GAP + r"\." + GAP + NAME
                    + r"(?:" + GAP + r"\))*)*" + GAP + r"\[")

#: TCL101's call: `tensor(` whose first argument starts with a name, `(`, `-`/`~` or a non-ASCII letter
#: (not a literal list, number or string), with any GAP around the parenthesis.
TENSOR_OF_NAME = word("tensor") + GAP + r"\(" + GAP + r"(?:[A-Za-z_(\-~]|[^\x00-\x7f])"
#: TCL101's alias: `tensor` imported (maybe under another name), comments allowed in the import list.
TENSOR_IMPORT = word("import") + r"\s*\(?(?:[\w\s,\\]|#[^\r\n]*(?![^\r\n]))*\btensor\b"
#: Text that shows `copy.copy` may be called under another name: calls then can't be found by text.
COPY_ALIAS = (word("from") + r"\s+copy\s+import\s*(?:\([\w\s,]*?|(?:[\w \t,]|\\\r?\n)*?)(?<!\w)copy\b|"
              + word("import") + r"\s+copy\s+as\b")
#: Text that shows `torch.tensor`/`torch.as_tensor` may be called under another name.
TENSOR_ALIAS = word("import") + r"\s*\(?[\w\s,\\]*\b(?:as_)?tensor\b"
#: TCL107's call: `tensor(`/`as_tensor(` (``\b(?:as_)?tensor``) whose argument starts with a name,
#: perhaps inside `[`/`(`.
TENSORS_CALL = (r"tensor(?:(?<!\wtensor)|(?<=as_tensor)(?<!\was_tensor))"
                + GAP + r"\(" + GAP + r"(?:data" + GAP + "=" + GAP + r")?(?:[\[(]" + GAP + r")?[A-Za-z_]")
#: TCL108's call.
COPY_CALL = word("copy") + GAP + DOT + call_of("copy")
#: TCL111's call: a tensor conversion method (`.to(`, `.cuda(`, ... `.clone(`), any gap before the parenthesis.
CONVERSIONS = "(?:" + "|".join(DISCARDABLE_METHODS) + ")"
CONVERSION_CALL = DOT + call_of(CONVERSIONS)
#: TCL111's statement: a line that starts with a dotted name and its first conversion (`x.y.to(`, `x.long().cuda(`);
#: the rule reports only such statements (a plain dotted receiver, at the start of its line). Literal-first from
#: the line break (`\n`, an old-Mac `\r`, or the file's start): 0.6x the time of `(?m)^`. Searched only in files
#: with a CONVERSION_CALL (may_match stops at the first trigger that fails).
#: (No possessive quantifiers: Python < 3.11 has none. None is needed: each name is followed by a `.` or by
#: CONVERSION_CALL's dot, so backtracking into it can never match differently, and each loop turn eats a dot.)
CONVERSION_STATEMENT = "|".join(
    line + r"[ \t\f]*" + IDENTIFIER_START + r"(?:" + IDENTIFIER_CHAR + r"*\.(?!" + CONVERSIONS + "(?!" + IDENTIFIER_CHAR
    + r")))*" + IDENTIFIER_CHAR + "*" + CONVERSION_CALL for line in (r"\n", r"\r", r"\A"))
#: A training step: `backward(` or `step(` (GAP: any gap before the parenthesis, as `call_of`).
STEP_CALL = call_of(word("backward")) + "|" + call_of(word("step"))
#: KIND_EVIDENCE less the return annotations: what makes a segment evidence wherever it is (a function annotated
#: `-> Tensor` is evidence only for code that names it: structure.Plan.keeps).
KIND_EVIDENCE_NOT_RETURNS = r"\.config\.|\.cfg\.|__getitem__"
#: Text elsewhere in a file that the kind inference reads (pruning must keep it): functions annotated
#: `-> Tensor` (their return statements may contradict it), calls passing config fields (they may
#: contradict a parameter's `torch.Tensor` annotation) and a Dataset's `__getitem__` (what its DataLoader's
#: batches are: semantic/evaluate.py).
KIND_EVIDENCE = r"->\s*['\"]?[\w.]*Tensor\b|" + KIND_EVIDENCE_NOT_RETURNS
#: Calls the autograd context (semantic/autograd.py) reads as evidence that a function is graph-free:
#: `model.apply(init_fn)`. Pruning keeps the functions holding them (and the callers of the functions that
#: write `.data`: callers.py).
GRAPH_EVIDENCE = r"apply\s*\("
#: Where TCL104 may find a live graph, as text: semantic/autograd.py's evidence is a function named `forward`, a hook
#: (a function whose name holds the word `hook` in any case, or one passed to `register_*hook*`), a function called
#: from one of those, or a write between a forward and a `backward()` (training_order.py). A file holding none of these
#: words holds no graph the model can call live, so TCL104 cannot report in it (TCL119, its graph-free twin, can).
#: Keep in step with autograd.py: a new kind of evidence that a graph is live needs its word here.
GRAPH_LIVE_WORDS = r"forward|backward|(?i:hook)"
#: A creation function imported under another name (`from torch import zeros as z`): calls can't be found by text.
CREATION_ALIAS = word("import") + r"[\w\s,\\(]*\b(?:zeros|ones|full|empty|eye|arange|linspace|tensor)(?:_like)?\s+as\b"
#: TCL116's creation call (`zeros(`, `ones_like(` ...), or one of them imported under another name.
CREATION_CALL = "|".join(call_of(word(name) + r"(?:_like)?") for name in ("zeros", "ones", "full", "empty")) + "|" \
    + "|".join(call_of(word(name)) for name in ("eye", "arange", "linspace", "tensor")) + "|" + CREATION_ALIAS
#: The dtype/device conversions of TCL116-TCL118 (a cast), and one right after a call's closing parenthesis (`f(..).to(`).
CAST_CALL = DOT + call_of("(?:" + "|".join(CONVERSION_METHODS) + r")\b")
CAST_AFTER_CALL = r"\)" + GAP + CAST_CALL
#: `.detach(` called on a call's result (TCL103, TCL117).
DETACH_AFTER_CALL = r"\)" + GAP + DOT + call_of("detach")

#: TCL120's statement: an in-place method called on a subscript, maybe through `.data` or `.detach()`, which
#: are still the copy (`h[idx].zero_()`, `h[idx].data.zero_()`, `h[idx].detach().zero_()`; closing parentheses
#: may come between) ...
_STILL_THE_COPY = ("(?:" + DOT + "(?:data|detach" + GAP + r"\(" + GAP + r"\))" + GAP + r"(?:\)" + GAP + r")*)*")
#: ... or an in-place function called on one (`torch.zero_(h[idx])`, `nn.init.normal_(self.w[idx], 0, 1)`): the
#: first argument a dotted name's subscript (the rule reports no other; a dunder such as `__init__(` is never an
#: in-place name). Method and function names as ``is_in_place`` (less NOT_VALUE_WRITES' extras: a superset).
INDEXED_IN_PLACE = (r"\]" + GAP + r"(?:\)" + GAP + r")*" + _STILL_THE_COPY + IN_PLACE_METHOD + "|"
                    + IN_PLACE_CALL + DOTTED_SUBSCRIPT)

#: An in-place write (TCL113-TCL115): a method or function ending in `_` called, an augmented assignment,
#: a subscript store, `out=`, or an optimizer's `step(`.
IN_PLACE_WRITE = (IN_PLACE_CALL + r"|=(?<=[-+*/@%&|^]=)|=(?<=>>=)|=(?<=<<=)|\]" + GAP + r"=(?!=)|"
                  + word("out") + GAP + r"=(?!=)|" + call_of(word("step")))

#: A name the file may call or import under another name (qualified names resolve imports only): `name(` or
#: `name as` (any gap between; `from torch import from_numpy as f`, then `f(a)`).
_CALLED_OR_ALIASED = GAP + r"(?:\(|as\b)"
assert all(name.endswith("Tensor") for name in LEGACY_CONSTRUCTORS)
#: One of LEGACY_CONSTRUCTORS whole (`torch.FloatTensor`, not `FakeTensor`), literal-first: `Tensor` after its prefix.
LEGACY_CONSTRUCTOR = "Tensor(?:" + "|".join(
    "(?<=" + name + ")(?<!" + IDENTIFIER_CHAR + name + ")" for name in sorted(LEGACY_CONSTRUCTORS)) + ")"
#: TCL113's bridge (storage.alias_of and the rule's legacy constructors): `.numpy(`, a call of `from_numpy`,
#: `as_tensor`, `asarray` or a legacy constructor (`torch.FloatTensor(a)`), or one of them imported under another name.
NUMPY_BRIDGE = (DOT + call_of("numpy") + "|"
                + "|".join(word(name) + _CALLED_OR_ALIASED for name in sorted(SHARING_NAMES))
                + "|" + LEGACY_CONSTRUCTOR + _CALLED_OR_ALIASED)

#: TCL112's list: `[x] *` or `* [x]` (parentheses and gaps allowed between), not `**`/`*=`.
#: A `*` that multiplies (not `**`, not an unpacking `f(*[x])`/`[a, *[x]]`, right after an opener, `,`, `:` or `=`
#: or one space after one: more spaces are a superset).
_TIMES = r"\*(?<![*]\*)(?<!\*\*)(?<![(,\[{:=]\*)(?<![(,\[{:=] \*)"
LIST_TIMES = r"\](?:" + GAP + r"\))*" + GAP + r"\*(?![*=])|" + _TIMES + GAP + r"(?:\(" + GAP + r")*\["
#: TCL112's assignment: `= [x] * n` (an element with at most one level of brackets inside) or `= n * [x]`
#: (`n` on the line of the `=`, without `=`); the rule reports only lists of that shape.
#: Not an element that is a constant alone (`[None] * n`, `[0] * n`, `['a'] * n`: never a tensor; most `[x] * n` in
#: torch); GAP before it is made to end at a non-space, so backtracking cannot put a space in front of the constant.
_NOT_A_CONSTANT_ELEMENT = (GAP + r"(?![\s#\\])(?!(?:None|True|False|-?\d[\w.]*|[bBrRuUfF]{0,2}(?:'[^'\\\r\n]*'"
                           + r'|"[^"\\\r\n]*"))[ \t]*\])')
LIST_TIMES_ASSIGNED = ("=(?<![=!<>]=)" + GAP + r"(?:\(" + GAP + r")*\[" + _NOT_A_CONSTANT_ELEMENT
                       + r"(?:[^\[\]]|\[[^\[\]]*\])*\]" + GAP + r"(?:\)" + GAP + r")*\*(?![*=])"
                       + r"|=(?<![=!<>]=)[^=\r\n]*?" + _TIMES + GAP + r"(?:\(" + GAP + r")*\["
                       + _NOT_A_CONSTANT_ELEMENT)
#: TCL114's intent, as text: names that say snapshot (rules/_alias.SNAPSHOT_NAME: the word starts the name or
#: one of its `_` parts) and the last word of a history container's name (rules/_alias.HISTORY_NAME).
SNAPSHOT_WORDS = ("best", "old", "prev", "init", "before", "snapshot", "saved", "backup")
#: What such a name is assigned (TCL114): a name or attribute chain, maybe with `.data` or `.detach()`, maybe in
#: parentheses, and nothing else on its line; never `True`/`False`/`None` (constants: `initialized = True`), and a
#: closing parenthesis only after an opening one (`f(init=x)` is a keyword argument, not an assignment).
_REFERENCE = (r"(?!(?:True|False|None)\b)" + NAME + r"(?:" + GAP + DOT + NAME + r")*(?:" + GAP + DOT + r"detach"
              + GAP + r"\(" + GAP + r"\))?")
SNAPSHOT_VALUE = ("=(?!=)" + GAP + r"(?:\(" + GAP + _REFERENCE + GAP + r"\)|" + _REFERENCE + r")[ \t]*(?:[#;\r\n]|\Z)")
HISTORY_WORDS = ("hist", "history", "histories", "log", "logs", "record", "records", "trace", "traces", "traj",
                 "trajectory", "trajectories", "snapshot", "snapshots", "tracked")
#: Names that say a value is kept to be compared with later ones (a snapshot), not to follow them: a word of
#: SNAPSHOT_WORDS starts the name or one of its `_` parts.
SNAPSHOT_NAME = re.compile(r"(?:^|_)(?:best|old|prev|previous|init|initial|before|snapshot|saved|backup)(?:_|\d|$)"
                           r"|^(?:best|old|prev|init)[A-Za-z]")
#: Names of containers that record values over time (a history or a log): the name's last word.
HISTORY_NAME = re.compile(r"(?:^|_)(?:%s)$" % "|".join(HISTORY_WORDS))
#: Names compared and rebound in a "best so far" test.
BEST_NAME = re.compile(r"best|lowest|highest")
#: TCL114's intent as text, one alternative per literal (shapes.py's ``kept`` tokens, a superset): a snapshot-named
#: name assigned a reference, or a snapshot-named container (`old_params[k] = p`, `saved.append(w)`); a history
#: container's `[` or `.append`; a comparison with a best/lowest/highest operand (`if acc > best_acc:`, whatever
#: `best_acc` is rebound to).
#: A subscript stored into (`[k] =`, not `==`): brackets nested up to three deep inside (not counting brackets in
#: strings or comments: a key such as `"]"` is not seen), each alternative unambiguous, so a failing search is linear.
_SUBSCRIPT = r"\[(?:[^\[\]]|\[(?:[^\[\]]|\[[^\[\]]*\])*\])*\]"
STORED_INTO = _SUBSCRIPT + GAP + "=(?!=)"
_BEST_OPERAND = r"(?:" + NAME + GAP + DOT + r")*" + IDENTIFIER_CHAR + r"*(?:best|lowest|highest)"
#: HISTORY_WORDS as stems and endings; a stem starts the name or one of its `_` parts (`catalog` is no `log`).
_HISTORY_STEMS = (("hist", "(?:ory|ories)?"), ("log", "s?"), ("record", "s?"), ("trace", "s?"),
                  ("traj", "(?:ectory|ectories)?"), ("tracked", ""))
_REST_OF_NAME = IDENTIFIER_CHAR + "*(?!" + IDENTIFIER_CHAR + ")"
KEPT_WITH_INTENT = "|".join(
    [w + r"(?<![A-Za-z0-9]" + w + r")" + _REST_OF_NAME + GAP + r"(?:" + SNAPSHOT_VALUE + "|" + STORED_INTO + "|" + DOT + r"append)"
     for w in SNAPSHOT_WORDS]
    + [stem + r"(?<![A-Za-z0-9]" + stem + ")" + ending + GAP + r"(?:" + DOT + r"append|" + STORED_INTO + ")"
       for stem, ending in _HISTORY_STEMS]
    + [w + _REST_OF_NAME + GAP + r"[<>]" for w in ("best", "lowest", "highest")]
    + [op + r"=?" + GAP + _BEST_OPERAND for op in ("<", ">")])

#: `.backward(` on a receiver that may be a plain name (TCL110), literal-first from `backward` (a regex that found
#: the name's start from the line's was ~40x slower): the name before the dot, when it has at most
#: _NAME_SEEN characters, is not an attribute (`self.loss.backward(`: no `.` before it); a longer name, a `)` (a
#: parenthesised name, or a call: a superset) or a space or line break before the dot passes; `()`, `]` or
#: anything else before it (prose: "call ``.backward()``") does not.
_NAME_SEEN = 24
_IDENTIFIER_OR_DOT = r"[^\x00-\x2d/:-@\[-^`{-\x7f\s]"
NAMED_BACKWARD = ("backward(?<=\\.backward)(?:" + "|".join(
    "(?<=" + IDENTIFIER_CHAR * n + r"\.backward)(?<!" + _IDENTIFIER_OR_DOT + IDENTIFIER_CHAR * n + r"\.backward)"
    for n in range(1, _NAME_SEEN + 1))
    + "|(?<=" + IDENTIFIER_CHAR * (_NAME_SEEN + 1) + r"\.backward)"
    + r"|(?<=[)\s]\.backward)(?<!\(\)\.backward))" + GAP + r"\("
    + "|" + r"\.(?=[ \t\f\\])" + DOT[2:] + call_of("backward"))

TRIGGERS: Dict[str, Tuple[str, ...]] = {
    # `tensor(` with a first argument that is not a literal, or an import of `tensor` under another name.
    "TCL101": (TENSOR_OF_NAME + "|" + TENSOR_IMPORT,),
    "TCL102": (call_of(word("new_tensor")),),
    # `clone` and `.detach(` right after a call's closing parenthesis (`x.clone().detach()`, `torch.clone(x).detach()`,
    # `c(x).detach()` with `from torch import clone as c`).
    "TCL103": (word("clone") + r"\b", DETACH_AFTER_CALL),
    # `.data` followed by an in-place method, a subscript or an assignment; or `.data` passed to `f_(`.
    # (The first trigger, `.data`, is implied by the second: it only makes the check cheap.)
    "TCL104": (DOT + "data",
               DOT + "data" + GAP + r"(?:\)" + GAP + r")*"
               r"(?:" + DOT + call_of(r"\w+_") + r"|\[|=[^=]|(?:\*\*|//|>>|<<|[-+*/@%&|^])=)"
               r"|" + call_of(r"_(?<=\w_)") + r"[^()]*?" + DOT + "data" + GAP + "[,)]",
               GRAPH_LIVE_WORDS),
    # only training code is checked
    "TCL105": (word("deepcopy") + r"\b", call_of(word("backward")) + "|" + call_of(word("step"))),
    # `.copy_(` right after a `*_like(...)` call without nested parentheses (comments and closing parentheses
    # may come between), or one of the three imported under another name.
    "TCL106": (DOT + call_of("copy_"),
               r"_like" + GAP + r"\([^()]*\)(?:\)|" + GAP[3:-2] + r")*" + DOT + call_of("copy_") + "|"
               + "|".join(word(name) + r"_like\s+as\b" for name in ("empty", "zeros", "ones"))),
    # `tensor(`/`as_tensor(` whose argument starts with a name (perhaps inside `[`/`(`), or an import of either.
    "TCL107": (TENSORS_CALL + "|" + TENSOR_ALIAS,),
    # `copy.copy(`, or `copy` imported from `copy` (not `deepcopy`), or `import copy as c`.
    "TCL108": (COPY_CALL + "|" + COPY_ALIAS,),
    # `state_dict(` and a training step (`backward(`/`step(`) in the same file.
    "TCL109": (call_of(word("state_dict")), STEP_CALL),
    # `name.backward(` (a plain name, maybe parenthesised, is what TCL110 follows: NAMED_BACKWARD), and an
    # accumulation: `+=`, `.append(`, or a `+` before a name, maybe parenthesised (the rule's `total = total + loss`).
    "TCL110": (NAMED_BACKWARD,
               r"\+=|" + call_of(word("append")) + r"|\+(?!=)" + GAP + r"(?:\(" + GAP + ")*" + IDENTIFIER_CHAR),
    # a conversion method called somewhere, then one at the start of a line after a dotted name.
    "TCL111": (CONVERSION_CALL, CONVERSION_STATEMENT),
    # a list multiplied, an in-place write, and a list of one multiplied in an assignment.
    "TCL112": (LIST_TIMES, IN_PLACE_WRITE, LIST_TIMES_ASSIGNED),
    # a numpy bridge (`.numpy(`, `from_numpy`, `as_tensor`, `asarray`) and an in-place write
    # (`Tensor(`: the legacy constructors, `torch.FloatTensor(a)`)
    "TCL113": (NUMPY_BRIDGE, IN_PLACE_WRITE),
    # a tensor kept by reference with intent (a snapshot name assigned, a snapshot- or history-named container
    # stored into or appended to, a "best so far" comparison), then an in-place write (or a step)
    "TCL114": (KEPT_WITH_INTENT, IN_PLACE_WRITE),
    # `.detach`/`.data`, one assigned (of a name or attribute chain, parenthesised anywhere: `y = (t).detach()`),
    # and an in-place write
    "TCL115": (DOT + "(?:detach|data)",
               "=(?!=)" + GAP + r"(?:\(" + GAP + r")*" + NAME + r"(?:" + GAP + r"\))*(?:" + GAP + DOT + NAME
               + r"(?:" + GAP + r"\))*)*?" + GAP + DOT + "(?:detach|data)", IN_PLACE_WRITE),
    # a creation call (or an alias import of one) and a conversion (`.to(`, `.cuda(`, `.float(` ...) after a call.
    # (the conversion first: one pass over the text, where CREATION_CALL makes 9)
    "TCL116": (CAST_AFTER_CALL, CREATION_CALL),
    # a conversion call, and a call's closing parenthesis followed by `.detach(`.
    "TCL117": (CAST_CALL, DETACH_AFTER_CALL),
    # `.clone(` and a conversion call right after a call.
    "TCL118": (DOT + call_of(word("clone")), CAST_AFTER_CALL),
}
# TCL119 reports the writes TCL104 looks for, in graph-free code: the same writes, wherever a graph may be.
TRIGGERS["TCL119"] = TRIGGERS["TCL104"][:2]
# an in-place method called on a subscript (`h[idx].zero_()`): TCL120 reports it where the index is advanced.
TRIGGERS["TCL120"] = (INDEXED_IN_PLACE,)

RULE_CODES = tuple(TRIGGERS)
#: Opt-in rules (as ruff's rules outside its default selection): not enabled unless selected by `ALL` or by
#: their full code (`select`/`extend-select`); a prefix such as `TCL1` does not enable them (ruff's
#: `explicit-preview-rules`), so a family selection never brings their volume in. A prefix does ignore them.
OPT_IN_CODES = ("TCL119",)
#: The default selection: every rule but the opt-in ones.
DEFAULT_CODES = tuple(code for code in RULE_CODES if code not in OPT_IN_CODES)

# Meta codes: reported about a file rather than by a rule; never silenced by --select/--ignore.
SYNTAX_ERROR_CODE = "TCL001"
READ_ERROR_CODE = "TCL002"
INTERNAL_ERROR_CODE = "TCL003"
TIMEOUT_CODE = "TCL004"
META_CODES: Dict[str, str] = {
    SYNTAX_ERROR_CODE: "syntax error, or a file that cannot be decoded or is nested too deeply to parse",
    READ_ERROR_CODE: "file cannot be read",
    INTERNAL_ERROR_CODE: "failed to lint: an internal error or a parser crash (please report it)",
    TIMEOUT_CODE: "file took longer than the per-file time budget (--file-timeout)",
}

# Names of the meta codes, as rules have (SARIF's rule names, --statistics).
META_NAMES: Dict[str, str] = {
    SYNTAX_ERROR_CODE: "syntax-error",
    READ_ERROR_CODE: "unreadable-file",
    INTERNAL_ERROR_CODE: "failed-to-lint",
    TIMEOUT_CODE: "file-timeout",
}

ALL_CODES = tuple(META_CODES) + RULE_CODES


def severity(code: str) -> str:
    """One severity for every output format: a file that could not be linted is an error, a finding a warning."""
    return "error" if code in META_CODES else "warning"


@lru_cache(maxsize=None)
def _compiled(code: str, as_bytes: bool) -> Tuple[Trigger, ...]:
    return tuple(compile_trigger(t, as_bytes) for t in TRIGGERS[code])


def may_match(code: str, source: Union[str, bytes], memo: Optional[Dict[Trigger, bool]] = None) -> bool:
    """The prefilter of one rule: False means it cannot report anything in ``source``. ``memo``: the
    answers of the triggers already searched in ``source`` (rules share some)."""
    return all(t.search(source, memo) for t in _compiled(code, isinstance(source, bytes)))


def active_codes(source: Union[str, bytes], codes: Iterable[str] = RULE_CODES) -> FrozenSet[str]:
    """The prefilter's answer for a file: the codes among ``codes`` whose rule may report in ``source``."""
    memo: Dict[Trigger, bool] = {}
    return frozenset(code for code in codes if may_match(code, source, memo))


def may_match_any(source: Union[str, bytes]) -> bool:
    return any(may_match(code, source) for code in RULE_CODES)
