"""Every run of a torch release's torchgen (or of another reference) in the tests goes through `run`: its result is
cached by what it depends on.

A run's key is a digest of the torchgen it imports (the package folder, hashed once per process), the bytes of
every input (each existing path on its command line, folders whole, and the `inputs` the caller names), the
command line, the environment it is given and the Python and PyYAML it runs on. Absolute paths (the working
folder, the command line's paths, the outputs, the checkout, the torchgen root) are written as placeholders in
the key and in what is stored, and the current ones are put back on a hit: a fresh clone in another folder and
pytest's new tmp folders hit the same entries. An entry holds the exit status, stdout, stderr and the output
files and folders the caller names; it is written to a temporary folder and renamed into place, and every file
is checked against its digest on replay, so a run killed half way or two runs at once never leave an entry that
is trusted. A hit writes the same bytes a real run would.

A test module whose reference is many small verdicts (the parse of every mutation of a file, say) runs them as
one batch with `run_json`: a driver script reads a job (written with every file it names into one folder, the
folder an input as a whole) and prints every verdict the module needs as JSON, which the tests look up; a cold
run pays one process for the batch, a warm one a replay. Drivers: tests/conformance/release_oracle.py (the
native_functions.yaml verdict), autograd_release_oracle.py (the autograd loaders), backend_oracle.py
(gen_backend_stubs), tests/nativefunctions_lint.py (ruamel's NATIVEFUNCTIONS lint, keyed by ruamel's folder too).
A driver reads only the job's folder, torchgen and what `inputs` names (what it imports from beside itself too).

The entries live in $OPGEN_REFERENCE_CACHE when it names a folder, else in the user cache dir
($XDG_CACHE_HOME or ~/.cache)/opgen/reference, beside the torchgen folders tools/torchgen_release.py keeps;
OPGEN_REFERENCE_CACHE=off runs torchgen every time; OPGEN_REFERENCE_REFRESH=1 runs it and stores each result
anew, replacing the entry. opgen's own output is never cached: only torchgen's.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FORMAT = "opgen-reference 2"
PLACEHOLDER = b"\0@"  # how a placeholder starts: \0@name@\0
DISABLED = ("off", "0", "no", "false")
SKIPPED_FOLDERS = frozenset({"__pycache__", ".git"})


def cache_folder() -> Path | None:
    """Where entries live; None when OPGEN_REFERENCE_CACHE turns the cache off."""
    chosen = os.environ.get("OPGEN_REFERENCE_CACHE", "")
    if chosen.lower() in DISABLED:
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "opgen" / "reference"


# ---------------------------------------------------------------- digests

def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tree_digest(path: Path, normalise) -> str:
    """A file's or folder's bytes (folders: every file under it by relative path, following symlinks), with the
    places' paths written as placeholders; a missing path digests as such."""
    digest = hashlib.sha256()
    if path.is_file():
        digest.update(b"file\0" + normalise(path.read_bytes()))
    elif path.is_dir():
        for folder, dirs, files in os.walk(path, followlinks=True):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS)
            relative = os.path.relpath(folder, path)
            digest.update(f"dir\0{relative}\0".encode())
            for name in sorted(files):
                if name.endswith(".pyc"):
                    continue
                file = Path(folder, name)
                digest.update(f"file\0{relative}/{name}\0".encode())
                digest.update(hashlib.sha256(normalise(file.read_bytes())).digest() if file.exists() else b"dangling")
    else:
        digest.update(b"missing")
    return digest.hexdigest()


@cache
def _torchgen_digest(package: Path) -> str:
    """torchgen's own files, and what it reads beside itself in a release folder (torch/version.py and the lazy
    shape-inference header); once per process per folder."""
    parts = [_tree_digest(package, lambda b: b)]
    for beside in ("torch/version.py", "torch/include/torch/csrc/lazy/core/shape_inference.h"):
        file = package.parent / beside
        parts.append(_file_digest(file) if file.is_file() else "-")
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _installed_torchgen() -> Path | None:
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def torchgen_package(pythonpath: Sequence[Path]) -> Path | None:
    """The torchgen folder a process with this PYTHONPATH imports (the first entry holding one, else the
    installed torch's)."""
    for entry in pythonpath:
        if (entry / "torchgen" / "__init__.py").is_file():
            return (entry / "torchgen").resolve()
    return _installed_torchgen()


