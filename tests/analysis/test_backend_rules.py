"""Every rule of backend yaml files (gen_backend_stubs' input): the code, and the line and column it points at.

Each case is a small yaml text resolved against the real native_functions.yaml
(torchgen's packaged copy), the expected code, and a marker: a diagnostic with
that code must start at the marker's first occurrence (or its n-th, when the
marker is a (text, n) pair; None means the start of the file). Whether
torchgen 2.13 rejects each text is checked against torchgen itself in
tests/conformance/test_backend_corpus.py.
"""

from __future__ import annotations

import pytest

from opgen_lsp.diagnostics import CODES, Severity
from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.model.dispatch import DispatchKey
from opgen_lsp.releases import DEFAULT

H = "backend: XLA\ncpp_namespace: torch_xla\n"


@pytest.fixture(scope="module")
def native(native_yaml, tags_yaml):
    tags = TagsParser().parse(tags_yaml.read_text())
    return NativeParser(release=DEFAULT).parse(native_yaml.read_text(), tags.names)


def position(text: str, marker: object) -> tuple[int, int]:
    if marker is None:
        return 0, 0
    word, nth = marker if isinstance(marker, tuple) else (marker, 1)
    at = -1
    for _ in range(nth):
        at = text.index(word, at + 1)
    line = text.count("\n", 0, at)
    return line, at - (text.rfind("\n", 0, at) + 1)


