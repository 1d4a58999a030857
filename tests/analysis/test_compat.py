"""Schema compatibility against torch's own predicates, run in the test.

The reference for each pair of schemas is `torch._C.parse_schema(new).is_backward_compatible_with(old)` and
`.check_forward_compatible_with(old)` of the installed torch (2.13), as PyTorch's
check_forward_backward_compatibility.py calls them. opgen must agree on every schema changed between
consecutive releases and on seeded mutations of the real file's schemas.
"""

from __future__ import annotations

import datetime
import random
import re
from pathlib import Path

import pytest
from release_files import release_native

from opgen_lsp.analysis.compat import (
    allow_listed,
    backward_incompatibility,
    forward_incompatibility,
    parse_allow_list,
    schema_changes,
    schemas_of,
)
from opgen_lsp.model.schema_parser import parse_schema

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.conformance


def torch_verdicts(new: str, old: str) -> tuple[bool, bool] | None:
    """(backward compatible, forward compatible) as torch says, or None when torch cannot parse one of them."""
    try:
        new_schema = torch._C.parse_schema(f"aten::{new}")
        old_schema = torch._C.parse_schema(f"aten::{old}")
    except RuntimeError:
        return None
    return new_schema.is_backward_compatible_with(old_schema), new_schema.check_forward_compatible_with(old_schema)[0]


def opgen_verdicts(new: str, old: str) -> tuple[bool, bool]:
    new_schema, old_schema = parse_schema(new).schema, parse_schema(old).schema
    assert new_schema is not None and old_schema is not None
    return backward_incompatibility(new_schema, old_schema) is None, forward_incompatibility(new_schema, old_schema) is None


CONSECUTIVE = [("2.6.0", "2.7.1"), ("2.7.1", "2.8.0"), ("2.8.0", "2.9.1"), ("2.9.1", "2.10.0"), ("2.10.0", "2.11.0"),
               ("2.11.0", "2.12.1"), ("2.12.1", "installed"), ("2.14.1", "2.15.0")]


@pytest.mark.versions
@pytest.mark.parametrize(("base", "current"), CONSECUTIVE)
def test_every_schema_changed_between_releases_agrees_with_torch(base: str, current: str) -> None:
    changes = schema_changes(release_native(base).read_text(encoding="utf-8"),
                             release_native(current).read_text(encoding="utf-8"))
    compared = 0
    for change in changes:
        if change.new is None:  # gone: the check finds no schema of that name to be compatible
            assert change.backward and change.forward
            continue
        expected = torch_verdicts(change.new.text, change.old.text)
        if expected is None:  # torch 2.13 cannot parse a schema of another release (Dimname)
            continue
        assert (change.backward is None, change.forward is None) == expected, (change.old.text, change.new.text)
        compared += 1
    if (base, current) == ("2.9.1", "2.10.0"):
        assert compared >= 6  # tril/triu int -> SymInt, _flash_attention_forward, ...


# ---------------------------------------------------------------- seeded mutations

_TOP_COMMA = re.compile(r",\s*(?![^\[]*\])")


def _split(args: str) -> list[str]:
    return [a.strip() for a in _TOP_COMMA.split(args)] if args.strip() else []


_TYPE_SWAPS = [("int ", "SymInt "), ("int ", "Scalar "), ("float ", "Scalar "), ("Tensor ", "Tensor? "), ("int ", "int? "),
               ("bool ", "int "), ("int[] ", "int[2] "), ("int[] ", "SymInt[] "), ("Tensor[] ", "Tensor?[] "),
               ("Scalar ", "float "), ("SymInt ", "int "), ("int? ", "int "), ("Tensor? ", "Tensor "), ("float ", "float? "),
               ("ScalarType? ", "int? "), ("bool ", "SymBool ")]
_DEFAULT_CHANGES = ["=None", "=0", "=1", "=1.0", "=True", "=False", "=[]", "=[0,1]", "='mean'", "=-1"]


def _mutate_args(args: list[str], rng: random.Random) -> None:
    kind = rng.randrange(9)
    plain = [i for i, a in enumerate(args) if a != "*"]
    if kind == 0 or not plain:  # add an argument somewhere
        new = rng.choice(["int extra", "int extra=0", "bool extra=False", "Tensor? extra=None", "int[] extra=[]",
                          "float extra=1.0", "Tensor(a!) out2"])
        args.insert(rng.randrange(len(args) + 1), new)
    elif kind == 1:  # remove one
        del args[rng.choice(plain)]
    elif kind == 2:  # rename one
        i = rng.choice(plain)
        args[i] = re.sub(r"(\w+)(=.*)?$", lambda m: m[1] + "_renamed" + (m[2] or ""), args[i], count=1)
    elif kind == 3:  # change, add or drop a default
        i = rng.choice(plain)
        head = args[i].split("=")[0]
        args[i] = head if "=" in args[i] and rng.random() < 0.4 else head + rng.choice(_DEFAULT_CHANGES)
    elif kind == 4:  # keyword-only marker moves
        if "*" in args:
            star = args.index("*")
            del args[star]
            args.insert(max(0, min(len(args), star + rng.choice([-1, 1]))), "*")
        else:
            args.insert(rng.randrange(len(args) + 1), "*")
    elif kind == 5 or kind == 6:  # a type changes
        i = rng.choice(plain)
        text = args[i] + " "
        swaps = [(a, b) for a, b in _TYPE_SWAPS if text.startswith(a)]
        if swaps:
            a, b = rng.choice(swaps)
            args[i] = (b + text[len(a):]).strip()
        else:
            args[i] = "int " + args[i].split(" ", 1)[-1]
    elif kind == 7:  # an alias annotation changes
        i = rng.choice(plain)
        args[i] = rng.choice([args[i].replace("(a!)", "(a)"), args[i].replace("(a!)", "(b!)"),
                              args[i].replace("Tensor ", "Tensor(a) ", 1), args[i].replace("(a)", "")])
    else:  # the two arguments swap places
        if len(plain) > 1:
            i, j = rng.sample(plain, 2)
            args[i], args[j] = args[j], args[i]


