"""The backend yaml of an out-of-tree backend (torchgen.gen_backend_stubs' input), and its lowering.

`lower_backend_yaml` reads the composed yaml tree the way torchgen 2.13's
`parse_backend_yaml` reads the loaded dict: the same keys, the same defaults
and the same type checks. Instead of stopping at the first problem it records
each one at the span that shows it, and it keeps the position of every op
listed. Resolving the op names against native_functions.yaml (kernel names,
backend indices) is `model.backend_resolve`'s job.

What torchgen does with each key, in the order it reads them:

- `backend` (required, non-null), `class_name` (optional), `cpp_namespace`
  (required, non-null);
- `use_out_as_primary`, `device_guard`: bools, default false;
- `supported`, `symint`: lists, null meaning empty; `autograd`: a list (null
  is rejected); `full_codegen`: anything `list.extend` takes, appended to
  `supported`; `non_native`, `ir_gen`: read and ignored (gen_lazy_tensor's);
- any other key is rejected. torchgen's message lists `extra_headers` as
  supported, but it never reads it, so a file with that key is rejected too.
"""

from __future__ import annotations

from collections.abc import Callable

from ..diagnostics import Diagnostic, Severity, diag
from ..frozen import record
from ..suggest import did_you_mean
from ..syntax.locate import ScalarText
from ..syntax.nodes import YMap, YNode, YScalar, YSeq
from ..text import Span
from .cpp_names import identifier_problem, is_plain_identifier
from .schema import OperatorName
from .schema_parser import parse_operator_name

# Keys gen_backend_stubs reads, in the order it reads them.
READ_KEYS = ("backend", "class_name", "cpp_namespace", "use_out_as_primary", "device_guard", "supported",
             "symint", "autograd", "full_codegen", "non_native", "ir_gen")
# The list torchgen prints when it rejects a key (it names extra_headers, which it never reads).
TORCHGEN_LISTED_KEYS = ("backend", "class_name", "cpp_namespace", "extra_headers", "supported", "autograd",
                        "full_codegen", "non_native", "ir_gen", "symint")

MAX_NAMESPACE_LEVELS = 2
# The per-op options of pytorch#172539's proposed gen_backend_stubs (read only with `--experimental`): an item
# under supported/autograd may be a mapping of the op's name (no value) and these keys beside it.
PROPOSAL_OPTIONS = ("structured", "ext_structured_meta", "device_guard")
PROPOSAL = "pytorch#172539's proposed gen_backend_stubs"


@record
class Setting:
    """A scalar setting: its value (None when absent or null) and where the key and value are."""

    value: object
    key: Span | None
    span: Span | None
    # "absent", "scalar", "list" or "mapping"
    kind: str = "absent"

    @property
    def present(self) -> bool:
        return self.kind != "absent"

    @property
    def is_null(self) -> bool:
        return self.kind == "scalar" and self.value is None

    @property
    def where(self) -> Span | None:
        """The value's span, or the key's when the value is null (an empty value has no useful span)."""
        return self.key if self.is_null or self.span is None else self.span


ABSENT = Setting(None, None, None)


@record
class ListedOp:
    """One item of an op list (supported, full_codegen, autograd, symint, ir_gen) and where it is."""

    section: str
    span: Span
    # The item as written when it is a string, else None.
    text: str | None
    # The parsed op name when `text` is a valid one (it must print back as written, as torchgen requires).
    name: OperatorName | None
    # "scalar", "list" or "mapping": torchgen can hash only scalars (the symint list is made a set).
    kind: str = "scalar"
    # The proposal's per-op options (PROPOSAL_OPTIONS; only with --experimental), as its generator reads them:
    # any value but null, false, 0 and '' is true; device_guard None: the yaml's device_guard.
    structured: bool = False
    define_meta: bool = False
    device_guard: bool | None = None


