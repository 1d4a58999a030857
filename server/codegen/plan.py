"""What `opgen generate` writes: a pure plan of files, each built from a template and an environment.

The plan follows gen.py's FileManager: every file is a template from
`<source>/templates` filled with an environment (plus a `generated_comment`),
or a plain string; sharded files are split by a stable sha1 hash of each
item's key into `<stem>_0 .. <stem>_<N-1>` plus `<stem>Everything`, which
holds all items and is left out of the outputs list.

Nothing here reads or writes files: the templates come in as text, and the
result is a list of PlannedFile whose content is built on demand (so that a
dry run or an outputs list costs nothing) and then a list of GeneratedFile.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field
from enum import Enum
from pathlib import PurePosixPath
from typing import Any, TypeVar

from ..frozen import record
from ..pieces.template import Template, TemplateError
from ..releases import Release

T = TypeVar("T")

# gen.py names itself by its path relative to the folder holding the torchgen package.
GENERATOR = "torchgen/gen.py"


class Manager(Enum):
    """gen.py's FileManagers: where a file goes and which outputs list names it."""

    cpu = ("cpu", "")
    cpu_vec = ("cpu_vec", "cpu_vec_")
    cuda = ("cuda", "cuda_")
    xpu = ("xpu", "xpu_")
    core = ("core", "core_")
    ops = ("ops", "ops_")
    aoti = ("aoti", None)
    headeronly = ("headeronly", None)

    @property
    def outputs_prefix(self) -> str | None:
        """The prefix of its outputs list file (None: gen.py writes no list for it)."""
        return self.value[1]


@record
class Dirs:
    """The folders gen.py writes into, spelled as given on the command line."""

    install: str
    headeronly: str
    aoti: str

    def place(self, manager: Manager, path: str = "") -> tuple[str, str]:
        """(root, path inside it) of a file, for the writer to confine it to root. A manager's folder inside -d
        (core/, ops/, a headeronly or aoti folder given inside it) is confined to -d, so that a symlinked
        core/ leading elsewhere is refused rather than followed; another folder given is a root of its own."""
        root, inside = self._folder_place(manager)
        if inside is None:
            return root, path
        return root, "/".join(p for p in (inside, path) if p)

    def _folder_place(self, manager: Manager) -> tuple[str, str | None]:
        """(-d, the manager's folder inside it) when it is inside -d, else (its folder, None)."""
        folder = self.of(manager)
        relative = not (os.path.isabs(self.install) and os.path.isabs(folder))
        inside = _inside(self.install, folder, os.getcwd() if relative else "")
        return (folder, None) if inside is None else (self.install, inside)

    def placer(self) -> Callable[[Manager, str], tuple[str, str]]:
        """place, with each manager's folder worked out once (for the thousands of files of one run)."""
        known: dict[Manager, tuple[str, str | None]] = {}

        def place(manager: Manager, path: str) -> tuple[str, str]:
            found = known.get(manager)
            if found is None:
                found = known[manager] = self._folder_place(manager)
            root, inside = found
            if inside is None:
                return root, path
            return root, (f"{inside}/{path}" if inside and path else inside or path)  # (place's join, faster)
        return place

    def of(self, manager: Manager) -> str:
        if manager is Manager.core:
            return f"{self.install}/core"
        if manager is Manager.ops:
            return f"{self.install}/ops"
        if manager is Manager.headeronly:
            return self.headeronly
        if manager is Manager.aoti:
            return self.aoti
        return self.install


@functools.lru_cache(maxsize=64)  # (a few folders, asked for each of thousands of files)
def _inside(root: str, folder: str, cwd: str) -> str | None:
    """folder's path relative to root when it is root or under it, as spelled (no IO but the current folder,
    `cwd`, which relative paths are taken from); None otherwise."""
    relative = os.path.relpath(os.path.abspath(folder), os.path.abspath(root))
    if relative == ".":
        return ""
    return None if relative == ".." or relative.startswith(".." + os.sep) else relative


Env = Mapping[str, Any]
Build = Callable[[], "Env | str"]


