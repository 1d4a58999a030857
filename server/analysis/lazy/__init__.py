"""gen_lazy_tensor's check of a backend yaml: its non_native section (`nonnative`), the shape-inference header
(`shape`), what it rejects (`check`); here, light enough to load with the server, where a PyTorch checkout keeps
the header."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ...frozen import record

if TYPE_CHECKING:  # (loaded with the first lazy yaml)
    from .shape import ShapeHeader

# gen_lazy_tensor's --shape-inference-hdr default, relative to where it runs (a PyTorch checkout).
IN_TREE_SHAPE_HEADER = os.path.join("torch", "csrc", "lazy", "core", "shape_inference.h")


def checkout_shape_header(folders: Iterable[str]) -> str | None:
    """IN_TREE_SHAPE_HEADER in the PyTorch checkout holding one of the folders (each searched upward, so a
    workspace opened on a subfolder of the checkout still finds it); None outside a checkout."""
    for folder in folders:
        current = os.path.abspath(folder)
        while True:
            path = os.path.join(current, IN_TREE_SHAPE_HEADER)
            if os.path.isfile(path):
                return path
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
    return None


@record
class LazySettings:
    """What a hover on a lazy yaml's op is shown with (analysis/lazy/hover.py): the settings' preset
    (opgen.lazy.preset: "auto", "torchscript", "default") and the shape-inference header the yaml was checked
    against (None: not known)."""

    preset: str = "auto"
    header: ShapeHeader | None = None