@record
class BackendYaml:
    span: Span
    backend: Setting
    class_name: Setting
    cpp_namespace: Setting
    use_out_as_primary: bool
    device_guard: bool
    supported: tuple[ListedOp, ...]
    full_codegen: tuple[ListedOp, ...]
    autograd: tuple[ListedOp, ...]
    symint: tuple[ListedOp, ...]
    ir_gen: tuple[ListedOp, ...]
    # Every top-level key as written (a string) and its span, in file order.
    keys: tuple[tuple[str, Span], ...]
    # Where a missing key is reported: the first key of the mapping.
    anchor: Span
    # Read as pytorch#172539's proposed gen_backend_stubs reads it (`opgen generate-backend --experimental`).
    # No default: a caller that forgets it would silently read the other format.
    experimental: bool

    @property
    def forward(self) -> tuple[ListedOp, ...]:
        """What torchgen registers to the backend key: supported, then full_codegen (it extends one with the other)."""
        return self.supported + self.full_codegen

    @property
    def generates(self) -> bool:
        """torchgen parses the backend key and generates code only when supported + full_codegen is not empty."""
        return bool(self.supported or self.full_codegen)

    def key_span(self, key: str) -> Span | None:
        return next((span for k, span in self.keys if k == key), None)


def _kind(node: YNode) -> str:
    return "list" if isinstance(node, YSeq) else "mapping" if isinstance(node, YMap) else "scalar"


def _shown(node: YNode) -> str:
    if isinstance(node, YScalar):
        return "null" if node.value is None else repr(node.text) if isinstance(node.value, str) else node.text
    return "a list" if isinstance(node, YSeq) else "a mapping"


class _Reader:
    """Takes the top-level keys out of the mapping, collecting diagnostics."""

    def __init__(self, root: YMap, *, experimental: bool) -> None:
        self.root = root
        self.experimental = experimental
        self.diagnostics: list[Diagnostic] = []
        self.pairs: dict[str, tuple[YNode, YNode]] = {}
        for key, value in root.pairs:
            if isinstance(key, YScalar) and isinstance(key.value, str):
                self.pairs.setdefault(key.value, (key, value))
        # Where to report a key that is missing: the first key of the mapping.
        self.anchor = root.pairs[0][0].span if root.pairs else Span.point(root.span.start_line, root.span.start_col)

    def add(self, code: str, span: Span, message: str, *, warning: bool = False,
            data: tuple[tuple[str, str], ...] = ()) -> None:
        self.diagnostics.append(diag(code, span, message, severity=Severity.WARNING if warning else None, data=data))

    def setting(self, key: str) -> Setting:
        pair = self.pairs.get(key)
        if pair is None:
            return ABSENT
        k, v = pair
        value = v.value if isinstance(v, YScalar) else None
        return Setting(value, k.span, v.span, _kind(v))

    def node(self, key: str) -> tuple[Span, YNode] | None:
        pair = self.pairs.get(key)
        return None if pair is None else (pair[0].span, pair[1])


def _op_item(section: str, node: YNode, in_sequence: bool = True) -> ListedOp:
    if isinstance(node, YScalar) and node.text == "" and node.style is None and in_sequence \
            and node.span.start_col > 0:
        # An empty item ('-' and nothing else): libyaml places it just after the dash; show the dash.
        s = node.span
        return ListedOp(section, Span(s.start_line, s.start_col - 1, s.end_line, s.end_col), None, None)
    if isinstance(node, YScalar) and isinstance(node.value, str):
        name, issues = parse_operator_name(node.value)
        if name is not None and (issues or str(name) != node.value):
            name = None
        return ListedOp(section, node.span, node.value, name)
    if isinstance(node, YMap) and node.pairs:
        return ListedOp(section, node.pairs[0][0].span, None, None, "mapping")
    return ListedOp(section, node.span, None, None, _kind(node))


def _char_items(section: str, node: YScalar) -> tuple[ListedOp, ...]:
    """A string where torchgen wants a list: list.extend takes its characters, one op name each."""
    where = ScalarText(node)
    text = node.value if isinstance(node.value, str) else ""
    out = []
    for i, ch in enumerate(text):
        name, issues = parse_operator_name(ch)
        valid = name is not None and not issues and str(name) == ch
        out.append(ListedOp(section, where.span(i, i + 1), ch, name if valid else None))
    return tuple(out)


def _op_name_problem(text: str) -> str:
    """Why a string is not a valid op name, in torchgen's terms."""
    name, issues = parse_operator_name(text)
    if issues:
        return issues[0].message
    if name is not None and str(name) != text:
        return f"it reads as '{name}', which does not print back as '{text}'"
    return "it is not an operator name"