# (id, text, code, marker, rejected by torchgen 2.13)
ERRORS = [
    # the error messages ORACLE.md lists for bad backend yaml
    ("no-backend", "cpp_namespace: torch_xla\nsupported:\n- abs\n", "OPG501", "cpp_namespace"),
    ("null-backend", "backend:\ncpp_namespace: torch_xla\nsupported:\n- abs\n", "OPG501", "backend"),
    ("unknown-backend-key", "backend: NOT_XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\n", "OPG502", "NOT_XLA"),
    ("non-string-backend", "backend: 5\ncpp_namespace: torch_xla\nsupported:\n- abs\n", "OPG502", "5"),
    ("no-cpp-namespace", "backend: XLA\nsupported:\n- abs\n", "OPG503", "backend"),
    ("null-cpp-namespace", "backend: XLA\ncpp_namespace: ~\nsupported:\n- abs\n", "OPG503", "cpp_namespace"),
    ("supported-not-a-list", H + "supported: abs\n", "OPG506", "abs"),
    ("symint-not-a-list", H + "supported:\n- abs\nsymint: abs\n", "OPG506", ("abs", 2)),
    ("autograd-not-a-list", H + "autograd: max_pool2d\n", "OPG506", "max_pool2d"),
    ("unknown-op", H + "supported:\n- abs\n- abs_BAD\n", "OPG509", "abs_BAD"),
    ("unknown-op-under-full-codegen", H + "full_codegen:\n  - mul.Outt\n", "OPG509", "mul.Outt"),
    ("unknown-op-under-autograd", H + "supported:\n- abs\nautograd:\n- max_pool2dd\n", "OPG509", "max_pool2dd"),
    ("namespaced-op", H + "supported:\n- aten::abs\n", "OPG509", "aten::abs"),
    ("op-name-does-not-round-trip", H + "supported:\n- abs.\n", "OPG509", "abs."),
    ("reserved-out-suffix", H + "supported:\n- abs_out\n", "OPG509", "abs_out"),
    ("group-split", H + "supported:\n- add.Tensor\nautograd:\n- add.out\n", "OPG512", "add.out"),
    ("same-op-in-both", H + "supported:\n- abs\nautograd:\n- abs\n", "OPG512", ("abs", 2)),
    ("split-full-codegen", H + "full_codegen:\n- add.Tensor\nautograd:\n- add_.Tensor\n", "OPG512", "add_.Tensor"),
    ("unexpected-key", H + "supported:\n- abs\ninvalid_key: 1\n", "OPG507", "invalid_key"),
    ("extra-headers", H + "extra_headers: [a.h]\nsupported:\n- abs\n", "OPG507", "extra_headers"),
    ("non-string-key", H + "supported:\n- abs\n5: 1\n", "OPG507", "5: 1"),
    ("use-out-as-primary-not-bool", H + "use_out_as_primary: frue\nsupported:\n- abs\n", "OPG505", "frue"),
    ("device-guard-not-bool", H + "device_guard: yes please\nsupported:\n- abs\n", "OPG505", "yes please"),
    ("null-bool", H + "device_guard:\nsupported:\n- abs\n", "OPG505", "device_guard"),
    ("duplicate-backend-key-cpu", "backend: CPU\ncpp_namespace: at\nsupported:\n- abs\n", "OPG510", "CPU"),
    ("duplicate-backend-key-xpu", "backend: XPU\ncpp_namespace: at\nsupported:\n- abs\n", "OPG510", "XPU"),
    ("class-name-not-an-identifier", H + "class_name: My-Functions\nsupported:\n- abs\n", "OPG540", "My-Functions"),
    ("class-name-not-a-string", H + "class_name: 5\nsupported:\n- abs\n", "OPG540", "5"),
    ("empty-cpp-namespace", "backend: XLA\ncpp_namespace: ''\nsupported:\n- abs\n", "OPG540", "''"),
    ("cpp-namespace-with-a-line-break", "backend: XLA\ncpp_namespace: \"at\\n#error INJECTED\"\nsupported:\n- abs\n",
     "OPG540", "\"at"),
    ("empty-yaml", "", "OPG500", None),
    ("only-comments", "# nothing here\n", "OPG500", None),
    ("top-level-list", "- backend: XLA\n- cpp_namespace: torch_xla\n", "OPG500", "-"),
    ("top-level-scalar", "\n\nXLA\n", "OPG500", "XLA"),
    ("duplicate-key", H + "supported:\n- abs\nsupported:\n- neg\n", "OPG004", ("supported", 2)),
    ("duplicate-key-nested", H + "supported:\n- abs\nnon_native:\n- func: a\n  func: b\n", "OPG004", "func: b"),
    ("symint-without-symint", H + "supported:\n- abs\nsymint:\n- abs\n", "OPG513", ("abs", 2)),
    ("symint-without-symint-autograd", H + "supported:\n- neg\nautograd:\n- abs\nsymint:\n- abs\n", "OPG513",
     ("abs", 2)),
    ("wrapper-for-inplace-returning-nothing", H + "supported:\n- _foreach_add.List\n", "OPG514", "_foreach_add.List"),
    ("wrapper-for-mutable-variant", H + "supported:\n- _native_batch_norm_legit_functional\n", "OPG514",
     "_native_batch_norm_legit_functional"),
    ("wrapper-for-out-with-four-outs", H + "supported:\n- _cudnn_rnn_backward\n", "OPG514", "_cudnn_rnn_backward"),
    ("wrapper-under-autograd", H + "supported:\n- abs\nautograd:\n- _foreach_mul.Scalar\n", "OPG514",
     "_foreach_mul.Scalar"),
    # inputs that crash torchgen
    ("op-as-mapping", H + "supported:\n- abs\n- mul.out: {structured: true}\n", "OPG508", "mul.out"),
    ("op-as-func-mapping", H + "supported:\n- func: clone\n  op_api: True\n", "OPG508", "func"),
    ("null-op-item", H + "supported:\n- abs\n-\n", "OPG508", ("-", 2)),
    ("number-op-item", H + "supported:\n- 42\n", "OPG508", "42"),
    ("list-op-item", H + "autograd:\n- [abs, neg]\n", "OPG508", "[abs"),
    ("null-full-codegen", H + "full_codegen:\n", "OPG506", "full_codegen"),
    ("number-full-codegen", H + "full_codegen: 3\n", "OPG506", "3"),
    ("null-autograd", H + "supported:\n- abs\nautograd:\n", "OPG506", "autograd"),
    ("unhashable-symint-item", H + "supported:\n- abs\nsymint:\n- {abs: 1}\n", "OPG508", ("abs", 2)),
    ("cpp-namespace-not-a-string", "backend: XLA\ncpp_namespace: 5\nsupported:\n- abs\n", "OPG504", "5"),
    ("cpp-namespace-three-levels", "backend: XLA\ncpp_namespace: a::b::c\nsupported:\n- abs\n", "OPG504", "a::b::c"),
    ("unhashable-key", H + "supported:\n- abs\nnon_native: {[a]: 1}\n", "OPG001", "[a]"),
    ("bad-autograd-key", "backend: NOT_XLA\ncpp_namespace: torch_xla\nautograd:\n- abs\n", "OPG511", "autograd"),
    ("yaml-syntax", H + "supported:\n\t- abs\n", "OPG001", "\t"),
    ("unsafe-tag", H + "supported:\n- !!python/name:os.system abs\n", "OPG005", "!!python"),
]

