"""The machinery of the reliability tests, shared with benchmarks/bench_reliability.py.

- real inputs: torchgen's native_functions.yaml and tags.yaml, the corpus backend yamls;
- a seeded mutation fuzzer (deletions, duplications, truncations, swapped keys, broken
  indentation, wrong value types, unicode, very long lines, NUL bytes, CRLF and lone CR);
- `run_layers`: one input through every layer (parse, check, explain, the LSP features
  on a workspace analysis), raising only if a layer lets an exception out;
- random edit sequences and the comparable state of a snapshot (diagnostics, canonical
  model, hovers, symbols) for "incremental equals full".
"""

from __future__ import annotations

import bisect
import gc
import os
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

from opgen_lsp.analysis import hover as hover_query
from opgen_lsp.analysis import symbols as symbols_query
from opgen_lsp.analysis.check import BACKEND, TAGS, classify
from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.native import NativeParser, NativeSnapshot, TagsParser, TagsSnapshot
from opgen_lsp.lsp import features
from opgen_lsp.lsp.config import Settings
from opgen_lsp.lsp.workspace import Workspace
from opgen_lsp.pieces.explain import Explainer
from opgen_lsp.releases import DEFAULT
from opgen_lsp.syntax.entries import split_chunks

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"


# ---------------------------------------------------------------- real inputs

def aten_native() -> Path | None:
    """torchgen's packaged ATen/native folder, if torch is installed."""
    try:
        import torchgen
    except ImportError:
        return None
    path = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"
    return path if (path / "native_functions.yaml").is_file() else None


def corpus_backends() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.glob("*.yaml"))


def entries_of(text: str) -> list[str]:
    """The top-level '- ' entries of an entry-list yaml, each with its text."""
    return [c.text for c in split_chunks(text) if c.text.startswith("- ")]


# ---------------------------------------------------------------- mutations

UNICODE = ["é", "ß", "😀", "\u0300", "\ufeff", "\u200b", "\u202e", "\U0010ffff", "\u2028", "\u2029", "\x85",
           "\x0b", "\x0c", "\x1c", "\ud800", "中文", "\t", "\x7f", "\x1b[31m"]
WRONG_VALUES = ["[1, 2]", "{a: b}", "null", "~", "123", "1.5", "True", "''", '""', "[]", "{}", "- x", "*nope",
                "&a [*a]", "!!python/object/apply:os.system ['true']", "!!binary aGk=", "2001-12-14",
                "|\n    block", ">-\n    folded", "'unclosed", '"bad \\q escape"', "{", "[", "]", ":", "@x", "`x"]


def _line_bounds(text: str, rng: random.Random) -> tuple[int, int]:
    """Start and end offset of a random line."""
    if not text:
        return 0, 0
    at = rng.randrange(len(text))
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return start, len(text) if end == -1 else end


def m_delete(text: str, rng: random.Random) -> str:
    if not text:
        return text
    a = rng.randrange(len(text))
    b = min(len(text), a + rng.choice([1, 2, 5, 20, 100, 1000]))
    return text[:a] + text[b:]


