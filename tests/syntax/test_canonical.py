"""The fast composer of canonical entries against libyaml's path: node for node, or it steps aside.

compose_canonical_entry must return exactly what composing the entry with libyaml gives (values,
styles, spans, diagnostics), or None. These tests run both on every entry of the real file and the
corpus, on mutated entries and on generated ones.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opgen_lsp.syntax import canonical
from opgen_lsp.syntax.canonical import compose_canonical_entry
from opgen_lsp.syntax.entries import compose_entry, split_chunks
from opgen_lsp.syntax.libyaml import compose
from opgen_lsp.syntax.nodes import YMap, YScalar, YSeq


def libyaml_entry(text: str):
    """What compose_entry gave before the fast path: the one list item and the diagnostics, or None."""
    root, diagnostics = compose(text)
    if not isinstance(root, YSeq) or len(root.items) != 1:
        return None
    return root.items[0], diagnostics


def typed(node):
    """The node with every scalar value's type beside it: == alone takes True, 1 and 1.0 for one value."""
    if isinstance(node, YScalar):
        return type(node.value), node
    if isinstance(node, YSeq):
        return node.span, [typed(n) for n in node.items]
    if isinstance(node, YMap):
        return node.span, [(typed(k), typed(v)) for k, v in node.pairs]
    return node


def assert_same(text: str) -> bool:
    """Checks the fast path on one text; True when it took the text."""
    fast = compose_canonical_entry(text)
    if fast is None:
        return False
    slow = libyaml_entry(text)
    assert slow is not None and fast == slow, text
    assert typed(fast[0]) == typed(slow[0]), text
    return True


def _corpus_texts() -> list[Path]:
    return sorted(CORPUS.glob("**/*.yaml")) if CORPUS.is_dir() else []


def test_every_entry_of_the_real_file(native_yaml: Path) -> None:
    chunks = split_chunks(native_yaml.read_text(encoding="utf-8"))
    taken = sum(assert_same(c.text) for c in chunks)
    # The real file is canonical throughout: every entry takes the fast path.
    assert taken == len(chunks) == 2584


def test_every_entry_of_the_real_tags_file(tags_yaml: Path) -> None:
    chunks = split_chunks(tags_yaml.read_text(encoding="utf-8"))
    # Every description is a plain literal block: every entry takes the fast path (PyYAML is not loaded for them).
    assert sum(assert_same(c.text) for c in chunks) == len(chunks) >= 20
    entries = [c.text for c in chunks]
    assert _check_mutations(entries, 1500, seed=20261) > 300


@pytest.mark.corpus
@pytest.mark.parametrize("path", _corpus_texts(), ids=lambda p: p.name)
def test_every_chunk_of_the_corpus(path: Path) -> None:
    for chunk in split_chunks(path.read_text(encoding="utf-8")):
        assert_same(chunk.text)


def test_compose_entry_uses_it_and_keeps_the_fallback() -> None:
    text = "- func: a(Tensor self) -> Tensor\n  dispatch:\n    CPU: k\n"
    assert compose_entry(text).node == libyaml_entry(text)[0]
    quoted = "- func: 'a(Tensor self) -> Tensor'\n"
    assert compose_canonical_entry(quoted) is None
    assert compose_entry(quoted).node.pairs[0][1].style == "'"