@record
class PlannedFile:
    manager: Manager
    path: str  # relative to the manager's folder
    template: str  # the template it is made from (named in its generated comment)
    # Returns the environment (or the whole text); None when opgen cannot generate this file yet.
    build: Build | None = field(compare=False)
    # Whether the outputs list (-o) names it; gen.py leaves out the sharded <stem>Everything files.
    listed: bool = True
    missing_reason: str = ""
    # Files naming the same work share memoized pieces (a sharded family, Register<Key>.cpp and
    # <Key>Functions_inl.h): a parallel writer builds them in one process. "": the file's own path.
    shares: str = field(default="", compare=False)
    # A rough relative cost of building it: a parallel writer hands out the costly work first.
    cost: int = field(default=1, compare=False)
    # The digest of everything it is built from, computed without building it (None: known once built); a file
    # whose key the last run recorded is not built again (file_record.py).
    key: Callable[[], str] | None = field(default=None, compare=False)

    @property
    def implemented(self) -> bool:
        return self.build is not None

    @property
    def work(self) -> str:
        """What names the work it shares with other files (`shares`, else its own path)."""
        return self.shares or self.path


@record
class GeneratedFile:
    manager: Manager
    path: str
    data: bytes


class PlanError(ValueError):
    """The inputs cannot be generated from (an unknown template, a bad kernel namespace, ...)."""


@functools.lru_cache(maxsize=1 << 16)  # (per root name: every sharded family hashes the same names)
def string_stable_hash(s: str) -> int:
    """A string hash that does not change from run to run (sha1, little-endian)."""
    return int.from_bytes(hashlib.sha1(s.encode("latin1")).digest(), "little")


def generated_comment(template: str) -> str:
    return "@" + f"generated by {GENERATOR} from {template}"


# gen.py keeps a blank line between a docstring and the class/def after it (it matters for .pyi files).
_DOCSTRING_GAP = re.compile(r'(""")\n+((\s*@.+\n)*\s*(class|def))')


def render(template_name: str, templates: Mapping[str, str], env: Env | str, release: Release) -> str:
    """A file's text: the template filled with env (plus its generated comment) as the release's torchgen fills
    it, or env itself if a string."""
    if isinstance(env, str):
        return env
    text = templates.get(template_name)
    if text is None:
        raise PlanError(f"no template {template_name} in the templates folder")
    if "generated_comment" not in env:
        env = {**env, "generated_comment": generated_comment(template_name)}
    try:
        out = Template(text, template_name).substitute(env, release.template_blocks_strip_lines)
    except TemplateError as exc:
        raise PlanError(str(exc)) from exc
    return _DOCSTRING_GAP.sub(r"\g<1>\n\n\g<2>", out)


def single(manager: Manager, path: str, build: Build | None, *, template: str | None = None,
           missing_reason: str = "", shares: str = "", cost: int = 1, key: Callable[[], str] | None = None
           ) -> PlannedFile:
    return PlannedFile(manager, path, template or path, build, True, missing_reason, shares, cost, key)


def missing(manager: Manager, path: str, reason: str = "not implemented yet", *, template: str | None = None,
            listed: bool = True) -> PlannedFile:
    return PlannedFile(manager, path, template or path, None, listed, reason)


def _with_stem(path: str, suffix: str) -> str:
    p = PurePosixPath(path)
    return str(p.with_name(f"{p.stem}{suffix}{p.suffix}"))


def shard_names(path: str, num_shards: int) -> list[tuple[str, bool]]:
    """(file, listed) for a sharded file: <stem>Everything (not listed) then <stem>_0 .. _N-1."""
    return [(_with_stem(path, "Everything"), False)] + [(_with_stem(path, f"_{i}"), True) for i in range(num_shards)]


def shard_envs(items: Iterable[T], *, key_fn: Callable[[T], str], env_fn: Callable[[T], Mapping[str, list]],
               num_shards: int, sharded_keys: frozenset[str], base_env: Env | None = None) -> list[dict[str, Any]]:
    """The environments of [Everything, _0, .., _N-1], as FileManager.write_sharded builds them."""
    ids = ["Everything"] + [f"_{i}" for i in range(num_shards)]
    envs: list[dict[str, Any]] = [{"shard_id": sid, **(base_env or {})} for sid in ids]
    for env in envs:
        for key in sharded_keys:
            if key in env and not isinstance(env[key], list):
                raise PlanError(f"sharded key {key} of the base environment must be a list")
            env[key] = list(env.get(key, []))
    for item in items:
        shard = envs[1 + string_stable_hash(key_fn(item)) % num_shards]
        for key, values in env_fn(item).items():
            if key not in sharded_keys:
                raise PlanError(f"undeclared sharded key {key}")
            envs[0][key] += values
            shard[key] += values
    return envs


