"""The func: schema parser: what it accepts, what it rejects, and where pieces are."""

from __future__ import annotations

import pytest
import yaml

from opgen_lsp.model.schema_parser import parse_operator_name, parse_schema, parse_type


@pytest.mark.conformance
def test_round_trip_on_every_schema_of_the_real_file(native_yaml) -> None:
    entries = yaml.load(native_yaml.read_text(), Loader=yaml.CSafeLoader)
    funcs = [e["func"] for e in entries]
    assert len(funcs) == 2584
    for func in funcs:
        parsed = parse_schema(func)
        assert parsed.issues == (), func
        assert str(parsed.schema) == func.split("::")[-1]


@pytest.mark.parametrize("text", [
    "Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "int[]?", "int[2]", "SymInt[]", "SymInt[1]?", "ScalarType?",
    "Layout", "Device", "DeviceIndex", "MemoryFormat", "Generator?", "Storage", "Stream", "Scalar[]", "str?",
    "__torch__.torch.classes.quantized.LinearPackedParamsBase", "GraphModule", "SymBool", "QScheme", "DimVector",
    # Named tensors: types until torch 2.12; later releases refuse them per release (tests/model/test_releases.py).
    "Dimname", "Dimname[]", "Dimname[]?",
])
def test_types_torchgen_knows(text: str) -> None:
    ty, error, _ = parse_type(text)
    assert error is None and str(ty) == text


@pytest.mark.parametrize("text,fragment", [
    ("int[0]", "torchgen expects 'int[]'"),
    ("int[01]", "torchgen expects 'int[1]'"),
    ("Tensr", "did you mean 'Tensor'"),
    ("int[", "unknown type"),
])
def test_types_torchgen_rejects(text: str, fragment: str) -> None:
    ty, error, _ = parse_type(text)
    assert ty is None and fragment in error


def test_spans_of_the_pieces() -> None:
    func = "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
    parsed = parse_schema(func)
    assert parsed.namespace == "aten" and parsed.issues == ()
    spans = parsed.spans

    def at(offsets):
        return func[offsets[0]:offsets[1]]

    assert at(spans.name) == "add.out" and at(spans.overload) == "out"
    assert [at(a.whole) for a in spans.arguments] == ["Tensor self", "Tensor other", "Scalar alpha=1", "Tensor(a!) out"]
    assert at(spans.arguments[2].name) == "alpha" and at(spans.arguments[2].default) == "1"
    assert at(spans.arguments[3].type) == "Tensor(a!)"
    assert at(spans.returns) == "Tensor(a!)"


def test_model_partitions_like_torchgen() -> None:
    schema = parse_schema("empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
                          "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor").schema
    args = schema.arguments
    assert args.self_arg is None and args.tensor_options is not None
    assert [a.name for a in args.post_tensor_options_kwarg_only] == ["memory_format"]
    assert schema.kind().name == "functional"
    where = parse_schema("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor").schema
    assert [a.name for a in where.arguments.pre_self_positional] == ["condition"]


def test_errors_have_offsets_and_continue() -> None:
    func = "foo(Tensr self, int x=1=2, Tensor(a|b!) y) -> Tensor"
    issues = parse_schema(func).issues
    assert [(i.code, func[i.start:i.end]) for i in issues] == [
        ("OPG203", "Tensr"), ("OPG202", "int x=1=2"), ("OPG204", "a|b!")]


def test_empty_argument_name_is_only_a_warning() -> None:
    # torchgen 2.13 accepts it (the C++ it generates does not compile): a warning, not an error.
    parsed = parse_schema("foo(Tensor self, Tensor ) -> Tensor")
    assert parsed.schema is not None and [i.code for i in parsed.issues] == ["OPG207"]


@pytest.mark.parametrize("text,inplace,dunder,functional", [
    ("add_", True, False, False), ("__iadd__", True, True, False), ("__add__", False, True, False),
    ("batch_norm_functional", False, False, True),
])
def test_operator_names(text: str, inplace: bool, dunder: bool, functional: bool) -> None:
    name, issues = parse_operator_name(text + ".Tensor")
    assert issues == () and str(name) == text + ".Tensor"
    assert (name.name.inplace, name.name.dunder_method, name.name.functional_overload) == (inplace, dunder, functional)


@pytest.mark.parametrize("text", ["", "foo_out", "__ifoo__", "foo_functional_"])
def test_bad_operator_names(text: str) -> None:
    name, issues = parse_operator_name(text)
    assert name is None and issues[0].code == "OPG201"
