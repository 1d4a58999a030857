"""The inputs that cost the most memory per byte, one of each kind (issue 16), each made to a size in characters.

Used by tests/reliability/test_bounded_memory.py (tracemalloc peaks against the 20x bound) and by
benchmarks/bench_bounded.py (peak RSS of `opgen check` and of the language server).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import count


def _repeat(piece: str, size: int) -> str:
    return piece * max(1, size // len(piece))


def _numbered(template: str, size: int) -> str:
    """template.format(i=0), template.format(i=1), ... up to size characters."""
    pieces: list[str] = []
    total = 0
    for i in count():
        if total >= size:
            return "".join(pieces)
        piece = template.format(i=i)
        pieces.append(piece)
        total += len(piece)
    raise AssertionError("unreachable")


def tags_list(size: int) -> str:
    """One entry `tags: [core, core, ...]` (the 50 MB case of issue 16)."""
    head = "- func: f(Tensor self) -> Tensor\n  tags: ["
    return head + ", ".join(["core"] * ((size - len(head)) // len("core, "))) + "]\n"


def many_entries(size: int) -> str:
    """`- func: a` again and again (the 500,000-entry case of issue 16): one OPG200 each."""
    return _repeat("- func: a\n", size)


def empty_entries(size: int) -> str:
    """The shortest entry there is, again and again."""
    return _repeat("-\n", size)


def distinct_bad_entries(size: int) -> str:
    """`- func: a0`, `- func: a1`, ...: each composed and diagnosed on its own."""
    return _numbered("- func: a{i}\n", size)


def distinct_functions(size: int) -> str:
    """The shortest valid entries, all different: a whole NativeFunction each."""
    return _numbered("- func: f{i}(Tensor self) -> Tensor\n", size)


def out_functions(size: int) -> str:
    """Out= functions with a kernel each."""
    return _numbered("- func: f{i}.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: k{i}\n", size)


def autogen_functions(size: int) -> str:
    """Functions that generate a second one (autogen)."""
    return _numbered("- func: f{i}(Tensor self) -> Tensor\n  dispatch:\n    CompositeExplicitAutograd: k\n"
                     "  autogen: f{i}.out\n", size)


def dense_flow_lists(size: int) -> str:
    """Entries of 2,000 one-letter unknown tags: a value and a diagnostic per three characters."""
    return _numbered("- func: f{i}(Tensor self) -> Tensor\n  tags: [" + ", ".join(["a"] * 2_000) + "]\n", size)


def dense_block_lists(size: int) -> str:
    """Entries of 2,000 `- a` lines under precomputed:."""
    return _numbered("- func: f{i}(Tensor self) -> Tensor\n  precomputed:\n" + "  - a\n" * 2_000, size)


def scalar_entries(size: int) -> str:
    """Entries that are scalars, not mappings: an OPG003 each."""
    return "- func: f(Tensor self) -> Tensor\n" + _numbered("- a{i}\n", size)


def stray_lines(size: int) -> str:
    """Column-0 lines that are no entries: an OPG002 each."""
    return _numbered("a{i}\n", size)


CLASSES: dict[str, Callable[[int], str]] = {
    "`tags: [core, core, ...]`": tags_list,
    "`- func: a` repeated": many_entries,
    "`-` repeated": empty_entries,
    "`- func: a<i>`": distinct_bad_entries,
    "`- func: f<i>(Tensor self) -> Tensor`": distinct_functions,
    "out= functions with a kernel": out_functions,
    "autogen functions": autogen_functions,
    "flow lists of 2,000 unknown tags": dense_flow_lists,
    "block lists of 2,000 items": dense_block_lists,
    "scalar entries `- a<i>`": scalar_entries,
    "stray lines `a<i>`": stray_lines,
}