def _check_item(r: _Reader, item: ListedOp, node: YNode) -> None:
    """Items of supported, full_codegen and autograd: torchgen parses each as an op name."""
    where = f"'{item.section}'"
    if item.kind == "mapping" and isinstance(node, YMap) and node.pairs:
        first_key, first_value = node.pairs[0]
        if isinstance(first_key, YScalar) and first_key.value == "func" and isinstance(first_value, YScalar) \
                and isinstance(first_value.value, str):
            op = first_value.value
            r.add("OPG508", item.span, f"an op under {where} must be its name alone, written '- {op}'; torchgen "
                                       "does not read options here and crashes on a mapping (AttributeError)",
                  data=(("replace", op),))
            return
        shown = first_key.value if isinstance(first_key, YScalar) else "?"
        proposed = any(isinstance(k, YScalar) and k.value in PROPOSAL_OPTIONS for k, _ in node.pairs)
        r.add("OPG508", item.span, f"an op under {where} must be its name alone, written '- {shown}'; an external "
                                   "backend's kernels cannot be structured or carry options, and torchgen crashes on "
                                   "a mapping here (AttributeError: 'dict' object has no attribute 'endswith')"
                                   + ("; per-op 'structured', 'ext_structured_meta' and 'device_guard' are only "
                                      f"{PROPOSAL}'s, which `opgen generate-backend --experimental` follows"
                                      if proposed else ""))
        return
    if item.text is None:
        shown = "null (an empty item)" if isinstance(node, YScalar) and node.value is None else _shown(node)
        r.add("OPG508", item.span, f"an op under {where} must be an op name such as 'add.Tensor', not {shown}; "
                                   "torchgen crashes on this item")
        return
    if item.name is None:
        r.add("OPG509", item.span, f"'{item.text}' under {where} is not a valid operator name: "
                                   f"{_op_name_problem(item.text)}")


def _check_symint_item(r: _Reader, item: ListedOp, node: YNode) -> None:
    if item.kind != "scalar":
        r.add("OPG508", item.span, f"a symint item must be an op name, not {_shown(node)}; torchgen makes a set of "
                                   "these items and crashes on a list or mapping (TypeError: unhashable type)")
    elif item.text is None:
        r.add("OPG522", item.span, f"a symint item must be an op name; {_shown(node)} matches no listed op, so "
                                   "torchgen ignores it")
    elif item.name is None:
        r.add("OPG522", item.span, f"'{item.text}' is not a valid operator name ({_op_name_problem(item.text)}), "
                                   "so it matches no listed op and torchgen ignores it")


def _check_ir_gen_item(r: _Reader, item: ListedOp, node: YNode) -> None:
    if item.text is None:
        r.add("OPG528", item.span, f"an ir_gen item must be an op name, not {_shown(node)}; gen_backend_stubs "
                                   "ignores ir_gen, but gen_lazy_tensor parses each item as an op name")
    elif item.name is None:
        r.add("OPG528", item.span, f"'{item.text}' is not a valid operator name ({_op_name_problem(item.text)}); "
                                   "gen_backend_stubs ignores ir_gen, but gen_lazy_tensor rejects it")


def _items(r: _Reader, section: str, node: YSeq, check: Callable[[_Reader, ListedOp, YNode], None]
           ) -> tuple[ListedOp, ...]:
    out = []
    for item_node in node.items:
        if r.experimental and section in ("supported", "autograd") and isinstance(item_node, YMap) \
                and item_node.pairs:
            out.append(_option_item(r, section, item_node))
            continue
        item = _op_item(section, item_node)
        check(r, item, item_node)
        out.append(item)
    return tuple(out)


def _truthy(r: _Reader, key: YScalar, value: YNode) -> bool:
    """An option's value as the proposal's generator takes it (Python's truth of the loaded value); a warning when
    it is not a bool, since `structured: true.` is true there and so is `structured: 'false'`."""
    loaded: object = value.value if isinstance(value, YScalar) else bool(getattr(value, "pairs", None)
                                                                           or getattr(value, "items", None))
    if not isinstance(loaded, bool):
        r.add("OPG517", value.span if not (isinstance(value, YScalar) and value.value is None) else key.span,
              f"'{key.value}' should be true or false, not {_shown(value)}; {PROPOSAL} does not check it and takes "
              f"it as {'true' if loaded else 'false'}", warning=True)
    return bool(loaded)


