"""`opgen generate`: read the inputs, plan gen.py's files, write them. The IO around the pure plan."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

from ..analysis.shims import load_fallback_ops
from ..diagnostics import Diagnostic, diag
from ..index.inputs import InputError, InvalidInput, invalid_input, load_native, read_input
from ..index.native import NativeSnapshot, TagsParser
from ..input_file import UnreadableFile, read_text
from ..model import dispatch as dk
from ..model.native_aot import NONE, read_native_aot
from ..releases import Release
from ..text import Span, as_python_reads
from .contributions import Contributions, Fingerprints
from .file_record import Built, FileRecord, env_key
from .files.aoti import header_check, shim_failures
from .files.aten import plan_aten
from .files.context import GenContext, GenerateOptions
from .files.native_aot import declaration_errors, native_aot_ops_dir
from .plan import Dirs, Env, GeneratedFile, Manager, PlanError, PlannedFile, materialize, outputs_lists, render
from .progress import Progress, Report
from .runs import output_stat, regular_stat
from .selection import ALL_OPERATORS, Selection, from_allow_list, read_selection
from .workers import Job, internal_error, usable_cpus, write_in_processes
from .writer import Refused, Seen, WriteResult, make_folder, refusals, write_files, write_if_changed

if TYPE_CHECKING:
    from ..cache.store import Cache


@dataclass(frozen=True)
class Memo:
    """Where a run keeps its per-item contributions (codegen/contributions.py): the cache, the digest of the run's
    constants (every input but native_functions.yaml, the command line, the release), and whether the inputs are
    still those digested (checked once they are read: if not, the run keeps nothing)."""

    cache: Cache
    constants: str
    unchanged: Callable[[], bool]


@dataclass(frozen=True)
class GenerateResult:
    planned: tuple[PlannedFile, ...]
    written: WriteResult | None
    errors: tuple[str, ...]
    notes: tuple[str, ...] = ()  # printed as gen.py prints them (an AOTI header not found)
    located: tuple[str, ...] = ()  # the inputs' errors, each `path:line:col: error: ...` (then errors says why)
    invalid: bool = False  # the errors are errors of the inputs' content (exit status 1, not 2)
    # the --output-dependencies lists written or found unchanged, each with the sha256 of its bytes
    lists: tuple[tuple[str, str], ...] = ()
    # the files left as they were by their recorded keys (file_record.py), each with its stat then
    kept: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    # the files built, written or not, whose bytes were read back as the run's (file_record.py), each with its stat
    verified: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def missing(self) -> tuple[PlannedFile, ...]:
        return tuple(p for p in self.planned if not p.implemented)


def dirs_of(options: GenerateOptions) -> Dirs:
    return Dirs(options.install_dir, options.headeronly_dir, options.aoti_install_dir)


def read_if_present(path: str) -> str | None:
    """A file's text, None when there is none (other read errors raise InputError)."""
    try:
        return read_text(path)
    except UnreadableFile as exc:
        if exc.missing:
            return None
        raise InputError(str(exc)) from None