@pytest.mark.parametrize("text", [
    # resolution of plain scalars: bools, nulls, numbers, and tags the fast path leaves to libyaml
    "- a: True\n  b: yes\n  c: off\n  d: null\n  e: Null\n  f: 12\n  g: 0x1F\n  h: 1_000\n  i: 1.5\n  j: 1e5\n",
    "- a: 0o17\n  b: 017\n  c: 1:30\n  d: .inf\n  e: -1\n  f: 2001-01-01\n  g: <<\n  h: =\n  i: ~\n",
    "- a: [True, 1, 1.5, ~, null, x.y, 'q', \"d\"]\n  b: []\n  c: {}\n  d: [ a , b ]\n  e: [a,b]\n",
    # duplicate keys, also between equal values of other types
    "- func: a\n  func: b\n  dispatch:\n    CPU: x\n    CPU: y\n",
    "- 1: a\n  True: b\n  1.0: c\n",
    # layout: comments, blank lines, trailing spaces, no final newline, indentless and indented lists
    "- func: a # c\n\n  # c\n  x: y   \n  p:\n  - a -> b\n  - c\n  q:\n      - d\n# end\n\n",
    "- func: a\n  d:\n    CPU: k",
    "- func: a\n  d:\n    CPU: k\n  \n",
    "- func: a\n  d:   # why\n    CPU: k\n  e: f",
    # shapes it must leave to libyaml (or agree on)
    "- func: a\n  b:\n  c: d\n", "- func: a\n  b:\n", "- func: a\n   b: c\n", "- func: a\n  b: c\n    d\n",
    "- func: a\n  b:\n    c:\n      d: e\n", "- func: a\n  b:\n    - c\n    d: e\n", "- func: a\n  b:\n  - c: d\n",
    "- func: a: b\n", "- func:a\n", "- func: a\n  b: c:\n", "- func: a\n  b: - c\n", "- func: a\n  b: [a, [b]]\n",
    "- func: a\n  b: [a, b,]\n", "- func: a\n  b: ['a #b']\n", "- func: a\n  b: [a] x\n", "-   func: a\n",
    "- func: a\n\tb: c\n", "- func: a\r\n", "- func: é\n", "- ", "- # x\n", "-\n", "- - a\n", "- [a]\n",
    "- func: a\n  b: c #\n", "- func: a\n  b: c#d\n", "- func: a\n  ? b\n", "- func: a\n  b: &x c\n",
    "- func: a\n  b: 'x'\n", "- func: a\n  b: !!str c\n", "- func: a\n  b: |\n    c\n", "- func: a\n  b:\n    -\n",
    "- func: a\n  b:\n    - \n", "- func: a\n  b:\n    -  c\n", "- func: a\n  b: c\n  - d\n", "- func: a\n" + "[" * 70,
    "- func: a  # " + "[" * 70 + "\n", "- func: a\n" + " " * 70 + "\n", "- func: a(Tensor? x) -> Tensor? # ? - - \n",
    "- func: a\n  b:\n" + " " * 63 + "- c\n", "- func: a\n  b:\n" + " " * 64 + "- c\n", "- func: a\n  b: [" + "[" * 64 + "\n",
    "- func: a\n  b:\n" + " " * 65 + "c: d\n", "- func: a  # " + "{" * 65 + "\n",
    # libyaml refuses implicit keys longer than 1024 characters
    "- func: a\n  " + "k" * 1024 + ": v\n", "- func: a\n  " + "k" * 1025 + ": v\n", "- " + "f, " * 700 + "x: a\n",
    "- func: a\n  d:\n    " + "CPU" * 400 + ": k\n", "- func: a\n  " + " " * 70 + "# x\n", "- func: a\n - b\n", "- func: a\n b: c\n",
    # long values and list items (libyaml's 1024 limit is for implicit keys only)
    "- func: " + "a" * 1100 + "\n", "- func: a\n  x:\n    - " + "a" * 1100 + "\n", "- func: a\n  x:\n  - " + "a" * 1100 + "\n",
    "- func: a\n  x: [" + ", ".join(["abc"] * 400) + "]\n", "- func: a\n  x: ['" + "a" * 1100 + "']\n",
    # keys and plain values with blanks, indicators inside, and look-alikes of other types
    "- func: a\n  a  b: c\n  a ,b: c\n  a,b: d\n  x: a ]\n  y: a}\n  z: a ---\n  w: a'b\n  v: a\"b\n  u: ~x\n",
    "- func: a\n  x: 0x\n  y: 1_\n  z: 1:60\n  w: 190:20:30\n  v: 1.0:30\n  u: 00\n  t: 1__0\n  s: a::b\n  r: a -\n",
    "- func: a\n  x: ['', \"\", ' a b ', a.]\n  y: [a ]\n  z: [1., a..b]\n  w: [y, n, Y]\n", "- func: a ---\n",
    "- func: a\n  0: x\n  False: y\n", "- func: a\n  1.0e+400: x\n  2.0e+400: y\n",
    # a block under the first line's key, indentless or indented by one
    "- dispatch:\n  - a\n  b: c\n", "- dispatch:\n   CPU: a\n", "- a:\n  - b\n  - c\n  d:\n    e: f\n",
    # literal blocks (tags.yaml's descriptions): the plainest are taken, the rest agree through libyaml
    "- tag: a\n  desc: |\n     x\n\n# c\n", "- tag: a\n  desc: |\n     x\n\n", "- tag: a\n  desc: |\n     x\n\n  b: c\n",
    "- tag: a\n  desc: |\n     x\n  \n\n  b: c\n", "- tag: a\n  desc: |\n     x\n# c\n  b: c\n", "- tag: a\n  desc: |\n     x",
    "- tag: a\n  desc: |\n     x\n\n     y\n", "- tag: a\n  desc: |\n     x\n    y\n  b: c\n", "- tag: a\n  desc: |\n",
    "- tag: a\n  desc: |\n     x\n      # y  \n  b: |\n   z\n", "- tag: a\n  desc:  |\n     x\n", "- tag: a\n  desc: |-\n   x\n",
    "- tag: a\n  desc: |2\n     x\n", "- tag: a\n  desc: | # c\n   x\n", "- tag: a\n  desc: >\n   x\n   y\n", "- desc: |\n   x\n",
    "- tag: a\n  desc: |\n   x  \n   y: z # w\n   - [q]\n", "- tag: a\n  desc: |\n   x\n  \n", "- tag: a\n  desc: |\n\n   x\n",
    "- tag: a\n  desc: |\n   x\n\t\n", "- tag: a\n  desc: |\n  x\n", "- tag: a\n  desc: |\n   x\n  - b\n", "- a: |\n   x\n  a: b\n",
])
def test_tricky_entries(text: str) -> None:
    assert_same(text)


