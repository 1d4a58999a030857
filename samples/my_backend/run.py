"""Build the sample PrivateUse1 backend and run torch.add on its device.

    python samples/my_backend/run.py BUILD_DIR

1. `opgen generate-backend -s backend.yaml -o generated --impl-path kernels.cpp`
   in BUILD_DIR (checks that every listed op has its kernel, then writes
   generated/PrivateUse1NativeFunctions.h and generated/RegisterPrivateUse1.cpp);
2. compiles kernels.cpp and the generated Register file as a torch extension
   (torch.utils.cpp_extension.load: g++ and ninja), loads it;
3. names the device `my_device` and adds two tensors on it.

Prints one JSON object: what was computed and how often the backend's add kernels ran.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def generate(build: Path) -> None:
    from opgen_lsp.cli import main

    cwd = os.getcwd()
    os.chdir(build)
    try:
        status = main(["generate-backend", "-s", str(HERE / "backend.yaml"), "-o", "generated",
                       "--impl-path", str(HERE / "kernels.cpp")])
    finally:
        os.chdir(cwd)
    if status != 0:
        raise SystemExit(f"opgen generate-backend failed with status {status}")


def build_and_load(build: Path) -> None:
    from torch.utils.cpp_extension import load

    load(name="my_backend_sample", sources=[str(HERE / "kernels.cpp"), str(build / "generated" / "RegisterPrivateUse1.cpp")],
         extra_include_paths=[str(build)], extra_cflags=["-O0"], build_directory=str(build),
         is_python_module=False, verbose=False)


def device_module():
    """The torch.my_device module torch looks up for a renamed PrivateUse1 device (one device, always there)."""
    import types

    module = types.ModuleType("my_device")
    module.is_available = lambda: True
    module.device_count = lambda: 1
    module.current_device = lambda: 0
    module._is_in_bad_fork = lambda: False
    module.is_initialized = lambda: True
    return module


def demo() -> dict:
    import torch

    torch.utils.rename_privateuse1_backend("my_device")
    torch._register_device_module("my_device", device_module())
    a = torch.tensor([1.0, 2.0, 3.0]).to("my_device")
    b = torch.ones(3, device="my_device")
    before = torch.ops.my_backend.add_calls()
    c = torch.add(a, b, alpha=2)
    d = a + b
    torch.add(a, b, out=d)
    after = torch.ops.my_backend.add_calls()
    a.add_(b)  # add_.Tensor: the wrapper generated around the add.Tensor kernel
    return {
        "device": str(c.device),
        "result": c.cpu().tolist(),
        "out": d.cpu().tolist(),
        "inplace": a.cpu().tolist(),
        "add_calls": after - before,
        "add_calls_inplace": torch.ops.my_backend.add_calls() - after,
        "printed": repr(c),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    build = Path(argv[0]).resolve()
    build.mkdir(parents=True, exist_ok=True)
    generate(build)
    build_and_load(build)
    print(json.dumps(demo()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
