"""The real PyTorch source trees the tests measure (docs/trees.md): public trees nobody here wrote, kept outside
the project in $OPGEN_PYTORCH_TREES (default ~/.cache/opgen/trees). A test of a tree that is absent skips, saying
how to get it; CI machines without them skip these tests cleanly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NATIVE = Path("aten") / "src" / "ATen" / "native"

# name in $OPGEN_PYTORCH_TREES -> (the public repository it is extracted from, its version.txt)
TREES = {
    "pytorch-2.6": ("deepin-community/pytorch", "2.6.0a0"),  # a clean 2.6.0 source package
    "easyfhe-2.7": ("jizhuoran/EasyFHE", "2.7.0a0"),  # a pre-release 2.7 with FHE ops of its own
    "mcpytorch-2.4": ("MetaX-MACA/mcPytorch", "2.4.0"),  # a GPU vendor's kernel changes
    "pytorch-e5m2-2.0": ("ahmad-mirsalari/PyTorch_E5M2", "2.0.0a0"),  # an added dtype
    "pytorch-zc-2.0": ("mingu-jung/pytorch_zc", "2.0.0a0"),  # a dispatch key of its own, in its torchgen too
    "pytorch-1.13": ("hiroto7/pytorch", "1.13.0a0"),  # a fork of PyTorch's main of October 2022
}


def trees_folder() -> Path:
    return Path(os.environ.get("OPGEN_PYTORCH_TREES") or Path.home() / ".cache" / "opgen" / "trees")


def tree_or_skip(name: str, repository: str = "", archived: str = "aten c10 torchgen tools/autograd version.txt",
                 docs: str = "docs/trees.md") -> Path:
    """The tree's folder; skips the test, saying how to get the tree (the folders `archived` of `repository`),
    when it is not there."""
    tree = trees_folder() / name
    if not (tree / NATIVE / "native_functions.yaml").is_file():
        pytest.skip(f"no {name} tree in {trees_folder()} (set OPGEN_PYTORCH_TREES): clone "
                    f"{repository or TREES[name][0]}, then `mkdir -p {tree} && git -C CLONE archive HEAD {archived} "
                    f"| tar -x -C {tree}` ({docs})")
    return tree


def native_yaml(tree: Path) -> Path:
    return tree / NATIVE / "native_functions.yaml"


# A backend's own operator file (docs/backends.md): name in $OPGEN_PYTORCH_TREES -> (the public repository, the
# torch release it pins). Not a PyTorch tree: only its aten/ folder (and its codegen, for reading) is extracted.
BACKEND_TREES = {
    "torch-rbln": ("RBLN-SW/torch-rbln", "2.10"),  # PrivateUse1 kernels of 50 ops; pyproject.toml pins torch 2.10
}


def backend_tree_or_skip(name: str) -> Path:
    """The backend tree's folder; skips the test, saying how to get it, when it is not there."""
    return tree_or_skip(name, BACKEND_TREES[name][0], "aten tools/codegen pyproject.toml", "docs/backends.md")