def _mutate_returns(returns: str, rng: random.Random) -> str:
    return rng.choice([
        returns + "" if returns.startswith("(") else f"({returns}, Tensor)",
        returns.replace("Tensor(a!)", "Tensor"), returns.replace("Tensor ", "Tensor? ", 1).replace("Tensor)", "Tensor?)"),
        "Tensor" if returns != "Tensor" else "Tensor?", re.sub(r"Tensor (\w+)", r"Tensor \1_r", returns, count=1),
        "()", returns.replace("Tensor", "Tensor(a)", 1) if "(a" not in returns else returns.replace("(a)", "(b)"),
        "int" if returns == "Tensor" else "Tensor", "Scalar" if returns in ("float", "int") else "float",
    ])


def mutate(func: str, rng: random.Random) -> str:
    name, _, rest = func.partition("(")
    args_text, _, returns = rest.rpartition(") -> ")
    args = _split(args_text)
    if rng.random() < 0.75:
        _mutate_args(args, rng)
    else:
        returns = _mutate_returns(returns, rng)
    return f"{name}({', '.join(args)}) -> {returns}"


@pytest.fixture(scope="module")
def real_schemas() -> list[str]:
    return [s.text for s in schemas_of(release_native("installed").read_text(encoding="utf-8")).values()]


def test_seeded_mutations_agree_with_torch(real_schemas: list[str]) -> None:
    rng = random.Random(31)
    compared, verdicts = 0, set()
    while compared < 400:
        old = rng.choice(real_schemas)
        new = mutate(old, rng)
        if new == old or parse_schema(new).schema is None or parse_schema(new).issues:
            continue
        expected = torch_verdicts(new, old)
        if expected is None:
            continue
        assert opgen_verdicts(new, old) == expected, (old, new)
        assert opgen_verdicts(old, new) == torch_verdicts(old, new), (new, old)  # and the change undone
        verdicts.add(expected)
        compared += 1
    assert verdicts == {(True, True), (True, False), (False, True), (False, False)}


@pytest.mark.parametrize(("new", "old", "backward", "forward"), [
    ("f(Tensor x, int y=1) -> Tensor", "f(Tensor x) -> Tensor", True, True),
    ("f(Tensor x, int[] y=[1]) -> Tensor", "f(Tensor x) -> Tensor", True, False),  # a list default is not FC
    ("f(Tensor x, int y) -> Tensor", "f(Tensor x) -> Tensor", False, False),
    ("f(Tensor x, Scalar y) -> Tensor", "f(Tensor x, int y) -> Tensor", True, False),
    ("f(Tensor x, *, int y=1) -> Tensor", "f(Tensor x, int y=1) -> Tensor", False, False),
    ("f(Tensor x, Scalar y=1.0) -> Tensor", "f(Tensor x, Scalar y=1) -> Tensor", False, False),
    ("f(Tensor x, float y=1.0) -> Tensor", "f(Tensor x, float y=1) -> Tensor", True, True),
    ("f(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", "f(Tensor x, *, Tensor(b!) out) -> Tensor(b!)", False, False),
    ("f(Tensor x, SymInt[2] s=1) -> Tensor", "f(Tensor x, int[2] s=[1,1]) -> Tensor", True, True),
])
def test_hand_written_pairs(new: str, old: str, backward: bool, forward: bool) -> None:
    assert opgen_verdicts(new, old) == (backward, forward) == torch_verdicts(new, old)


def test_the_allow_list_is_read_as_the_check_writes_it() -> None:
    items = parse_allow_list('ALLOW_LIST = [\n    ("aten::_foreach.*", datetime.date(2999, 1, 1)),\n'
                             '    ("aten::old_op", datetime.date(2020, 1, 1)),  # expired\n'
                             "    ('aten::with_args', datetime.date(2999, 1, 1), 'Tensor self'),\n]\n")
    today = datetime.date(2026, 1, 1)
    assert len(items) == 3
    assert allow_listed("aten::_foreach_add.List(Tensor[] self) -> Tensor[]", items, today)
    assert not allow_listed("aten::old_op(Tensor self) -> Tensor", items, today)
    assert allow_listed("aten::with_args(Tensor self) -> Tensor", items, today)
    assert not allow_listed("aten::with_args(Tensor other) -> Tensor", items, today)


def test_changes_are_located_on_the_current_line(tmp_path: Path) -> None:
    base = "- func: f(Tensor x) -> Tensor\n\n- func: g(Tensor x) -> Tensor\n\n- func: h(Tensor x) -> Tensor\n"
    current = "- func: f(Tensor x) -> Tensor\n\n# moved\n- func: g(Tensor x, int y) -> Tensor\n"
    changes = schema_changes(base, current)
    assert [(c.old.text.split("(")[0], c.new.line if c.new else None, c.backward is None, c.forward is None)
            for c in changes] == [("g", 3, False, False), ("h", None, False, False)]
    assert changes[0].new is not None and changes[0].new.column == 8