# (id, text, code, marker): mistakes torchgen 2.13 lets through
WARNINGS = [
    ("listed-twice", H + "supported:\n- abs\n- neg\n- abs\n", "OPG520", ("abs", 2)),
    ("listed-twice-across", H + "supported:\n- abs\nfull_codegen:\n- abs\n", "OPG520", ("abs", 2)),
    ("listed-twice-autograd", H + "supported:\n- neg\nautograd:\n- max_pool2d\n- max_pool2d\n", "OPG520",
     ("max_pool2d", 2)),
    ("symint-listed-twice", H + "supported:\n- empty.memory_format\nsymint:\n- empty.memory_format\n"
                               "- empty.memory_format\n", "OPG520", ("empty.memory_format", 3)),
    ("composite-implicit-under-supported", H + "supported:\n- matmul\n", "OPG521", "matmul"),
    ("composite-implicit-under-full-codegen", H + "full_codegen:\n- logdet\n", "OPG521", "logdet"),
    ("symint-not-listed", H + "supported:\n- abs\nsymint:\n- empty.memory_format\n", "OPG522", "empty.memory_format"),
    ("symint-unknown-op", H + "supported:\n- abs\nsymint:\n- bogus\n", "OPG522", "bogus"),
    ("symint-not-a-name", H + "supported:\n- abs\nsymint:\n- 5\n", "OPG522", "5"),
    ("nothing-generated", H + "supported: []\n", "OPG523", "supported"),
    ("nothing-generated-autograd-only", H + "autograd:\n- max_pool2d\n", "OPG523", "backend"),
    ("class-name-a-dollar-identifier", H + "class_name: My$Functions\nsupported:\n- abs\n", "OPG524", "My$Functions"),
    ("not-a-backend-key", "backend: Python\ncpp_namespace: torch_xla\nsupported:\n- abs\n", "OPG525", "Python"),
    ("autograd-backend-key", "backend: AutogradXLA\ncpp_namespace: torch_xla\nsupported:\n- abs\n", "OPG525",
     "AutogradXLA"),
    ("full-codegen-string", H + "full_codegen: t\n", "OPG527", "t\n"),
    ("full-codegen-mapping", H + "full_codegen: {abs: 1}\n", "OPG527", "{abs"),
    ("ir-gen-not-a-list", H + "supported:\n- abs\nir_gen: abs\n", "OPG527", ("abs", 2)),
    ("ir-gen-unknown-op", H + "supported:\n- abs\nir_gen:\n- abss\n", "OPG528", "abss"),
    # checks torchgen makes only when it generates code
    ("unknown-backend-key-without-ops", "backend: NOT_XLA\ncpp_namespace: torch_xla\nsupported: []\n", "OPG502",
     "NOT_XLA"),
    ("duplicate-backend-key-without-ops", "backend: CPU\ncpp_namespace: at\n", "OPG510", "CPU"),
    ("bad-cpp-namespace-without-ops", "backend: XLA\ncpp_namespace: 5\n", "OPG504", "5"),
    ("symint-without-symint-autograd-only", H + "autograd:\n- abs\nsymint:\n- abs\n", "OPG513", ("abs", 2)),
    ("wrapper-autograd-only", H + "autograd:\n- _foreach_add.List\n", "OPG514", "_foreach_add.List"),
]


def _find(diagnostics, code: str, at: tuple[int, int]):
    return [d for d in diagnostics if d.code == code and (d.span.start_line, d.span.start_col) == at]


@pytest.mark.parametrize("name,text,code,marker", ERRORS, ids=[c[0] for c in ERRORS])
def test_error(native, name, text, code, marker):
    diagnostics = check_backend(text, native).diagnostics
    at = position(text, marker)
    found = _find(diagnostics, code, at)
    assert found, f"expected {code} at {at[0] + 1}:{at[1] + 1}, got " + "; ".join(
        f"{d.code} {d.span.start_line + 1}:{d.span.start_col + 1} {d.message}" for d in diagnostics)
    assert all(d.severity is Severity.ERROR for d in found)


@pytest.mark.parametrize("name,text,code,marker", WARNINGS, ids=[c[0] for c in WARNINGS])
def test_warning(native, name, text, code, marker):
    diagnostics = check_backend(text, native).diagnostics
    at = position(text, marker)
    found = _find(diagnostics, code, at)
    assert found, f"expected {code} at {at[0] + 1}:{at[1] + 1}, got " + "; ".join(
        f"{d.code} {d.span.start_line + 1}:{d.span.start_col + 1} {d.message}" for d in diagnostics)
    assert all(d.severity is Severity.WARNING for d in found)
    assert not any(d.is_error for d in diagnostics), [d.message for d in diagnostics if d.is_error]