def _option_item(r: _Reader, section: str, node: YMap) -> ListedOp:
    """`- sub.out:` with `structured: true` (and ext_structured_meta, device_guard) beside it: one op name as a key
    and the proposal's options, as its create_backend_index reads a dict item."""
    names = [(k, v) for k, v in node.pairs if not (isinstance(k, YScalar) and k.value in PROPOSAL_OPTIONS)]
    first = node.pairs[0][0].span
    if len(names) != 1 or not isinstance(names[0][0], YScalar) or not isinstance(names[0][0].value, str):
        shown = ", ".join(repr(k.value) if isinstance(k, YScalar) else "?" for k, _ in names) or "none"
        r.add("OPG508", first, f"an op with options under '{section}' is a mapping of exactly one op name (no value) "
                               f"and the options {', '.join(PROPOSAL_OPTIONS)} beside it; its op names here: {shown} "
                               f"({PROPOSAL}: Expected one op name)")
        return ListedOp(section, first, None, None, "mapping")
    key = names[0][0]
    assert isinstance(key, YScalar)  # (checked above; for mypy)
    item = _op_item(section, key, in_sequence=False)
    _check_item(r, item, key)
    options = {k.value: (k, v) for k, v in node.pairs if isinstance(k, YScalar) and k.value in PROPOSAL_OPTIONS}
    flags = {name: _truthy(r, k, v) for name, (k, v) in options.items()}
    structured, define_meta = flags.get("structured", False), flags.get("ext_structured_meta", False)
    if define_meta and not structured:
        r.add("OPG516", options["ext_structured_meta"][0].span,
              f"'ext_structured_meta' needs 'structured: true' on '{key.value}': a meta function of the backend's own "
              f"belongs to a structured kernel ({PROPOSAL}: Custom meta functions require a structured kernel)")
    return ListedOp(section, item.span, item.text, item.name, item.kind, structured, define_meta and structured,
                    flags.get("device_guard"))


def _list_section(r: _Reader, section: str, *, null_ok: bool,
                  check: Callable[[_Reader, ListedOp, YNode], None]) -> tuple[ListedOp, ...]:
    """supported, symint (null means empty) and autograd (null is rejected)."""
    found = r.node(section)
    if found is None:
        return ()
    key, node = found
    if isinstance(node, YSeq):
        return _items(r, section, node, check)
    if isinstance(node, YScalar) and node.value is None:
        if null_ok:
            return ()
        r.add("OPG506", key, f"'{section}:' has no value (null), but torchgen requires a list here: write "
                             f"'{section}: []' or remove the key")
        return ()
    hint = ""
    if isinstance(node, YScalar) and isinstance(node.value, str):
        hint = f"; write it as a list item: '{section}:' then '- {node.value}' on the next line"
    r.add("OPG506", node.span, f"'{section}' must be a list of op names, but got {_shown(node)}{hint}")
    return ()


def _full_codegen(r: _Reader) -> tuple[ListedOp, ...]:
    """full_codegen: torchgen does `supported.extend(full_codegen)`, so anything iterable gets in."""
    found = r.node("full_codegen")
    if found is None:
        return ()
    key, node = found
    if isinstance(node, YSeq):
        return _items(r, "full_codegen", node, _check_item)
    if isinstance(node, YScalar) and isinstance(node.value, str):
        r.add("OPG527", node.span, f"'full_codegen' should be a list of op names; torchgen takes the string "
                                   f"{node.text!r} as the list of its characters (each one an op name), and "
                                   "gen_lazy_tensor rejects it")
        return _char_items("full_codegen", node)
    if isinstance(node, YMap):
        r.add("OPG527", node.span, "'full_codegen' should be a list of op names; torchgen takes the keys of this "
                                   "mapping as the op names and ignores their values, and gen_lazy_tensor rejects it")
        items = []
        for k, _ in node.pairs:
            item = _op_item("full_codegen", k, in_sequence=False)
            _check_item(r, item, k)
            items.append(item)
        return tuple(items)
    where = key if isinstance(node, YScalar) and node.value is None else node.span
    r.add("OPG506", where, f"'full_codegen' must be a list of op names, but got {_shown(node)}; torchgen crashes on "
                           "it (TypeError: not iterable)" + ("; write 'full_codegen: []' or remove the key"
                                                             if isinstance(node, YScalar) and node.value is None else ""))
    return ()