# A sharded family builds its items once for all its files: among the heaviest work of a plan.
SHARDED_FAMILY_COST = 2


def sharded(manager: Manager, path: str, template: str, envs: Callable[[], list[dict[str, Any]]],
            num_shards: int, keys: Callable[[int], Callable[[], str] | None] | None = None) -> list[PlannedFile]:
    """A sharded file family; the shard environments are computed once, on first use. keys: each file's key
    (PlannedFile.key) by its index in [Everything, _0, .., _N-1]."""
    cache: dict[str, list[dict[str, Any]]] = {}

    last = num_shards  # the index of the last file of the family ([Everything, _0, .., _N-1])

    def shard(i: int) -> Build:
        def build() -> Env:
            if "envs" not in cache:
                cache["envs"] = envs()
            env = cache["envs"][i]
            if i == last:  # built in order: let the family's environments go (a later call recomputes them)
                del cache["envs"]
            return env
        return build

    return [PlannedFile(manager, name, template, shard(i), listed, shares=path, cost=SHARDED_FAMILY_COST,
                        key=None if keys is None else keys(i))
            for i, (name, listed) in enumerate(shard_names(path, num_shards))]


def shard_keys(num_shards: int, items: Callable[[], Sequence[T]], key_fn: Callable[[T], str],
               key: Callable[[int, Sequence[T]], str]) -> Callable[[int], Callable[[], str] | None]:
    """The keys of a sharded family's files (see sharded): key(i, the items of file i, in order), where the items
    of shard _i are those shard_envs puts there (Everything: all of them)."""
    by_shard: list[list[list[T]]] = []  # (the items of each shard, found once for the family)

    def of(i: int) -> Callable[[], str]:
        def chosen() -> str:
            found = items()
            if i and num_shards > 1:
                if not by_shard:
                    shards: list[list[T]] = [[] for _ in range(num_shards)]
                    for item in found:
                        shards[string_stable_hash(key_fn(item)) % num_shards].append(item)
                    by_shard.append(shards)
                found = by_shard[0][i - 1]
            return key(i, found)
        return chosen
    return of


def sharded_missing(manager: Manager, path: str, template: str, num_shards: int, reason: str) -> list[PlannedFile]:
    return [PlannedFile(manager, name, template, None, listed, reason)
            for name, listed in shard_names(path, num_shards)]


def materialize(planned: Sequence[PlannedFile], templates: Mapping[str, str],
                release: Release) -> list[GeneratedFile]:
    """Build every implemented file of the plan (the unimplemented ones are skipped; report them first)."""
    return [GeneratedFile(p.manager, p.path, render(p.template, templates, p.build(), release).encode("utf-8"))
            for p in planned if p.build is not None]


def outputs_lists(planned: Sequence[PlannedFile], dirs: Dirs, depfile: str, *, xpu: bool = False,
                  release: Release) -> list[tuple[str, str]]:
    """The (path, text) of each outputs list gen.py writes for -o/--output-dependencies.

    `depfile` is the resolved path of -o; each manager's list sits beside it, named <prefix><name>,
    and names its files as install-dir/path (sorted), in a cmake `set(<prefix><stem> ...)`.
    """
    dep = PurePosixPath(depfile)
    managers = [Manager.cpu, Manager.cpu_vec, Manager.core, Manager.ops, Manager.cuda]
    if xpu:
        managers.append(Manager.xpu)
    out = []
    for manager in managers:
        files = sorted((PurePosixPath(dirs.of(manager)) / p.path for p in planned
                        if p.manager is manager and p.listed), key=lambda x: x.parts)
        prefix = manager.outputs_prefix or ""
        names = [f'"{f.as_posix()}"' for f in files]
        if release.outputs_list_name_on_set_line:
            text = f"set({prefix + dep.stem}\n    " + "\n    ".join(names) + ")"
        else:
            text = "\n".join(["set(", prefix + dep.stem, *(f"    {name}" for name in names), ")"])
        out.append((str(dep.parent / (prefix + dep.name)), text))
    return out
