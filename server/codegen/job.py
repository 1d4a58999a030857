"""`opgen generate` as a job a long-lived process can run: file by file, with progress and cancellation.

The language server's `opgen.generate` command runs this on a worker thread. It
uses the same engine as `opgen generate` (read, plan, render, write-if-changed);
the difference is that every output folder lies inside one output directory (the AOTI
shims too, written as `--update-aoti-c-shim` writes them: there are no checked-in headers
to compare with there) and the job checks between files whether it has been cancelled.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from ..analysis.shims import load_fallback_ops
from ..index.inputs import InputError, load_native, packaged_aten, read_input
from ..index.native import TagsParser
from ..releases import resolve_for
from .files.context import GenContext, GenerateOptions
from .generate import confinement_errors, dirs_of, plan, read_templates, refuse_shim_failures
from .plan import PlanError, PlannedFile, render
from .progress import Progress  # (also what the server's generate command reports)
from .writer import OutputRoots, write_files


@dataclass(frozen=True)
class NativeJob:
    native_path: str  # native_functions.yaml (tags.yaml beside it)
    output_dir: str  # absolute; nothing is written outside it
    per_operator_headers: bool = False
    templates_dir: str | None = None  # default: ../templates beside native/, else torchgen's packaged ones
    torch_version: str | None = None  # opgen.torchVersion; default: detected from native_path

    def options(self) -> GenerateOptions:
        out = self.output_dir
        return GenerateOptions(source_path=os.path.dirname(os.path.dirname(self.native_path)), install_dir=out,
                               headeronly_install_dir=os.path.join(out, "core"),
                               aoti_install_dir=os.path.join(out, "aoti"), update_aoti_c_shim=True,
                               per_operator_headers=self.per_operator_headers,
                               release=resolve_for(self.native_path, self.torch_version).release)

    def templates(self) -> str:
        if self.templates_dir:
            return self.templates_dir
        beside = os.path.join(os.path.dirname(os.path.dirname(self.native_path)), "templates")
        if os.path.isdir(beside):
            return beside
        packaged = packaged_aten()
        if packaged is None:
            raise InputError(f"no templates folder at {beside}, and torch is not installed to provide one")
        return os.path.join(packaged, "templates")


@dataclass
class JobResult:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # files opgen cannot generate yet
    missing_reasons: list[str] = field(default_factory=list)  # why, one for each of `missing`
    cancelled: bool = False

    def not_generated(self) -> list[str]:
        """`name, name: why` for each reason a file was not generated."""
        by_reason: dict[str, list[str]] = {}
        for path, why in zip(self.missing, self.missing_reasons):
            by_reason.setdefault(why, []).append(os.path.basename(path))
        return [f"{', '.join(names)}: {why}" for why, names in by_reason.items()]

    def summary(self) -> str:
        text = f"{len(self.written)} file(s) written, {len(self.unchanged)} unchanged"
        if self.missing:
            text += f", {len(self.missing)} not generated ({'; '.join(self.not_generated())})"
        if self.errors:
            text += f", {len(self.errors)} error(s): {self.errors[0]}"
        return ("cancelled: " if self.cancelled else "") + text


def load(job: NativeJob) -> tuple[GenContext, list[PlannedFile]]:
    """Read the inputs and plan the files (raises InputError on unusable inputs)."""
    options = job.options()
    tags_path = os.path.join(os.path.dirname(job.native_path), "tags.yaml")
    inputs = load_native(job.native_path, tags_path, options.ignore_keys, release=options.release)
    if inputs.errors:
        first = inputs.errors[0]
        raise InputError(f"{job.native_path} has {len(inputs.errors)} error(s), the first on line "
                         f"{first.span.start_line + 1}: {first.message}")
    tags = frozenset(TagsParser().parse(read_input(tags_path)).names)
    fallback_ops, why = load_fallback_ops(options.source_path, options.release)
    ctx = GenContext(inputs.snapshot.functions, tags, options, read_templates(job.templates()), fallback_ops, why)
    refuse_shim_failures(ctx, job.native_path)
    return ctx, plan(ctx)


def run(job: NativeJob, progress: Callable[[Progress, str], None] = lambda progress, path: None,
        cancelled: Callable[[], bool] = lambda: False) -> JobResult:
    """Generate every file opgen can, writing only into job.output_dir; errors come back in the result.
    progress: told before each file (and its path) and once at the end (path ""), as `opgen generate` counts."""
    result = JobResult()
    try:
        ctx, planned = load(job)
    except (InputError, OSError) as exc:
        result.errors.append(str(exc))
        return result
    dirs = dirs_of(ctx.options)
    buildable = [p for p in planned if p.build is not None]
    result.missing = [p.path for p in planned if p.build is None]
    result.missing_reasons = [p.missing_reason or "not implemented yet" for p in planned if p.build is None]
    # Every folder of the job is inside output_dir, so every file is confined to it (as `opgen generate` does).
    refused = confinement_errors(planned, dirs)
    if refused:
        result.errors.extend(refused)
        return result
    with OutputRoots() as roots:  # the output folder opened once: every file is made relative to it
        for done, p in enumerate(buildable):
            if cancelled():
                result.cancelled = True
                break
            progress(Progress(len(buildable), done, len(result.written)), p.path)
            try:
                data = render(p.template, ctx.templates, p.build(),  # type: ignore[misc]
                              ctx.options.release).encode("utf-8")
            except PlanError as exc:
                result.errors.append(f"{p.path}: {exc}")
                continue
            written = write_files([(*dirs.place(p.manager, p.path), data)], roots=roots)
            result.written.extend(written.written)
            result.unchanged.extend(written.unchanged)
            result.errors.extend(written.errors)
    if not result.cancelled:
        progress(Progress(len(buildable), len(buildable), len(result.written)), "")
    return result


def render_file(job: NativeJob, name: str) -> tuple[str, str] | None:
    """(path, text) of one generated file, by its path (e.g. `Functions.h`, `core/TensorBody.h`) or file name."""
    ctx, planned = load(job)
    matches = [p for p in planned if p.path == name] or [p for p in planned if os.path.basename(p.path) == name]
    for p in matches:
        if p.build is not None:
            return p.path, render(p.template, ctx.templates, p.build(), ctx.options.release)
    return None