def test_no_wrappers_with_out_as_primary_or_all_variants(native):
    for text in [H + "use_out_as_primary: true\nsupported:\n- _foreach_add.List\n",
                 H + "supported:\n- _foreach_add.List\n- _foreach_add_.List\n",
                 H + "supported:\n- add.Tensor\n"]:  # add_.Tensor and add.out can be wrapped
        assert not any(d.code == "OPG514" for d in check_backend(text, native).diagnostics)


def test_every_backend_code_has_a_case():
    # OPG515 and OPG526 need a native_functions.yaml of their own: see the tests below; OPG530-532 need C++
    # implementation files: see test_missing_kernels.py; OPG535-537 come from generate-lazy: see codegen/test_lazy.py;
    # OPG550-556 are the vendor formats': see test_vendor_formats.py; OPG590-591 a backend's own operator file's:
    # see conformance/test_own_ops.py; OPG516-518 generate-backend --experimental's: see
    # conformance/test_structured_privateuse1.py
    covered = {c[2] for c in ERRORS + WARNINGS} | {"OPG515", "OPG516", "OPG517", "OPG518", "OPG526", "OPG530",
                                                   "OPG531", "OPG532", "OPG535", "OPG536", "OPG537", "OPG550",
                                                   "OPG551", "OPG552", "OPG553", "OPG554", "OPG555", "OPG556",
                                                   "OPG590", "OPG591"}
    assert {code for code in CODES if code.startswith("OPG5")} <= covered


def test_all_problems_in_one_run(native):
    text = ("backend: NOT_XLA\n"
            "use_out_as_primary: frue\n"
            "supported:\n"
            "- abs_BAD\n"
            "- mul.out: {structured: true}\n"
            "invalid_key: 1\n")
    got = {(d.code, d.span.start_line, d.span.start_col) for d in check_backend(text, native).diagnostics}
    assert {("OPG502", 0, 9), ("OPG503", 0, 0), ("OPG505", 1, 20), ("OPG509", 3, 2), ("OPG508", 4, 2),
            ("OPG507", 5, 0)} <= got


def test_messages_keep_torchgen_facts_and_suggest(native):
    [d] = [d for d in check_backend("backend: NOT_XLA\ncpp_namespace: x\nsupported: [abs]\n", native).diagnostics
           if d.code == "OPG502"]
    assert "unknown dispatch key NOT_XLA" in d.message and ("replace", "XLA") in d.data
    [d] = [d for d in check_backend(H + "supported:\n- abs_BAD\n", native).diagnostics if d.code == "OPG509"]
    assert "Found an invalid operator name: abs_BAD" in d.message and ("replace", "abs") in d.data
    [d] = [d for d in check_backend(H + "supported:\n- aten::abs\n", native).diagnostics if d.code == "OPG509"]
    assert d.data == (("replace", "abs"),)
    [d] = [d for d in check_backend(H + "supported:\n- func: clone\n", native).diagnostics if d.code == "OPG508"]
    assert d.data == (("replace", "clone"),)
    [d] = [d for d in check_backend(H + "supported: [abs]\nsupportd: [neg]\n", native).diagnostics
           if d.code == "OPG507"]
    assert ("replace", "supported") in d.data


def test_backend_index_like_torchgen(native):
    text = ("backend: PrivateUse1\n"
            "cpp_namespace: my_backend\n"
            "use_out_as_primary: true\n"
            "device_guard: true\n"
            "supported:\n"
            "- add.Tensor\n"
            "- add.out\n"
            "- empty.memory_format\n"
            "full_codegen:\n"
            "- abs\n"
            "autograd:\n"
            "- max_pool2d\n"
            "symint:\n"
            "- empty.memory_format\n")
    snapshot = check_backend(text, native)
    assert not snapshot.has_errors, snapshot.diagnostics
    r = snapshot.resolved
    assert r.backend_key is DispatchKey.PrivateUse1 and r.autograd_key is DispatchKey.AutogradPrivateUse1
    assert r.class_name == "PrivateUse1NativeFunctions"
    index = r.backend_index
    assert (index.dispatch_key, index.use_out_as_primary, index.device_guard, index.external) == \
        (DispatchKey.PrivateUse1, True, True, True)
    assert [(str(op), m.kernel, m.structured, m.cpp_namespace) for op, m in index.index.items()] == [
        ("add.Tensor", "add", False, "my_backend"),
        ("add.out", "add_out", False, "my_backend"),
        ("empty.memory_format", "empty_symint", False, "my_backend"),
        ("abs", "abs", False, "my_backend"),
    ]
    autograd = r.autograd_index
    assert autograd.dispatch_key is DispatchKey.AutogradPrivateUse1 and autograd.external
    assert [(str(op), m.kernel) for op, m in autograd.index.items()] == [("max_pool2d", "max_pool2d")]
    # a position for every listing of every op
    listed = {str(op): [(i.section, i.span.start_line, i.span.start_col) for i in items]
              for op, items in r.listings.items()}
    assert listed["empty.memory_format"] == [("supported", 7, 2), ("symint", 13, 2)]
    assert listed["abs"] == [("full_codegen", 9, 2)]


