"""What a hover on a full_codegen / ir_gen op of a lazy backend yaml shows: the code gen_lazy_tensor writes for it
(its node class, its kernel) and whether the shape-inference header declares the function the kernel calls."""

from __future__ import annotations

from ...model.backend import ListedOp
from ...model.backend_resolve import ResolvedBackend
from ...model.native_function import NativeFunction
from ...pieces.backend_target import target_of
from ...pieces.lazy.code import LazyOpCode, lazy_op_code
from ...pieces.lazy.options import preset_options, torchscript
from ...releases import Release
from . import LazySettings
from .shape import ShapeHeader


def _cpp(title: str, code: str | None) -> str:
    return f"**{title}**\n```cpp\n{(code or '').rstrip()}\n```"


def _shape_markdown(declaration: str | None, header: ShapeHeader | None) -> str:
    """Where the kernel's output shapes come from, and whether the shape-inference header declares it."""
    if declaration is None:
        return "Output shapes come from the meta kernel (a structured op or a view_copy): no `compute_shape_` " \
               "function is needed."
    if header is None:
        where = ("It must be declared, exactly so, in the header given to `--shape-inference-hdr` (none is known "
                 "here: setting `opgen.lazy.shapeInferenceHeader`):")
    elif declaration in header.lines:
        where = f"Declared in `{header.path}`:"
    else:
        where = f"**Not declared** in `{header.path}` (gen_lazy_tensor stops on it):"
    return f"The kernel calls a shape-inference function. {where}\n```cpp\n{declaration}\n```"


def lazy_markdown(code: LazyOpCode, backend_key: str, torchscript: bool, header: ShapeHeader | None) -> str:
    """Markdown: what gen_lazy_tensor generates for one op."""
    flags = "TorchScript settings" if torchscript else "default settings"
    if code.problem is not None:
        return f"**gen_lazy_tensor cannot generate this op** ({flags}): {code.problem}"
    parts = [_cpp(f"IR node class (LazyIr.h, gen_lazy_tensor with {flags})", code.node_class)]
    if code.kernel is not None:
        parts.append(_cpp(f"Lazy kernel ({backend_key}NativeFunctions.cpp)", code.kernel))
        parts.append(_shape_markdown(code.shape_declaration, header))
    return "\n\n".join(parts)


def lazy_hover(f: NativeFunction, item: ListedOp, resolved: ResolvedBackend, settings: LazySettings,
               release: Release) -> str:
    """The Markdown of a listed op (empty when the yaml generates nothing), as gen_lazy_tensor of `release` (the
    native_functions.yaml's) writes it."""
    target = target_of(resolved)
    if target is None:
        return ""
    options = preset_options(settings.preset, resolved, release)
    code = lazy_op_code(f, target, item.section == "full_codegen", options)
    return lazy_markdown(code, str(target.backend_key), options == torchscript(release), settings.header)