def test_resolution_cases_take_the_fast_path() -> None:
    assert compose_canonical_entry("- a: True\n  b: 1\n  c: ~\n  d: [1.5]\n") is not None
    assert compose_canonical_entry("- a: 2001-01-01\n") is None  # a timestamp: left to libyaml


def _pyyaml_value(text: str) -> object:
    """What PyYAML's safe loader makes of text as a plain scalar: its value, or "<tag>" for a tag the fast path leaves
    to libyaml (and for a value it cannot construct)."""
    tag = yaml.resolver.Resolver().resolve(yaml.ScalarNode, text, (True, False))
    if tag == "tag:yaml.org,2002:str":
        return text
    try:
        return yaml.constructor.SafeConstructor().construct_object(yaml.ScalarNode(tag, text), deep=True)
    except (yaml.constructor.ConstructorError, ValueError, TypeError):
        return "<tag>"


def test_the_first_characters_resolved_are_pyyamls() -> None:
    assert canonical._FIRST_CHARS_RESOLVED == {c for c in yaml.resolver.Resolver.yaml_implicit_resolvers if c}


def _words() -> list[str]:
    """Plain scalars starting with a character PyYAML resolves: its booleans and nulls in every case, near misses,
    the scalars of the real file's lines, and random words."""
    rng = random.Random(29)
    base = ["yes", "no", "true", "false", "on", "off", "null", "~", "y", "n", "Y", "N", "NaN", "nan", "o", "O", "t",
            "T", "f", "F", "none", "None", "nil", "~~", "~x", "onx", "off_", "nullable", "True_", "Truee", "yess",
            "function", "method", "noalias", "out", "Off1", "t_", "Tensor", "True.x", "NoCheck", "fn.out"]
    cased = {w.upper() for w in base} | {w.capitalize() for w in base} | {w.swapcase() for w in base}
    randoms = {rng.choice("yYnNtTfFoO~") + "".join(rng.choice("eEsSoOnNuUlLrRfFaA_.~ 1") for _ in range(rng.randrange(6)))
               for _ in range(3000)}
    return sorted({*base, *cased, *randoms})


def test_words_resolve_as_pyyaml_resolves_them(native_yaml: Path) -> None:
    """The table of words (no PyYAML) against PyYAML's resolver and constructor, with the value's type."""
    found = set(_words())
    for line in native_yaml.read_text(encoding="utf-8").splitlines():  # every value and list item of the real file
        value = line.split("#", 1)[0].rsplit(": ", 1)[-1].strip(" -[]")
        found.update(v.strip() for v in value.split(",") if v.strip())
    checked = 0
    for text in sorted(found):
        if text[0] not in canonical._WORD_STARTS:
            continue
        mine, theirs = canonical._resolve_plain(text), _pyyaml_value(text)
        assert (type(mine), mine) == (type(theirs), theirs), text
        checked += 1
    assert checked > 2000


def test_other_scalars_are_resolved_by_pyyaml() -> None:
    for text in ("12", "-3", "0x10", "1.5", ".NaN", "1e3", "2020-01-02", "<<", "=", "0", "+1", "1_000", "1:20"):
        mine = canonical._resolve_plain(text)
        theirs = _pyyaml_value(text)
        if theirs == "<tag>" or not isinstance(theirs, (str, bool, int, float, type(None))):  # '<<', a timestamp
            assert mine is canonical._FALLBACK, text
        else:
            assert (type(mine), mine) == (type(theirs), theirs) or theirs != theirs and mine != mine, text


_JUNK = "-:#&*!|>'\"%@`{}[],?\n \t\\~.0123456789abcTyn"