@cache
def _pyyaml() -> str:
    try:
        return importlib.metadata.version("PyYAML")
    except importlib.metadata.PackageNotFoundError:
        return "-"


# ---------------------------------------------------------------- placeholders

@dataclass(frozen=True, slots=True)
class Places:
    """Named absolute paths, written as placeholders in keys and stored bytes and put back on replay."""

    named: tuple[tuple[str, str], ...]  # (name, absolute path) of the call, in the order they were named
    machine: tuple[tuple[str, str], ...] = ()  # the checkout, the interpreter, torchgen: not in the key's layout

    def _all(self) -> tuple[tuple[str, str], ...]:
        return self.named + self.machine

    def _pattern(self, exclude: str = "") -> re.Pattern[bytes] | None:
        paths = sorted({p for n, p in self._all() if n != exclude and p not in ("", "/")}, key=len, reverse=True)
        if not paths:
            return None
        return re.compile(b"(" + b"|".join(re.escape(p.encode()) for p in paths) + rb")(?![\w.-])")

    def _name_of(self) -> dict[bytes, bytes]:
        first: dict[bytes, bytes] = {}
        for name, path in self._all():
            first.setdefault(path.encode(), f"\0@{name}@\0".encode())
        return first

    def normalise(self, data: bytes) -> bytes:
        pattern = _compiled(self)
        if pattern is None or not data:
            return data
        names = self._name_of()
        return pattern.sub(lambda m: names[m.group(1)], data)

    def restore(self, data: bytes) -> bytes:
        if PLACEHOLDER not in data:
            return data
        current = {f"\0@{name}@\0".encode(): path.encode() for name, path in self._all()}
        return re.sub(rb"\0@[\w.-]+@\0", lambda m: current.get(m.group(0), m.group(0)), data)

    def layout(self) -> list[tuple[str, str]]:
        """How the places lie in each other (out0 = <cwd>/out), without the absolute paths themselves."""
        out = []
        for name, path in self.named:
            pattern = self._pattern(exclude=name)
            rel = path.encode()
            if pattern is not None:
                names = {k: v for k, v in self._name_of().items() if v != f"\0@{name}@\0".encode()}
                rel = pattern.sub(lambda m, names=names: names.get(m.group(1), m.group(1)), rel)
            out.append((name, rel.decode("utf-8", "replace") if rel != path.encode() else "-"))
        return out


@cache
def _machine_places(pythonpath: tuple[Path, ...]) -> tuple[tuple[str, str], ...]:
    named = [("checkout", str(ROOT)), ("prefix", sys.prefix), ("base_prefix", sys.base_prefix)]
    package = torchgen_package(pythonpath)
    if package is not None:
        named.append(("torchgen_root", str(package.parent)))
    return tuple(named)


@cache
def _compiled(places: Places) -> re.Pattern[bytes] | None:
    return places._pattern()


# ---------------------------------------------------------------- the call

