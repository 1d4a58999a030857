"""Build the sample PrivateUse1 backend and run torch.add on its device, and a new operator added with opgen scaffold.

    python samples/my_backend/run.py BUILD_DIR

1. `opgen scaffold` adds a new operator, `twice_sum(Tensor self, Tensor other) -> Tensor`, to a copy of
   torch's native_functions.yaml in BUILD_DIR (its functional, in-place and out= entries), lists it in a
   copy of backend.yaml and appends its kernel stub to a copy of kernels.cpp; the stub's body is then
   replaced by a real one (what a developer writes next). torch itself is prebuilt, so the extension
   defines the new op's schema (TORCH_LIBRARY_FRAGMENT(aten, ...): NEW_OP_SCHEMA below);
2. `opgen generate-backend -s backend.yaml -o generated --impl-path kernels.cpp --native-functions ...`
   in BUILD_DIR (checks that every listed op has its kernel, then writes
   generated/PrivateUse1NativeFunctions.h and generated/RegisterPrivateUse1.cpp);
3. compiles kernels.cpp and the generated Register file as a torch extension
   (torch.utils.cpp_extension.load: g++ and ninja), loads it;
4. names the device `my_device`, adds two tensors on it and runs the new op.

Prints one JSON object: what was computed and how often the backend's add kernels ran.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NEW_OP_SCHEMA = "twice_sum(Tensor self, Tensor other) -> Tensor"
NEW_OP_STUB = '  TORCH_CHECK_NOT_IMPLEMENTED(false, "twice_sum (twice_sum) is not implemented yet");\n'
# The body written in place of the stub's: 2 * (self + other), computed on the host like the add kernels.
NEW_OP_BODY = """\
  at::Tensor sum = at::add(host(self), host(other)).mul_(2);
  at::Tensor out = empty(sum.sizes(), sum.scalar_type(), std::nullopt, std::nullopt, std::nullopt, std::nullopt);
  host(out).copy_(sum);
  return out;
"""
# torch is prebuilt: its dispatcher learns the new op's schema from the extension.
NEW_OP_DEFINITION = f"""
TORCH_LIBRARY_FRAGMENT(aten, m) {{
  m.def("{NEW_OP_SCHEMA}");
}}
"""


def scaffold(build: Path) -> None:
    """The new op, added by `opgen scaffold` to copies of native_functions.yaml, backend.yaml and kernels.cpp."""
    import shutil

    import torchgen

    from opgen_lsp.cli import main

    native = build / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True, exist_ok=True)
    packaged = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"
    for name in ("native_functions.yaml", "tags.yaml"):
        shutil.copyfile(packaged / name, native / name)
    shutil.copyfile(HERE / "backend.yaml", build / "backend.yaml")
    shutil.copyfile(HERE / "kernels.cpp", build / "kernels.cpp")
    status = main(["scaffold", NEW_OP_SCHEMA, "--native-functions", str(native / "native_functions.yaml"),
                   "--backend-yaml", str(build / "backend.yaml"), "--backend-kernel-file", str(build / "kernels.cpp"),
                   "--apply"])
    if status != 0:
        raise SystemExit(f"opgen scaffold failed with status {status}")
    code = (build / "kernels.cpp").read_text()
    if code.count(NEW_OP_STUB) != 1:
        raise SystemExit("opgen scaffold did not append the twice_sum stub to kernels.cpp")
    (build / "kernels.cpp").write_text(code.replace(NEW_OP_STUB, NEW_OP_BODY) + NEW_OP_DEFINITION)


def generate(build: Path) -> None:
    from opgen_lsp.cli import main

    cwd = os.getcwd()
    os.chdir(build)
    try:
        status = main(["generate-backend", "-s", str(build / "backend.yaml"), "-o", "generated",
                       "--impl-path", str(build / "kernels.cpp"), "--native-functions",
                       str(build / "aten" / "src" / "ATen" / "native" / "native_functions.yaml")])
    finally:
        os.chdir(cwd)
    if status != 0:
        raise SystemExit(f"opgen generate-backend failed with status {status}")


def build_and_load(build: Path) -> None:
    from torch.utils.cpp_extension import load

    load(name="my_backend_sample", sources=[str(build / "kernels.cpp"), str(build / "generated" / "RegisterPrivateUse1.cpp")],
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
    twice = torch.ops.aten.twice_sum(a, b)  # the op added by opgen scaffold: a = [2, 3, 4] by now
    return {
        "new_op": twice.cpu().tolist(),
        "new_op_device": str(twice.device),
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
    scaffold(build)
    generate(build)
    build_and_load(build)
    print(json.dumps(demo()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