def _ir_gen(r: _Reader) -> tuple[ListedOp, ...]:
    found = r.node("ir_gen")
    if found is None:
        return ()
    _, node = found
    if isinstance(node, YSeq):
        return _items(r, "ir_gen", node, _check_ir_gen_item)
    if not (isinstance(node, YScalar) and node.value is None):
        r.add("OPG527", node.span, f"'ir_gen' should be a list of op names, not {_shown(node)}; gen_backend_stubs "
                                   "ignores it, but gen_lazy_tensor rejects it")
    return ()


def _bool_setting(r: _Reader, key: str) -> bool:
    s = r.setting(key)
    if not s.present:
        return False
    if s.kind == "scalar" and isinstance(s.value, bool):
        return s.value
    shown = "null" if s.is_null else repr(s.value) if s.kind == "scalar" else f"a {s.kind}"
    r.add("OPG505", s.where or r.anchor, f"'{key}' must be true or false, but got {shown} (torchgen: You must "
                                         f"provide either True or False for {key})")
    return False


_UNNOTICED = "; torchgen does not notice while no ops are listed under supported or full_codegen"


def _cpp_namespace(r: _Reader, s: Setting, generates: bool) -> None:
    """A string of at most two C++ identifiers joined by '::' (torchgen's NamespaceHelper splits it; the proposal's
    generator takes any number)."""
    if not s.present or s.is_null:
        return
    where = s.where or r.anchor
    if s.kind != "scalar" or not isinstance(s.value, str):
        shown = repr(s.value) if s.kind == "scalar" else f"a {s.kind}"
        r.add("OPG504", where, f"'cpp_namespace' must be a C++ namespace such as 'torch_xla' or 'at::native', not "
                               f"{shown}" + ("; torchgen crashes on it (AttributeError: no attribute 'split')"
                                             if generates else _UNNOTICED), warning=not generates)
        return
    parts = s.value.split("::")
    if len(parts) > MAX_NAMESPACE_LEVELS and not r.experimental:
        r.add("OPG504", where, f"'cpp_namespace' has {len(parts)} levels ('{s.value}'), but the codegen supports at "
                               f"most {MAX_NAMESPACE_LEVELS} (torchgen: Codegen doesn't support more than "
                               f"{MAX_NAMESPACE_LEVELS} level(s) of custom namespace)"
                               + ("" if generates else _UNNOTICED), warning=not generates)
        return
    _identifiers(r, where, "cpp_namespace", s.value, parts)


def _class_name(r: _Reader, s: Setting) -> None:
    if not s.present or s.is_null:
        return
    where = s.where or r.anchor
    if s.kind != "scalar" or not isinstance(s.value, str):
        shown = repr(s.value) if s.kind == "scalar" else f"a {s.kind}"
        r.add("OPG540", where, f"'class_name' must be a C++ class name, not {shown}; torchgen pastes it into the "
                               "generated C++ as it is")
        return
    _identifiers(r, where, "class_name", s.value, [s.value])


def _identifiers(r: _Reader, where: Span, what: str, value: str, parts: list[str]) -> None:
    """An error for a part that is no C++ identifier (torchgen would paste a line break, `;`, ... into the C++);
    a warning for one that is an identifier only to GCC and Clang (spaces around it, `$`, non-ASCII letters)."""
    for part in parts:
        problem = identifier_problem(part)
        if problem is not None:
            r.add("OPG540", where, f"'{what}: {value}': {problem}; torchgen pastes it into the generated C++ as it "
                                   "is, so the C++ would not compile or would hold code of the yaml's choosing")
            return
    odd = next((p for p in parts if not is_plain_identifier(p)), None)
    if odd is not None:
        r.add("OPG524", where, f"'{what}: {value}' has {odd!r}, an identifier only to some compilers (spaces around "
                               "it, '$' or non-ASCII letters); torchgen accepts it")


def _unexpected_keys(r: _Reader) -> None:
    for key, _ in r.root.pairs:
        if isinstance(key, YScalar) and isinstance(key.value, str) and key.value in READ_KEYS:
            continue
        shown = key.value if isinstance(key, YScalar) else "?"
        if shown == "extra_headers":
            r.add("OPG507", key.span, "'extra_headers' is not read by torchgen 2.13's gen_backend_stubs: although its "
                                      "message names the key as supported, it rejects a file that has it "
                                      "(contains unexpected keys: extra_headers)")
            continue
        hint, data = did_you_mean(str(shown), READ_KEYS)
        r.add("OPG507", key.span, f"unexpected key '{shown}': gen_backend_stubs accepts only "
                                  f"{', '.join(READ_KEYS)}{hint} (torchgen: contains unexpected keys: {shown})",
              data=data)