def read_templates(folder: str) -> dict[str, str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        raise InputError(f"{folder}: {exc.strerror or exc}") from exc
    return {n: read_input(os.path.join(folder, n)) for n in names if os.path.isfile(os.path.join(folder, n))}


def check_options(options: GenerateOptions) -> list[str]:
    errors = []
    if options.op_registration_whitelist is not None and options.op_selection_yaml_path is not None:
        errors.append("--op-registration-whitelist and --op-selection-yaml-path cannot be given together")
    for name in options.static_dispatch_backend or ():
        if dk.parse_dispatch_key(name) is None or name in options.release.dispatch_key_names_unknown:
            errors.append(f"--static-dispatch-backend: unknown dispatch key {name}")
    return errors


def load_selection(options: GenerateOptions) -> Selection:
    """The operators to register (raises InputError for an unreadable selection yaml, InvalidInput with each
    error at its line for one torchgen refuses)."""
    if options.op_registration_whitelist is not None:
        return from_allow_list(options.op_registration_whitelist)
    path = options.op_selection_yaml_path
    if path is None:
        return ALL_OPERATORS
    selection, found = read_selection(as_python_reads(read_input(path)))
    if selection is None:
        raise invalid_input(path, [d for d in found if d.is_error], ", as torchgen's SelectiveBuilder reads it")
    return selection


def load_context(options: GenerateOptions, memo: Memo | None = None) -> GenContext:
    """Read native_functions.yaml, tags.yaml and the templates under --source-path (raises InputError).
    memo: where to keep the per-item contributions across runs (none: each is computed anew)."""
    native = os.path.join(options.source_path, "native", "native_functions.yaml")
    tags_path = os.path.join(options.source_path, "native", "tags.yaml")
    ignore = options.ignore_keys
    inputs = load_native(native, tags_path, ignore, release=options.release)
    if inputs.errors:
        raise invalid_input(native, inputs.errors)
    tags = frozenset(TagsParser().parse(read_input(tags_path)).names)
    templates = read_templates(os.path.join(options.source_path, "templates"))
    fallback_ops, why = load_fallback_ops(options.source_path, options.release)
    native_aot = read_native_aot(native_aot_ops_dir(options)) if options.release.writes_native_aot_stubs else NONE
    ctx = GenContext(inputs.snapshot.functions, tags, options, templates, fallback_ops, why, load_selection(options),
                     native_aot)
    if memo is not None and memo.unchanged():  # (the fingerprints: of the very text parsed)
        model = inputs.snapshot.functions
        ctx = replace(ctx, contributions=Contributions(memo.cache, memo.constants, Fingerprints(model, inputs.text)))
    return refuse_native_aot_errors(refuse_shim_failures(ctx, native))


def inputs_read(options: GenerateOptions) -> list[tuple[str, str]]:
    """What generate(options) reads, (kind, path) each as codegen/runs.py digests them: a run record holds them.
    Beside load_context on purpose: an input read there (or by header_check) must be named here too."""
    from ..analysis.shims import fallback_ops_candidates  # noqa: PLC0415

    native = os.path.join(options.source_path, "native")
    templates = os.path.join(options.source_path, "templates")
    found = [("file", os.path.join(native, "native_functions.yaml")), ("file", os.path.join(native, "tags.yaml")),
             ("folder", templates)]
    found += [("file", os.path.join(templates, name)) for name in _names(templates)]
    found += [("file", path) for path in fallback_ops_candidates(options.source_path)]
    if options.op_selection_yaml_path is not None:
        found.append(("file", options.op_selection_yaml_path))
    if options.release.writes_native_aot_stubs:
        folder = native_aot_ops_dir(options)
        if folder:
            found.append(("folder", folder))
            found += [("file", os.path.join(folder, name, "aot.py")) for name in _names(folder)]
    if not options.update_aoti_c_shim and "sources" in options.generate:  # header_check's checked-in headers
        found.append(("matching:c_shim_*.h", dirs_of(options).of(Manager.aoti)))
    return found


def _names(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def refuse_native_aot_errors(ctx: GenContext) -> GenContext:
    """ctx, unless gen.py refuses its native-AOT declarations (InvalidInput, each at its aot.py)."""
    from ..report import FileDiagnostic, render_text  # noqa: PLC0415  (only for declarations gen.py refuses)

    errors = list(ctx.native_aot.errors) + declaration_errors(ctx)
    if not errors:
        return ctx
    located = tuple(render_text([FileDiagnostic(path, d) for path, d in errors]).splitlines())
    raise InvalidInput(f"{len(errors)} native-AOT declaration error(s); nothing generated", located)


def native_aot_check(native_path: str, snapshot: NativeSnapshot) -> list[Diagnostic]:
    """For `opgen check`: what gen.py refuses in the native-AOT declarations of the tree (torch 2.15 on; the
    default folder generate reads, torch/_native/ops of the checkout), on line 1 of native_functions.yaml, each
    naming its aot.py and line."""
    if not snapshot.release.writes_native_aot_stubs:
        return []
    source = os.path.dirname(os.path.dirname(os.path.abspath(native_path)))
    options = GenerateOptions(source_path=source, release=snapshot.release)
    read = read_native_aot(native_aot_ops_dir(options))
    ctx = GenContext(snapshot.functions, frozenset(), options, {}, native_aot=read)
    return [diag(d.code, Span.point(0, 0), f"{path}:{d.span.start_line + 1}: {d.message}")
            for path, d in (*read.errors, *declaration_errors(ctx))]


def refuse_shim_failures(ctx: GenContext, native_path: str) -> GenContext:
    """ctx, unless gen.py's AOTI shim generator would fail on a fallback op of it (InvalidInput, each at its
    argument): those errors need fallback_ops.py, which the parse of native_functions.yaml alone does not read."""
    failures = shim_failures(ctx)
    if failures:
        raise invalid_input(native_path, list(failures))
    return ctx


def plan(ctx: GenContext) -> list[PlannedFile]:
    return plan_aten(ctx)


# Light files are handed out this many cost units at a time (one claim each: the per-operator layout has
# thousands of small files).
BATCH_COST = 8


def work_units(planned: Sequence[PlannedFile]) -> list[list[int]]:
    """The indices of the buildable files, grouped by the work they share, the costliest groups first
    (otherwise in plan order); light neighbours batched up to BATCH_COST."""
    shared: dict[str, list[int]] = {}
    for i, p in enumerate(planned):
        if p.build is not None:
            shared.setdefault(p.work, []).append(i)
    units: list[list[int]] = []
    batch_cost = BATCH_COST
    for unit in sorted(shared.values(), key=lambda unit: -sum(planned[i].cost for i in unit)):
        cost = sum(planned[i].cost for i in unit)
        if units and batch_cost + cost <= BATCH_COST:
            units[-1] += unit
            batch_cost += cost
        else:
            units.append(list(unit))
            batch_cost = cost
    return units


def file_jobs(planned: Sequence[PlannedFile], ctx: GenContext, dirs: Dirs, record: FileRecord | None = None
              ) -> list[Job]:
    """One job per planned file (an unimplemented one fails if asked for its bytes: work_units leaves it out).
    record: told the key of each file built whose key is its environment's (file_record.py)."""
    place = dirs.placer()  # (each manager's folder worked out once, not once per file)

    def data(p: PlannedFile) -> Callable[[], bytes]:
        def build() -> bytes:
            # (build is None for an unimplemented file, for which no job is run: see the docstring)
            env = p.build()  # type: ignore[misc]
            if record is not None:
                _note_key(p, *place(p.manager, p.path), env, ctx.templates, record)
            return render(p.template, ctx.templates, env, ctx.options.release).encode("utf-8")
        return build
    return [Job(*place(p.manager, p.path), data(p)) for p in planned]


def default_processes() -> int:
    """OPGEN_PROCESSES if set, else one process per usable CPU, at most two; one when other threads run
    (a process forked while another thread holds a lock would inherit it held, e.g. in a server)."""
    value = os.environ.get("OPGEN_PROCESSES", "")
    if value.isascii() and value.isdigit() and int(value) > 0:  # (str.isdigit also takes '²', which int refuses)
        return int(value)
    if threading.active_count() > 1:
        return 1
    return min(usable_cpus(), 2)


def write_planned(planned: Sequence[PlannedFile], ctx: GenContext, dirs: Dirs, processes: int,
                  progress: Report | None = None, record: FileRecord | None = None, seen: Seen | None = None
                  ) -> tuple[WriteResult | None, tuple[str, ...]]:
    """Build and write every implemented file: (the writer's result, the errors that stopped the run).
    progress: told of the files done as they are (see progress.Progress).
    record: the files' keys of the last run (file_record.py): a file whose key it holds, unchanged on disk, is
    neither built nor written (it counts as unchanged); None: every file is built.
    seen: the lstat of each file taken in this run (confinement_errors'), which the record judges it by."""
    memo = ctx.contributions
    buildable = sum(p.build is not None for p in planned)
    tally = [0, 0]  # done, written

    def on_file(changed: bool) -> None:
        tally[0] += 1
        tally[1] += changed
        if progress is not None:
            progress(Progress(buildable, *tally))
    kept: list[str] = []
    if record is not None:  # the files whose key is known before they are built (a key may compute a piece)
        place = dirs.placer()
        try:
            planned = [p for p in planned if not _kept_by_key(p, place, record, kept, on_file, seen or {})]
        except PlanError as exc:
            return None, (str(exc),)
        except Exception as exc:  # noqa: BLE001  (a bug: one line, as the worker processes give it)
            return None, (internal_error(exc),)
    if processes > 1:
        # in each process: keep what it computed, read back its own files (beside the others), and say their keys
        # and the orders of the keys it computed (the parent writes them all)
        def finish(done: WriteResult) -> tuple[object, ...]:
            if memo is not None:
                memo.save()
            return ((() if record is None else record.read_back(done.digests),
                     None if memo is None else memo.orders.taken()),)
        written, finished, stopped = write_in_processes(file_jobs(planned, ctx, dirs, record), work_units(planned),
                                                        processes, progress, finish,
                                                        None if memo is None else memo.unit_done)
        if stopped:
            return None, stopped
        for built, orders in cast(tuple[tuple[tuple[Built, ...], Any], ...], finished):
            if record is not None:
                record.adopt(built)
            if memo is not None:
                memo.orders.adopt(orders)
        if memo is not None:
            memo.orders.save()
        return _with_kept(written, kept, record), ()
    # Streamed: each file is rendered, written and dropped before the next (peak memory is one file's
    # bytes, not all of them). A PlanError stops the run; the files already written are complete.
    try:
        written = write_files(_rendered(planned, ctx, dirs, record, kept, on_file), on_file=on_file)
        if memo is not None:
            memo.save()
            memo.orders.save()
        return _with_kept(written, kept, record), ()
    except PlanError as exc:
        return None, (str(exc),)
    except Exception as exc:  # noqa: BLE001  (a bug: one line, as the worker processes give it)
        return None, (internal_error(exc),)


def _kept_by_key(p: PlannedFile, place: Callable[[Manager, str], tuple[str, str]], record: FileRecord,
                 kept: list[str], on_file: Callable[[bool], None], seen: Seen) -> bool:
    """Whether p is kept as it is (its key, known before building it, is the one recorded); notes its key if not.
    A first run (no record) computes no key here: each is computed once its file is built (see _note_key).
    seen: the lstats taken in this run, by place (a file not there is stat'ed now)."""
    if p.build is None or p.key is None or record.empty:
        return False
    placed = place(p.manager, p.path)
    path, key = record.path(*placed), p.key()
    now = regular_stat(seen[placed]) if placed in seen else output_stat(path)
    if record.fresh_as(path, key, now):
        kept.append(path)
        on_file(False)
        return True
    record.built(path, key)
    return False


def _note_key(p: PlannedFile, root: str, relative: str, env: Env | str, templates: Mapping[str, str],
              record: FileRecord) -> str:
    """Note the key of a file just built (its given key, else its environment's), unless noted before; its path."""
    path = record.path(root, relative)
    if not record.has_key(path):
        record.built(path, p.key() if p.key is not None else env_key(p.template, templates.get(p.template), env))
    return path


def _rendered(planned: Sequence[PlannedFile], ctx: GenContext, dirs: Dirs, record: FileRecord | None,
              kept: list[str], on_file: Callable[[bool], None]) -> Iterator[tuple[str, str, bytes]]:
    """(root, path, bytes) of each file to write; with a record, a file whose environment's key it holds (and is
    unchanged on disk) is kept instead, unrendered."""
    release = ctx.options.release
    place = dirs.placer()
    sharing = None  # the work the files so far share (work_units' units), told to the memo when it changes
    for p in planned:
        if p.build is None:
            continue
        if ctx.contributions is not None and sharing != p.work:
            if sharing is not None:
                ctx.contributions.unit_done()
            sharing = p.work
        root, relative = place(p.manager, p.path)
        env = p.build()
        if record is not None and p.key is None:
            path, key = record.path(root, relative), env_key(p.template, ctx.templates.get(p.template), env)
            if record.fresh(path, key):
                kept.append(path)
                on_file(False)
                continue
            record.built(path, key)
        elif record is not None:
            _note_key(p, root, relative, env, ctx.templates, record)
        yield root, relative, render(p.template, ctx.templates, env, release).encode("utf-8")


def _with_kept(written: WriteResult, kept: Sequence[str], record: FileRecord | None) -> WriteResult:
    """The writer's result with the files kept counted unchanged; the record of this run stored."""
    if record is None:
        return written
    record.store(written.digests)
    return WriteResult(written.written, (*written.unchanged, *kept), written.errors,
                       (*written.digests, *record.kept()))


# The folders gen.py makes before it writes anything.
OUTPUT_FOLDERS = (Manager.core, Manager.ops, Manager.aoti, Manager.headeronly)


def confinement_errors(planned: Sequence[PlannedFile], dirs: Dirs, seen: Seen | None = None) -> tuple[str, ...]:
    """The files that would leave their output folder, checked before anything is written or made; first the
    folders gen.py makes up front inside -d (core/, ops/): when one leaves, only it is named, not each file.
    seen: told the lstat of each file checked (see writer.resolve_inside)."""
    folders = refusals(dict.fromkeys(place for place in map(dirs.place, OUTPUT_FOLDERS) if place[1]))
    place = dirs.placer()
    return folders or refusals((place(p.manager, p.path) for p in planned if p.build is not None), seen=seen)


def made_up_front(release: Release) -> tuple[Manager, ...]:
    """The folders gen.py makes before it writes: core and ops; the AOTI one from 2.4 (--aoti-install-dir), the
    header-only one from 2.12 (--headeronly-install-dir). (Before, a folder comes with the first file in it.)"""
    return (Manager.core, Manager.ops, *([Manager.aoti] if release.gen_py_takes_aoti_flags else []),
            *([Manager.headeronly] if not release.enum_tag_in_core else []))


def make_folders(dirs: Dirs, release: Release) -> tuple[str, ...]:
    """Make the output folders as gen.py does up front; an error for each that cannot be made."""
    errors: list[str] = []
    made: set[str] = set()
    for manager in made_up_front(release):
        folder = dirs.of(manager)
        if folder in made:
            continue
        made.add(folder)
        try:
            make_folder(*dirs.place(manager))  # inside -d: no symbolic link below it followed
        except Refused as exc:
            errors.append(str(exc))
        except (OSError, ValueError) as exc:
            errors.append(f"{folder}: cannot make the output folder: {getattr(exc, 'strerror', None) or exc}")
    return tuple(errors)


def generate(options: GenerateOptions, *, implemented_only: bool = False, processes: int | None = None,
             progress: Report | None = None, memo: Memo | None = None) -> GenerateResult:
    """Plan, build and write (unless dry run) every implemented file; errors come back as values.

    processes: how many processes build and write the files (default: default_processes()).
    progress: told of the files planned once they are, then of each file done (see progress.Progress).
    memo: where the per-item contributions are kept across runs (None: nowhere)."""
    errors = check_options(options)
    if errors:
        return GenerateResult((), None, tuple(errors))
    try:
        ctx = load_context(options, memo)
    except InvalidInput as exc:
        return GenerateResult((), None, (str(exc),), located=exc.located, invalid=True)
    except InputError as exc:
        return GenerateResult((), None, (str(exc),))
    planned = plan(ctx)
    dirs = dirs_of(options)
    seen: Seen = {}
    refused = confinement_errors(planned, dirs, seen)
    if refused:
        return GenerateResult(tuple(planned), None, refused)
    made = make_folders(dirs, options.release)
    if made:
        return GenerateResult(tuple(planned), None, made)
    # The checked-in AOTI headers must not change (unless --update-aoti-c-shim): checked before any write.
    try:
        headers = header_check(ctx, dirs.of(Manager.aoti), read_if_present)
    except InputError as exc:
        return GenerateResult(tuple(planned), None, (str(exc),))
    if headers.errors:
        return GenerateResult(tuple(planned), None, headers.errors, headers.notes)
    written = None
    record: FileRecord | None = None
    if not options.dry_run:
        if progress is not None:
            progress(Progress(sum(p.build is not None for p in planned), 0, 0))
        if memo is not None and ctx.contributions is not None:
            record = FileRecord(memo.cache, memo.constants)
        if processes is None:  # after an edit, little is built: one process, which keeps every file's key
            processes = 1 if record is not None and not record.empty else default_processes()
        written, stopped = write_planned(planned, ctx, dirs, processes, progress, record, seen)
        if stopped:
            return GenerateResult(tuple(planned), None, stopped)
    lists = []
    if options.output_dependencies:
        listed = [p for p in planned if p.implemented or not implemented_only]
        depfile = os.path.realpath(options.output_dependencies)
        for path, text in outputs_lists(listed, dirs, depfile, xpu=options.xpu_flag,
                                         release=options.release):
            data = text.encode("utf-8")
            try:
                write_if_changed(path, data)
                lists.append((path, hashlib.sha256(data).hexdigest()))
            except (OSError, ValueError) as exc:
                errors.append(f"{path}: {getattr(exc, 'strerror', None) or exc}")
    return GenerateResult(tuple(planned), written, tuple(errors) + (written.errors if written else ()),
                          headers.notes, lists=tuple(lists), kept={} if record is None else record.kept_stats(),
                          verified={} if record is None else record.verified_stats())


class Engine:
    """The long-lived generator a server keeps: one NativeParser (entries cached by their text), the
    tags and templates read once, and the memoized per-op pieces (functools caches keyed by the frozen
    model), so that regenerating after an edit recomputes only what the edited entries touch."""

    def __init__(self, options: GenerateOptions) -> None:
        from ..index.native import NativeParser

        self.options = options
        tags_path = os.path.join(options.source_path, "native", "tags.yaml")
        self._tags = frozenset(TagsParser().parse(read_input(tags_path)).names)
        self._templates = read_templates(os.path.join(options.source_path, "templates"))
        self._parser = NativeParser(options.ignore_keys, release=options.release)
        self._fallback_ops, self._fallback_ops_missing = load_fallback_ops(options.source_path,
                                                                               options.release)
        self._selection = load_selection(options)
        self._native_aot = read_native_aot(native_aot_ops_dir(options)) if options.release.writes_native_aot_stubs \
            else NONE

    def context(self, native_text: str) -> GenContext:
        snapshot = self._parser.parse(native_text, self._tags)
        errors = [d for d in snapshot.diagnostics if d.is_error]
        if errors:
            raise InputError(f"native_functions.yaml has {len(errors)} error(s), the first: {errors[0].message}")
        native = os.path.join(self.options.source_path, "native", "native_functions.yaml")
        ctx = GenContext(snapshot.functions, self._tags, self.options, self._templates, self._fallback_ops,
                         self._fallback_ops_missing, self._selection, self._native_aot)
        return refuse_native_aot_errors(refuse_shim_failures(ctx, native))

    def files(self, native_text: str) -> list[GeneratedFile]:
        """Every implemented file's bytes for this text of native_functions.yaml (raises InputError, PlanError)."""
        ctx = self.context(native_text)
        return materialize(plan(ctx), ctx.templates, ctx.options.release)