@dataclass(frozen=True, slots=True)
class Call:
    argv: tuple[str, ...]  # after the interpreter
    cwd: Path
    pythonpath: tuple[Path, ...]
    env: tuple[tuple[str, str], ...]  # set beside os.environ (PYTHONPATH aside)
    inputs: tuple[Path, ...]
    outputs: tuple[Path, ...]

    def places(self) -> Places:
        named = [("cwd", str(self.cwd))]
        named += [(f"arg{i}", a) for i, a in enumerate(self.argv) if os.path.isabs(a)]
        named += [(f"py{i}", str(p)) for i, p in enumerate(self.pythonpath)]
        named += [(f"in{i}", str(p)) for i, p in enumerate(self.inputs)]
        named += [(f"out{i}", str(p)) for i, p in enumerate(self.outputs)]
        return Places(tuple(named), _machine_places(self.pythonpath))

    def read_paths(self) -> list[Path]:
        """What the run reads: each existing path of the command line (relative ones from cwd), and `inputs`."""
        found = []
        for arg in self.argv:
            if not arg or arg.startswith("-") or "\0" in arg:
                continue
            path = self.cwd / arg
            try:
                exists = path.exists()
            except OSError:  # no file could be named so (a script given with -c, say): its text is in the key
                exists = False
            if exists:
                found.append(path)
        return [*found, *self.inputs]

    def key(self) -> str:
        places = self.places()
        package = torchgen_package(self.pythonpath)
        parts = {
            "format": FORMAT,
            "python": sys.version,
            "pyyaml": _pyyaml(),
            "torchgen": _torchgen_digest(package) if package is not None else "-",
            "argv": [places.normalise(a.encode()).decode("utf-8", "replace") for a in self.argv],
            "env": [[k, places.normalise(v.encode()).decode("utf-8", "replace")] for k, v in self.env],
            "layout": places.layout(),
            "read": [[places.normalise(str(p).encode()).decode("utf-8", "replace"), _tree_digest(p, places.normalise)]
                     for p in self.read_paths()],
            "outputs": [places.normalise(str(p).encode()).decode("utf-8", "replace") for p in self.outputs],
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _call(argv: Sequence[str | os.PathLike[str]], cwd: Path, outputs: Sequence[Path], pythonpath: Sequence[Path],
          env: Mapping[str, str] | None, inputs: Sequence[Path]) -> Call:
    args = tuple(os.fspath(a) for a in argv)
    if len(args) > 1 and args[0] == "-m" and args[1].startswith("opgen"):
        raise ValueError("opgen's own output is never cached: run it directly")
    return Call(args, Path(cwd).absolute(), tuple(Path(p).absolute() for p in pythonpath),
                tuple(sorted((env or {}).items())), tuple(Path(p).absolute() for p in inputs),
                tuple((Path(cwd) / p).absolute() for p in outputs))


def run(argv: Sequence[str | os.PathLike[str]], *, cwd: Path, outputs: Sequence[Path] = (),
        pythonpath: Sequence[Path] = (), env: Mapping[str, str] | None = None, inputs: Sequence[Path] = (),
        check: bool = False, text: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess:
    """`python argv...` in cwd, as subprocess.run(..., capture_output=True) would: from the cache when a run of the
    same torchgen on the same bytes is there, else for real (and then stored).

    argv: what follows the interpreter (`-m torchgen.gen ...`, or an oracle script and its arguments). outputs: the
    files and folders the run writes (relative ones under cwd), replayed on a hit. pythonpath: PYTHONPATH (the
    release folder; empty: the installed torch's torchgen). env: variables set beside os.environ. inputs: what
    the run reads that its command line does not name (files an oracle's job names, a tree's tools/ package)."""
    call = _call(argv, cwd, outputs, pythonpath, env, inputs)
    folder = cache_folder()
    key = call.key() if folder is not None else ""
    entry = folder / key[:2] / key if folder is not None else None
    if entry is not None and os.environ.get("OPGEN_REFERENCE_REFRESH"):
        shutil.rmtree(entry, ignore_errors=True)  # run for real and store anew (an entry suspected wrong)
    if entry is not None:
        replayed = _replay(entry, call)
        if replayed is not None:
            return _completed(call, *replayed, check=check, text=text)
    returncode, stdout, stderr = _execute(call, timeout)
    if entry is not None:
        _store(entry, call, returncode, stdout, stderr)
    return _completed(call, returncode, stdout, stderr, check=check, text=text)


@dataclass(frozen=True, slots=True)
class Output:
    """One file a run wrote: its sha256 and its bytes, read only when asked (for a diff on a mismatch)."""

    digest: str
    read: Callable[[], bytes]


@dataclass(frozen=True, slots=True)
class Outputs:
    """A run's result with the files it wrote as digests: {output's relative path / file's relative path: Output}."""

    done: subprocess.CompletedProcess
    files: dict[str, Output]


def run_digests(argv: Sequence[str | os.PathLike[str]], *, cwd: Path, outputs: Sequence[Path],
                pythonpath: Sequence[Path] = (), env: Mapping[str, str] | None = None,
                inputs: Sequence[Path] = ()) -> Outputs:
    """`run`, but the output files are not written into place on a hit: their digests come from the entry (a
    comparison of thousands of files then reads none of them twice). On a miss (or with the cache off) torchgen
    runs for real into cwd and the files are digested there. Keys are paths relative to cwd, '/'-separated."""
    call = _call(argv, cwd, outputs, pythonpath, env, inputs)
    folder = cache_folder()
    if folder is not None and not os.environ.get("OPGEN_REFERENCE_REFRESH"):
        key = call.key()
        found = _digests(folder / key[:2] / key, call)
        if found is not None:
            return found
    done = run(argv, cwd=cwd, outputs=outputs, pythonpath=pythonpath, env=env, inputs=inputs)
    return Outputs(done, _digests_on_disk(call))


def _relative(call: Call, output: Path, relative: str) -> str:
    return (output / relative if relative else output).relative_to(call.cwd).as_posix()


def _digests_on_disk(call: Call) -> dict[str, Output]:
    files = {}
    for output in call.outputs:
        for relative in _files_of(output):
            path = output / relative if relative else output
            data = path.read_bytes()
            files[_relative(call, output, relative)] = Output(hashlib.sha256(data).hexdigest(), lambda d=data: d)
    return files


def _digests(entry: Path, call: Call) -> Outputs | None:
    """The entry's result as digests (files with placeholders restored and digested now); None when absent or
    damaged (then `run` drops and remakes it)."""
    try:
        meta = json.loads((entry / "meta.json").read_text())
        if meta.get("format") != FORMAT or len(meta["outputs"]) != len(call.outputs):
            return None
        places = call.places()
        streams = {n: places.restore(_stored(entry / n, meta["streams"][n])) for n in ("stdout", "stderr")}
        files = {}
        for i, (output, listed) in enumerate(zip(call.outputs, meta["outputs"], strict=True)):
            for relative, digest, has_places, size, mtime in listed["files"]:
                stored = entry / "files" / str(i) / (relative or "_")
                if has_places:
                    data = places.restore(_stored(stored, digest))
                    files[_relative(call, output, relative)] = Output(hashlib.sha256(data).hexdigest(),
                                                                      lambda d=data: d)
                    continue
                _unchanged(stored, size, mtime)  # a stored file written into since is not trusted
                files[_relative(call, output, relative)] = Output(digest, lambda s=stored, d=digest: _stored(s, d))
    except (OSError, _Corrupt, KeyError, TypeError, ValueError):
        return None
    return Outputs(_completed(call, meta["returncode"], streams["stdout"], streams["stderr"], check=False, text=True),
                   files)


def run_json(script: Path, job: object, folder: Path, *, pythonpath: Sequence[Path] = (), inputs: Sequence[Path] = (),
             outputs: Sequence[Path] = (), timeout: float | None = None) -> Any:
    """A batch: one run of `python script folder/job.json` that computes every verdict a test module needs.

    The job is written as JSON into `folder`, beside the files it names (the caller writes them there first):
    the folder is an input as a whole, so the key covers every byte of every file of the batch, and a test looks
    its case up in the JSON the script prints (returned). outputs: what the script writes besides (under folder,
    say), replayed on a hit. A failed run raises with the script's stderr."""
    folder.mkdir(parents=True, exist_ok=True)
    job_file = folder / "job.json"
    job_file.write_text(json.dumps(job, sort_keys=True))
    done = run([script, job_file], cwd=folder, outputs=outputs, pythonpath=pythonpath, inputs=[folder, *inputs],
               timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(script).name} failed with status {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def _execute(call: Call, timeout: float | None) -> tuple[int, bytes, bytes]:
    environment = {**os.environ, **dict(call.env)}
    if call.pythonpath:
        environment["PYTHONPATH"] = os.pathsep.join(map(str, call.pythonpath))
    done = subprocess.run([sys.executable, *call.argv], cwd=call.cwd, env=environment, capture_output=True,
                          timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def _completed(call: Call, returncode: int, stdout: bytes, stderr: bytes, *, check: bool,
               text: bool) -> subprocess.CompletedProcess:
    out: bytes | str = stdout.decode() if text else stdout
    err: bytes | str = stderr.decode() if text else stderr
    args = [sys.executable, *call.argv]
    if check and returncode != 0:
        raise subprocess.CalledProcessError(returncode, args, out, err)
    return subprocess.CompletedProcess(args, returncode, out, err)


# ---------------------------------------------------------------- entries

def _files_of(output: Path) -> list[str]:
    """The files under an output folder (relative, sorted), or [""] for an output file, [] when absent."""
    if output.is_file():
        return [""]
    if not output.is_dir():
        return []
    return sorted(os.path.relpath(os.path.join(d, f), output) for d, _, fs in os.walk(output) for f in fs)


def _store(entry: Path, call: Call, returncode: int, stdout: bytes, stderr: bytes) -> None:
    places = call.places()
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=entry.parent))
    try:
        listed = []
        for i, output in enumerate(call.outputs):
            kind = "file" if output.is_file() else "dir" if output.is_dir() else "absent"
            files = []
            for relative in _files_of(output):
                data = places.normalise((output / relative if relative else output).read_bytes())
                stored = staging / "files" / str(i) / (relative or "_")
                stored.parent.mkdir(parents=True, exist_ok=True)
                stored.write_bytes(data)
                # A file with no placeholder is linked into place on replay, checked by its size and mtime.
                seen = stored.stat()
                files.append([relative, hashlib.sha256(data).hexdigest(), PLACEHOLDER in data, seen.st_size,
                              seen.st_mtime_ns])
            dirs = sorted(os.path.relpath(d, output) for d, _, _ in os.walk(output)) if kind == "dir" else []
            listed.append({"kind": kind, "files": files, "dirs": dirs})
        streams = {"stdout": places.normalise(stdout), "stderr": places.normalise(stderr)}
        for name, data in streams.items():
            (staging / name).write_bytes(data)
        meta = {"format": FORMAT, "returncode": returncode, "outputs": listed,
                "streams": {n: hashlib.sha256(d).hexdigest() for n, d in streams.items()}}
        (staging / "meta.json").write_text(json.dumps(meta))  # written last: no meta, no entry
        os.rename(staging, entry)
    except OSError:
        pass  # another process stored it first, or the disk is full: the result stands, uncached
    finally:
        shutil.rmtree(staging, ignore_errors=True)


class _Corrupt(Exception):
    pass


def _stored(path: Path, digest: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _Corrupt(str(path)) from exc
    if hashlib.sha256(data).hexdigest() != digest:
        raise _Corrupt(str(path))
    return data


# An entry with at least this many files (a per-operator tree) is hard-linked into place: copying 7,000 files on
# every replay costs seconds. Smaller ones are copied, so that a test editing a replayed file (a checked-in header it
# then changes, say) never writes into the entry.
LINKED_FROM = 500


def _unchanged(stored: Path, size: int, mtime: int) -> None:
    """A stored file with no placeholder is trusted by its size and mtime (reading 7,000 files back to hash them
    would cost what the cache saves). A test that wrote into a linked file changed them: the entry is dropped."""
    try:
        seen = stored.stat()
    except OSError as exc:
        raise _Corrupt(str(stored)) from exc
    if (seen.st_size, seen.st_mtime_ns) != (size, mtime):
        raise _Corrupt(str(stored))


def _place(stored: Path, target: Path, link: bool) -> None:
    target.unlink(missing_ok=True)
    if link:
        try:
            os.link(stored, target)
            return
        except OSError:
            pass  # another file system: copied instead
    shutil.copyfile(stored, target)


def _replay(entry: Path, call: Call) -> tuple[int, bytes, bytes] | None:
    """The stored result, its files written into place; None (the entry dropped) when it is absent or damaged.
    Every stored file is checked before any output is touched: a damaged entry leaves the caller's files (inputs
    inside an output folder among them) as they were, for the real run that follows."""
    try:
        meta = json.loads((entry / "meta.json").read_text())
    except (OSError, ValueError):
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)
        return None
    places = call.places()
    try:
        if meta.get("format") != FORMAT or len(meta["outputs"]) != len(call.outputs):
            raise _Corrupt("format")
        streams = {n: places.restore(_stored(entry / n, meta["streams"][n])) for n in ("stdout", "stderr")}
        link = sum(len(listed["files"]) for listed in meta["outputs"]) >= LINKED_FROM
        writes: list[tuple[Path, Path, bytes | None]] = []  # (stored, target, restored bytes, or None: placed as is)
        dirs: list[Path] = []
        for i, (output, listed) in enumerate(zip(call.outputs, meta["outputs"], strict=True)):
            dirs += [output / relative for relative in listed["dirs"]]
            for relative, digest, has_places, size, mtime in listed["files"]:
                stored = entry / "files" / str(i) / (relative or "_")
                target = output / relative if relative else output
                if has_places:
                    writes.append((stored, target, places.restore(_stored(stored, digest))))
                else:
                    _unchanged(stored, size, mtime)
                    writes.append((stored, target, None))
    except (_Corrupt, KeyError, TypeError, ValueError):
        shutil.rmtree(entry, ignore_errors=True)
        return None
    for folder in dirs:
        folder.mkdir(parents=True, exist_ok=True)
    for stored, target, data in writes:
        target.parent.mkdir(parents=True, exist_ok=True)
        if data is None:
            _place(stored, target, link)
        else:
            target.write_bytes(data)
    return meta["returncode"], streams["stdout"], streams["stderr"]