def _unhashable_keys(node: YNode, out: list[Diagnostic]) -> None:
    """PyYAML (and so torchgen) cannot load a mapping whose key is a list or a mapping."""
    if isinstance(node, YSeq):
        for item in node.items:
            _unhashable_keys(item, out)
    elif isinstance(node, YMap):
        for k, v in node.pairs:
            if not isinstance(k, YScalar):
                out.append(diag("OPG001", k.span, "a mapping key that is a list or a mapping: PyYAML, and so "
                                                  "torchgen, cannot load it (found unhashable key)"))
            _unhashable_keys(k, out)
            _unhashable_keys(v, out)


def lower_backend_yaml(root: YNode | None, *, experimental: bool
                       ) -> tuple[BackendYaml | None, tuple[Diagnostic, ...]]:
    """The backend yaml's model, and every problem torchgen's parse_backend_yaml would see in its structure
    (experimental: as pytorch#172539's proposed parse_backend_yaml reads it, per-op options included)."""
    if root is None:
        return None, (diag("OPG500", Span.point(0, 0), "the backend yaml is empty; it must be a mapping with at "
                                                       "least 'backend:' and 'cpp_namespace:' (torchgen: Expected "
                                                       "yaml_values to be a dict)"),)
    if not isinstance(root, YMap):
        shown = "a list" if isinstance(root, YSeq) else f"the scalar {_shown(root)}"
        first = Span.on_line(root.span.start_line, root.span.start_col, root.span.start_col + 1)
        return None, (diag("OPG500", first, f"a backend yaml must be a mapping with keys such as 'backend:', "
                                            f"'cpp_namespace:' and 'supported:', not {shown} (torchgen: Expected "
                                            "yaml_values to be a dict)"),)
    r = _Reader(root, experimental=experimental)
    unhashable: list[Diagnostic] = []
    _unhashable_keys(root, unhashable)
    r.diagnostics.extend(unhashable)
    keys = tuple((k.value, k.span) for k, _ in root.pairs if isinstance(k, YScalar) and isinstance(k.value, str))
    anchor = r.anchor

    backend = r.setting("backend")
    if not backend.present or backend.is_null:
        r.add("OPG501", backend.key or anchor, "no value for 'backend:'; give the dispatch key of the backend, "
                                               "e.g. 'backend: XLA' or 'backend: PrivateUse1' (torchgen: You must "
                                               "provide a value for \"backend\")")
    class_name = r.setting("class_name")
    cpp_namespace = r.setting("cpp_namespace")
    if not cpp_namespace.present or cpp_namespace.is_null:
        r.add("OPG503", cpp_namespace.key or anchor, "no value for 'cpp_namespace:'; give the C++ namespace of the "
                                                     "kernels, e.g. 'cpp_namespace: torch_xla' (torchgen: You must "
                                                     "provide a value for \"cpp_namespace\")")
    use_out_as_primary = _bool_setting(r, "use_out_as_primary")
    device_guard = _bool_setting(r, "device_guard")
    supported = _list_section(r, "supported", null_ok=True, check=_check_item)
    symint = _list_section(r, "symint", null_ok=True, check=_check_symint_item)
    autograd = _list_section(r, "autograd", null_ok=False, check=_check_item)
    full_codegen = _full_codegen(r)
    ir_gen = _ir_gen(r)
    _unexpected_keys(r)

    generates = bool(supported or full_codegen)
    _cpp_namespace(r, cpp_namespace, generates)
    _class_name(r, class_name)
    if not generates:
        where = r.node("supported")
        r.add("OPG523", where[0] if where else anchor,
              "no ops are listed under 'supported' or 'full_codegen', so torchgen generates nothing for this "
              "backend" + (" (the 'autograd' ops are not generated either)" if autograd else ""))

    model = BackendYaml(root.span, backend, class_name, cpp_namespace, use_out_as_primary, device_guard,
                        supported, full_codegen, autograd, symint, ir_gen, keys, anchor, experimental)
    return model, tuple(r.diagnostics)
