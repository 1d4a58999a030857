"""How a torch release's own torchgen and opgen are given the same inputs and their files compared, shared by the
release matrix (tests/conformance/test_release_matrix.py) and benchmarks/bench_releases.py:

- torch_xla's backend yaml follows the newest torch: `fit_to` leaves out the ops a release lacks (its own copy would
  not list them), and `without_refused` the ops that release's generators cannot generate, which opgen names
  (`refusals`: OPG514, an op listed without the variant whose out= wrapper torchgen before 2.1 fails on; OPG513, an
  op under `symint` whose schema has no SymInt before 2.0);
- gen_lazy_tensor 1.13 takes the underscore spellings of its flags only (`spelled`);
- gen.py before 2.1 lists an op's tags in RegisterSchema.cpp in a set's order, which changes from run to run: that
  one file is compared modulo the order inside each tag list (`same_file`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from opgen_lsp.frozen import record
from opgen_lsp.releases import Release, migration_note

SCHEMA = "aten/RegisterSchema.cpp"
_TAG_LIST = re.compile(rb"\{(at::Tag::\w+(?:, at::Tag::\w+)*)\}")


def tags_sorted(text: bytes) -> bytes:
    """RegisterSchema.cpp with the tags inside each {at::Tag::...} list sorted."""
    return _TAG_LIST.sub(lambda m: b"{" + b", ".join(sorted(m.group(1).split(b", "))) + b"}", text)


def modulo_tag_order(name: str, release: Release) -> bool:
    """Whether the file `name` (relative to gen.py's output root) is compared modulo the order of its tag lists."""
    return name == SCHEMA and not release.schema_tags_sorted


def same_file(name: str, theirs: bytes, ours: bytes, release: Release) -> bool:
    """gen.py's file and opgen's are the same: byte for byte, or (modulo_tag_order) once gen.py's tag lists are
    sorted, as opgen writes them in every release."""
    if modulo_tag_order(name, release):
        return ours == tags_sorted(ours) and tags_sorted(theirs) == ours
    return theirs == ours


_OP_LINE = re.compile(r"\s*- ([A-Za-z0-9_.]+)\s*$")


def fit_to(yaml_text: str, release: Release) -> str:
    """A backend yaml less the ops `release` lacks."""
    return "".join(line for line in yaml_text.splitlines(keepends=True)
                   if not ((m := _OP_LINE.match(line)) and migration_note(m.group(1), release)))


def without(yaml_text: str, names: Iterable[str], section: str | None = None) -> str:
    """yaml_text less the `- name` lines of `names` (in `section` only, when given)."""
    names = set(names)
    kept, current = [], None
    for line in yaml_text.splitlines(keepends=True):
        if (top := re.match(r"([A-Za-z_]+):", line)) is not None:
            current = top.group(1)
        if (m := _OP_LINE.match(line)) and m.group(1) in names and section in (None, current):
            continue
        kept.append(line)
    return "".join(kept)


# OPG514 as opgen says it: the op listed, and its variant whose out= wrapper the release's torchgen cannot write.
_REFUSED_WRAPPER = re.compile(r"'([^']+)' is listed without its variant '([^']+)'.*\[OPG514\]")
# OPG513 as opgen says it: an op listed under symint whose schema (in this release) has no SymInt.
_REFUSED_SYMINT = re.compile(r"'([^']+)' is listed under 'symint', but its schema has no SymInt.*\[OPG513\]")
# Where gen_lazy_tensor or gen_backend_stubs failed: the function it was generating, in its error context.
FAILED_AT = re.compile(r"in native_functions\.yaml line [^\n]*:\n\s*([A-Za-z0-9_.]+)\(")


@record
class Refusals:
    """The ops opgen refuses in a backend yaml because the release's generators fail on them."""

    wrappers: Mapping[str, str]  # the op listed -> its variant whose out= wrapper fails (OPG514)
    symint: frozenset[str]  # listed under `symint` without a SymInt in this release's schema (OPG513)

    def __bool__(self) -> bool:
        return bool(self.wrappers or self.symint)

    def names(self) -> list[str]:
        return sorted(self.wrappers) + [f"{name} (symint)" for name in sorted(self.symint)]


def refusals(said: str) -> Refusals:
    """The refusals in what opgen printed for a backend yaml."""
    return Refusals(dict(m.groups() for m in _REFUSED_WRAPPER.finditer(said)),
                    frozenset(_REFUSED_SYMINT.findall(said)))


def without_refused(yaml_text: str, refused: Refusals) -> str:
    """yaml_text less the ops of `refused`: each wrapper's listed op, and each symint op from the symint section."""
    return without(without(yaml_text, refused.wrappers), refused.symint, "symint")


def spelled(args: Iterable[str], release: Release) -> list[str]:
    """A torchgen command line's flags as `release` spells them: `--a-b`, or `--a_b` where it has no dashed
    aliases (1.13; Release.command_line_dashed_aliases)."""
    if release.command_line_dashed_aliases:
        return list(args)
    return ["--" + a[2:].replace("-", "_") if a.startswith("--") else a for a in args]