def _mutate(text: str, rng: random.Random) -> str:
    kind = rng.randrange(7)
    at = rng.randrange(len(text) + 1)
    lines = text.split("\n")
    if kind == 0:  # junk characters
        return text[:at] + "".join(rng.choice(_JUNK) for _ in range(rng.randint(1, 4))) + text[at:]
    if kind == 1:  # delete a few characters
        return text[:at] + text[at + rng.randint(1, 5):]
    if kind == 2:  # re-indent a line
        i = rng.randrange(len(lines))
        lines[i] = " " * rng.randint(0, 6) + lines[i].lstrip(" ")
        return "\n".join(lines)
    if kind == 3:  # duplicate or drop a line
        i = rng.randrange(len(lines))
        if rng.random() < 0.5:
            lines.insert(i, lines[i])
        elif i:
            del lines[i]
        return "\n".join(lines)
    if kind == 4:  # a YAML scalar that resolves to something else, or a flow list
        value = rng.choice(["True", "no", "~", "null", "", "12", "-3", "0x10", "1.5", ".NaN", "1e3", "2020-01-02",
                            "<<", "=", "[a, 'b']", "[]", "{}", "['x', \"y\"]", "x: y", "'q'", "a #b", "a#b"])
        return text[:at] + value + text[at:]
    if kind == 5:  # a long run of one character (libyaml limits implicit keys to 1024 characters)
        return text[:at] + rng.choice("a ,x[") * rng.choice([200, 1020, 1030, 3000]) + text[at:]
    return text[:at] + rng.choice(["\n", "\n  ", "\n    ", "\n  - ", ": ", " #", "# ", "- "]) + text[at:]


def _check_mutations(entries: list[str], count: int, seed: int) -> int:
    rng = random.Random(seed)
    taken = 0
    for _ in range(count):
        text = rng.choice(entries)
        for _ in range(rng.randint(1, 3)):
            text = _mutate(text, rng)
        taken += assert_same(text)
    return taken


def test_mutated_entries_agree(native_yaml: Path) -> None:
    entries = [c.text for c in split_chunks(native_yaml.read_text(encoding="utf-8"))]
    taken = _check_mutations(entries, 1500, seed=20260)
    assert taken > 300  # most mutations keep the shape; the fast path must have been exercised


@pytest.mark.slow
def test_many_mutated_entries_agree(native_yaml: Path) -> None:
    entries = [c.text for c in split_chunks(native_yaml.read_text(encoding="utf-8"))]
    for seed in range(8):
        _check_mutations(entries, 5000, seed=seed)


_names = st.from_regex(r"[a-z_][a-z0-9_.]{0,8}", fullmatch=True)
_scalars = st.one_of(
    _names,
    st.sampled_from(["True", "False", "yes", "No", "on", "OFF", "~", "null", "NULL", "0", "-1", "+1", "0x1f", "0b101",
                     "0o7", "07", "1_0", "1.5", "1e5", "6.8e+3", ".inf", "-.Inf", ".nan", "1:20", "2001-12-14", "<<",
                     "=", "CPU, CUDA", "add.out", "a -> b", "f(Tensor(a!) x, *, int y=1) -> Tensor(a!)", "y", "n"]),
    st.text(alphabet="abcXYZ019_.,:- #'\"[]{}()!*&", min_size=1, max_size=12),
)
_keys = st.one_of(st.sampled_from(["func", "dispatch", "tags", "CPU", "a.b", "CPU, CUDA", "1", "True", "~"]), _names,
                  _scalars)
_flow = st.lists(st.one_of(_scalars, _scalars.map(lambda s: f"'{s}'")), max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]")
_value = st.one_of(_scalars, _flow, st.just("{}"), st.just(""))
_comment = st.sampled_from(["", "", " # note", "  #", " #x: y"])


@st.composite
def _entries(draw) -> str:
    lines = [f"- {draw(_keys)}: {draw(_value)}{draw(_comment)}"]
    for _ in range(draw(st.integers(0, 5))):
        shape = draw(st.integers(0, 5))
        if shape == 5:  # a literal block: its lines at one indentation or another, blank ones, comments
            lines.append(f"  {draw(_keys)}: {draw(st.sampled_from(['|', '|', '|-', '>', '|  ', '| # c']))}")
            for _ in range(draw(st.integers(0, 3))):
                lines.append(" " * draw(st.sampled_from([0, 2, 3, 5, 5, 7])) + draw(
                    st.one_of(_scalars, st.sampled_from(["", "# c", "x: y", "- a", "[b]", "a  "]))))
        elif shape == 0:
            lines.append(f"  {draw(_keys)}: {draw(_value)}{draw(_comment)}")
        elif shape == 1:
            lines.append(f"  {draw(_keys)}:{draw(_comment)}")
            indent = draw(st.sampled_from([2, 4, 4, 6]))
            dash = draw(st.booleans())
            for _ in range(draw(st.integers(0, 3))):
                item = f"- {draw(_scalars)}" if dash else f"{draw(_keys)}: {draw(_value)}"
                lines.append(" " * indent + item + draw(_comment))
        elif shape == 2:
            lines.append(draw(st.sampled_from(["", "  ", "# c", "  # c", "   "])))
        else:
            lines.append(" " * draw(st.integers(0, 5)) + draw(_scalars))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n", "\n# end\n", "  "]))


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.slow  # (over a second: the quick suite's budget; the full run has it)
@given(_entries())
def test_generated_entries_agree(text: str) -> None:
    assert_same(text)