def m_delete_lines(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    a = rng.randrange(len(lines))
    return "\n".join(lines[:a] + lines[a + rng.randint(1, 4):])


def m_duplicate(text: str, rng: random.Random) -> str:
    if not text:
        return text
    a = rng.randrange(len(text))
    b = min(len(text), a + rng.choice([1, 10, 80, 400]))
    return text[:b] + text[a:b] + text[b:]


def m_duplicate_lines(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    a = rng.randrange(len(lines))
    b = min(len(lines), a + rng.randint(1, 6))
    return "\n".join(lines[:b] + lines[a:b] + lines[b:])


def m_truncate(text: str, rng: random.Random) -> str:
    return text[:rng.randrange(len(text) + 1)]


def m_swap_lines(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    if len(lines) < 2:
        return text
    a = rng.randrange(len(lines) - 1)
    b = min(len(lines) - 1, a + rng.randint(1, 3))
    lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


def m_swap_keys(text: str, rng: random.Random) -> str:
    """Swap the key of one `key: value` line with the key of another."""
    found = list(re.finditer(r"(?m)^( *-? *)([A-Za-z_][A-Za-z_0-9, ]*):", text))
    if len(found) < 2:
        return text
    a, b = sorted(rng.sample(found, 2), key=lambda m: m.start())
    ka, kb = a.group(2), b.group(2)
    return (text[:a.start(2)] + kb + text[a.end(2):b.start(2)] + ka + text[b.end(2):])


def m_indent(text: str, rng: random.Random) -> str:
    start, end = _line_bounds(text, rng)
    line = text[start:end]
    choice = rng.randrange(4)
    if choice == 0:
        line = " " * rng.randint(1, 5) + line
    elif choice == 1:
        line = line.lstrip(" ")
    elif choice == 2:
        line = "\t" + line.lstrip(" ")
    else:
        line = line[1:] if line.startswith(" ") else " " + line
    return text[:start] + line + text[end:]


def m_wrong_value(text: str, rng: random.Random) -> str:
    found = list(re.finditer(r"(?m)^( *(?:- )?[A-Za-z_][A-Za-z_0-9, ]*:)( .*)?$", text))
    if not found:
        return text
    m = rng.choice(found)
    return text[:m.start()] + m.group(1) + " " + rng.choice(WRONG_VALUES) + text[m.end():]


def m_unicode(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(UNICODE) + text[at:]


def m_long_line(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    filler = rng.choice(["x", "a, ", "Tensor self, ", "(", "[", " "]) * rng.choice([1000, 20000])
    return text[:at] + filler + text[at:]


def m_nul(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + "\x00" + text[at:]


def m_crlf(text: str, rng: random.Random) -> str:
    return text.replace("\n", "\r\n") if rng.random() < 0.5 else _some_lines(text, rng, "\r\n")


def m_lone_cr(text: str, rng: random.Random) -> str:
    return text.replace("\n", "\r") if rng.random() < 0.2 else _some_lines(text, rng, "\r")


def _some_lines(text: str, rng: random.Random, end: str) -> str:
    return "".join(line + (end if rng.random() < 0.3 else "\n") for line in text.split("\n"))[:-1]


def m_random_chars(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    junk = "".join(rng.choice("-:#&*!|>'\"%@`{}[],?\n \t\\") for _ in range(rng.randint(1, 12)))
    return text[:at] + junk + text[at:]


def m_yaml_tricks(text: str, rng: random.Random) -> str:
    trick = rng.choice(["--- \n", "...\n", "%YAML 1.1\n", "&anchor ", "*anchor", "<<: *a\n", "? complex\n",
                        "!!python/object:os.system ", "!custom ", "- ", "-\n", ": x\n"])
    at = rng.randrange(len(text) + 1)
    return text[:at] + trick + text[at:]


def m_deep(text: str, rng: random.Random) -> str:
    """Deep nesting (libyaml's composer recursed on the C stack; its scanner is quadratic in flow depth)."""
    n = rng.choice([63, 65, 500, 5000, 60000])
    deep = rng.choice(["- " * n + "x", "[" * n + "]" * n, "{a: " * n + "}" * n, "[" * n])
    at = rng.randrange(len(text) + 1)
    return text[:at] + deep + text[at:]


def m_alias_bomb(text: str, rng: random.Random) -> str:
    """Nested aliases that expand exponentially ("billion laughs")."""
    lines = ["  b0: &b0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"  b{i}: &b{i} [" + ", ".join([f"*b{i - 1}"] * 10) + "]" for i in range(1, rng.randint(3, 9))]
    start, end = _line_bounds(text, rng)
    return text[:end] + "\n" + "\n".join(lines) + text[end:]


MUTATORS: list[Callable[[str, random.Random], str]] = [
    m_deep, m_alias_bomb,
    m_delete, m_delete_lines, m_duplicate, m_duplicate_lines, m_truncate, m_swap_lines, m_swap_keys, m_indent,
    m_wrong_value, m_unicode, m_long_line, m_nul, m_crlf, m_lone_cr, m_random_chars, m_yaml_tricks,
]


def mutate(text: str, rng: random.Random, count: int | None = None) -> str:
    for _ in range(count if count is not None else rng.randint(1, 4)):
        text = rng.choice(MUTATORS)(text, rng)
    return text


# ---------------------------------------------------------------- every layer on one input

# Time bound for one input through every layer: a fixed part plus a part proportional to its size.
BOUND_FIXED_S = 2.0
BOUND_PER_CHAR_S = 2e-5  # the real native_functions.yaml (607k chars) is parsed in about 1 s on a 2-core machine


def time_bound(text: str) -> float:
    return BOUND_FIXED_S + BOUND_PER_CHAR_S * len(text)


@dataclass
class Inputs:
    tags: TagsSnapshot
    native: NativeSnapshot  # the real file's, that backend yamls are resolved against
    tags_path: str


def sample_positions(text: str, rng: random.Random, count: int) -> list[tuple[int, int]]:
    lines = text.split("\n")
    out = []
    for _ in range(count):
        line = rng.randrange(len(lines) + 1)
        width = len(lines[line]) if line < len(lines) else 0
        out.append((line, rng.randint(0, width + 2)))
    return out


def run_layers(text: str, inputs: Inputs, rng: random.Random, *, kind: str | None = None,
               positions: int = 8, explain_ops: int = 3) -> int:
    """Run `text` through every layer; return the number of diagnostics. Exceptions propagate (a test fails)."""
    kind = kind or classify("", text)
    count = 0
    if kind == BACKEND:
        count += len(check_backend(text, inputs.native).diagnostics)
        return count
    if kind == TAGS:
        snapshot = TagsParser().parse(text)
        count += len(snapshot.diagnostics)
        symbols_query.tag_symbols(snapshot)
    native = NativeParser(release=DEFAULT).parse(text, inputs.tags.names)
    count += len(native.diagnostics)
    for d in native.diagnostics:
        assert d.code and d.message, d
    # explain on the parsed model
    explainer = Explainer(native.functions, native.release)
    names = explainer.names
    for name in rng.sample(names, min(explain_ops, len(names))):
        explainer.explain(name)
    # the LSP features, through a workspace analysis (the code the handlers call)
    workspace = Workspace(settings=Settings(tags_path=inputs.tags_path))
    uri = "file:///fuzz/native_functions.yaml"
    workspace.open(uri, "/fuzz/native_functions.yaml", text, 1)
    analysis = workspace.analyse(uri)
    assert analysis is not None
    client = features.Client()
    features.diagnostic_items(analysis, client)
    features.document_symbols(analysis, client)
    features.document_symbols(analysis, features.Client(hierarchical_symbols=False))
    features.folding_ranges(analysis, client)
    features.workspace_symbols([analysis], "add", 50, client)
    for line, col in sample_positions(text, rng, positions):
        p = types.Position(line=line, character=col)
        features.hover(analysis, p, client)
        features.completion(analysis, p, client)
        features.definition(analysis, p, client)
        features.references(analysis, p, True, client)
    return count


def check_one(text: str, inputs: Inputs, rng: random.Random, **kw) -> tuple[int, float]:
    """run_layers, timed; fails if it took longer than the bound for its size twice in a row (a collector pause
    in a long test process, or a busy machine, takes one run over it; a blow-up takes both)."""
    started = time.perf_counter()
    count = run_layers(text, inputs, rng, **kw)
    elapsed = time.perf_counter() - started
    if elapsed >= time_bound(text):  # the same text again (positions of its own: rng goes on untouched)
        started = time.perf_counter()
        run_layers(text, inputs, random.Random(len(text)), **kw)
        elapsed = min(elapsed, time.perf_counter() - started)
    assert elapsed < time_bound(text), f"{elapsed:.2f} s for {len(text)} chars (twice)"
    return count, elapsed


def load_inputs() -> Inputs | None:
    native = aten_native()
    if native is None:
        return None
    tags = TagsParser().parse((native / "tags.yaml").read_text(encoding="utf-8"))
    snapshot = NativeParser(release=DEFAULT).parse((native / "native_functions.yaml").read_text(encoding="utf-8"), tags.names)
    # As the language server does once the real file is loaded: the collector's passes over this heap
    # (0.1-0.3 s each) are not the cost of the input under test.
    gc.collect()
    gc.freeze()
    return Inputs(tags, snapshot, str(native / "tags.yaml"))


# ---------------------------------------------------------------- edit sequences

@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


FRAGMENTS = ["\n", "- ", "- func: ", "  dispatch:\n    CPU: k\n", "  variants: function, method\n", "  tags: core\n",
             "x", "(", ")", "Tensor self", ", ", ":", "#", "  ", "\r\n", "é", "😀", "  structured_delegate: add.out\n",
             "- func: zz_new(Tensor self) -> Tensor\n", "\n\n", "  autogen: abs.out\n", "[", "]",
             "  # a note\u2028 more\n", "\r", "  # form\x0cfeed\n", "\x85", "\t"]


def random_edit(text: str, rng: random.Random, entries: list[str]) -> Edit:
    n = len(text)
    kind = rng.randrange(6)
    if kind == 0:  # insert a fragment
        at = rng.randint(0, n)
        return Edit(at, at, rng.choice(FRAGMENTS))
    if kind == 1:  # delete a short range
        a = rng.randint(0, n)
        return Edit(a, min(n, a + rng.choice([1, 3, 10, 40])), "")
    if kind == 2:  # delete across entry boundaries
        a = rng.randint(0, n)
        return Edit(a, min(n, a + rng.randint(50, 1500)), "")
    if kind == 3:  # replace
        a = rng.randint(0, n)
        return Edit(a, min(n, a + rng.randint(1, 30)), rng.choice(FRAGMENTS))
    starts = [m.start() + 1 for m in re.finditer(r"\n- ", text)] or [n]
    at = rng.choice(starts)
    if kind == 4:  # paste a whole entry at an entry boundary
        return Edit(at, at, rng.choice(entries))
    end = text.find("\n- ", at)  # cut a whole entry
    return Edit(at, n if end == -1 else end + 1, "")


def apply(text: str, edit: Edit) -> str:
    return text[:edit.start] + edit.text + text[edit.end:]


def random_edits(text: str, rng: random.Random, count: int, entries: list[str]) -> list[Edit]:
    out = []
    for _ in range(count):
        edit = random_edit(text, rng, entries)
        out.append(edit)
        text = apply(text, edit)
    return out


def state(snapshot: NativeSnapshot, tags: TagsSnapshot, text: str, probes: list[tuple[int, int]]) -> dict:
    """What a user sees of a snapshot: diagnostics, the model (canonical form), hovers, symbols."""
    canonical = _canonical()
    functions = snapshot.functions
    return {
        "diagnostics": list(snapshot.diagnostics),
        "model": [canonical.native_function(op.function, op.line) for op in functions.ops],
        "groups": [canonical.group(g) for g in functions.groups],
        "symbols": symbols_query.native_symbols(snapshot),
        "hovers": [hover_query.hover(snapshot, tags, line, col) for line, col in probes],
        "entries": [e.line for e in snapshot.document.entries],
        "views": [canonical.group(g) for g in functions.view_groups],
    }


def _canonical():
    """tests/conformance/canonical.py (its folder is a top-level package under pytest and the benchmark)."""
    import sys

    tests = str(ROOT / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from conformance import canonical
    return canonical


def env_seed(default: int = 20260) -> int:
    return int(os.environ.get("OPGEN_FUZZ_SEED", default))


# ---------------------------------------------------------------- a synthetic file N times the real one

_FUNC_NAME = re.compile(r"^(- func: )([A-Za-z0-9_]+)", re.M)
_DELEGATE = re.compile(r"^(  structured_delegate: )([A-Za-z0-9_]+)", re.M)
_AUTOGEN = re.compile(r"^(  autogen: )(.*)$", re.M)


def _renamed_entry(entry: str, prefix: str) -> str | None:
    """The entry with every operator name it declares or refers to prefixed; None for dunder ops."""
    m = _FUNC_NAME.search(entry)
    if m is None or m.group(2).startswith("__"):
        return None
    entry = _FUNC_NAME.sub(lambda m: m.group(1) + prefix + m.group(2), entry, count=1)
    entry = _DELEGATE.sub(lambda m: m.group(1) + prefix + m.group(2), entry)
    return _AUTOGEN.sub(lambda m: m.group(1) + ", ".join(prefix + n.strip() for n in m.group(2).split(",")), entry)


def synthetic(native_text: str, copies: int, tags: frozenset[str]) -> str:
    """native_functions.yaml `copies` times over, the copies' ops renamed (r1_abs, ...) so that all are unique.

    Entries whose renamed copy breaks a rule keyed on names (exempt lists, name patterns) are left out of
    the copies, so that the whole file is as clean as the real one.
    """
    entries = [e if e.endswith("\n") else e + "\n" for e in entries_of(native_text)]
    head = native_text if native_text.endswith("\n") else native_text + "\n"
    keep = [i for i, e in enumerate(entries) if _renamed_entry(e, "r1_") is not None]
    for _ in range(4):
        copy = [_renamed_entry(entries[i], "r1_") for i in keep]
        starts, line = [], head.count("\n")
        for text in copy:
            starts.append(line)
            line += text.count("\n")  # type: ignore[union-attr]
        bad = {bisect.bisect_right(starts, d.span.start_line) - 1
               for d in NativeParser(release=DEFAULT).parse(head + "".join(copy), tags).diagnostics  # type: ignore[arg-type]
               if d.span.start_line >= starts[0]}
        if not bad:
            break
        keep = [i for j, i in enumerate(keep) if j not in bad]
    parts = [head]
    for k in range(1, copies):
        parts.append("".join(_renamed_entry(entries[i], f"r{k}_") for i in keep))  # type: ignore[misc]
    return "".join(parts)