def test_defaults_and_class_name(native):
    r = check_backend(H + "class_name: XlaFunctions\nsupported:\n- abs\n", native).resolved
    assert r.class_name == "XlaFunctions"
    assert (r.backend_index.use_out_as_primary, r.backend_index.device_guard) == (False, False)
    assert r.autograd_index is None and r.autograd_key is None
    r = check_backend(H + "supported:\n", native).resolved
    assert r.backend_index is None and r.backend_key is None and r.class_name is None


def test_full_codegen_string_is_read_as_characters(native):
    # torchgen does supported.extend(full_codegen): 't' is an op, so this is accepted.
    snapshot = check_backend(H + "full_codegen: t\n", native)
    assert not snapshot.has_errors
    assert [str(op) for op in snapshot.resolved.backend_index.index] == ["t"]
    # and 'tx' is 't' and 'x', which is not.
    [d] = [d for d in check_backend(H + "full_codegen: tx\n", native).diagnostics if d.is_error]
    assert (d.code, d.span.start_line, d.span.start_col) == ("OPG509", 2, 15)


# A native_functions.yaml with no Meta kernels and one manually registered op.
CUSTOM_NATIVE = """\
- func: foo(Tensor self) -> Tensor
  structured_delegate: foo.out

- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: foo_out

- func: bar(Tensor self) -> Tensor
  dispatch:
    CPU: bar

- func: baz(Tensor self) -> Tensor
  manual_kernel_registration: True
"""


@pytest.fixture(scope="module")
def custom_native():
    tags = TagsParser().parse("- tag: core\n  desc: core\n")
    snapshot = NativeParser(release=DEFAULT).parse(CUSTOM_NATIVE, tags.names)
    assert not snapshot.diagnostics
    return snapshot


def test_kernel_for_a_key_the_codegen_writes(custom_native):
    text = "backend: Meta\ncpp_namespace: x\nsupported:\n- foo.out\n- bar\n"
    diagnostics = check_backend(text, custom_native).diagnostics
    assert [(d.code, d.severity, d.span.start_line, d.span.start_col) for d in diagnostics] == [
        ("OPG515", Severity.ERROR, 3, 2)]
    # not for an unstructured op, nor on another key
    assert not check_backend("backend: Meta\ncpp_namespace: x\nsupported:\n- bar\n", custom_native).diagnostics
    assert not check_backend("backend: XLA\ncpp_namespace: x\nsupported:\n- foo.out\n", custom_native).diagnostics


def test_manual_kernel_registration(custom_native):
    native = custom_native
    text = H + "supported:\n- bar\n- baz\n"
    diagnostics = check_backend(text, native).diagnostics
    # baz has no dispatch table, so it is CompositeImplicitAutograd as well
    assert sorted((d.code, d.severity, d.span.start_line, d.span.start_col) for d in diagnostics) == [
        ("OPG521", Severity.WARNING, 4, 2), ("OPG526", Severity.WARNING, 4, 2)]


def test_never_raises_on_odd_input(native):
    for text in ["\x00", ":", "backend: [XLA]\ncpp_namespace: {a: b}\nsupported: {abs: 1}\n",
                 "backend: XLA\ncpp_namespace: x\nsupported:\n- {}\n- []\n- ''\n- .\n- __iabs__\n",
                 "? [a]\n: b\n", "backend: !!binary aGVsbG8=\n", "&a [*a]"]:
        snapshot = check_backend(text, native)
        assert all(d.code in CODES for d in snapshot.diagnostics)
