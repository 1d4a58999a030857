"""Run by test_vendor_codegen.py through the reference cache, with a torch release's torchgen on PYTHONPATH:

    python npu_codegen_oracle.py JOB.json

JOB is {"torchnpugen": the folder of torch_npu's codegen package (Ascend/pytorch's `torchnpugen/`, fetched for
the test), "torch": "X.Y.Z", "cases": [{"name", "path": an npu_native_functions.yaml}]}. For each case, the
steps of torchnpugen's `gen_backend_stubs.run` that read the file, as its `generate_code.sh` runs them: merge
op-plugin's per-release file into it (`merge_custom_yaml`), parse native_functions.yaml with the file's custom
ops (`parse_native_and_custom_yaml`, torchgen's NativeFunction.from_yaml and error checks), then
`parse_backend_yaml` (the sections, every op name against the release). The code generation after it is not
run: it writes into the vendor's tree and needs its C++ sources. Prints {name: null when the codegen accepts the
file, else "ExceptionType: message"} as JSON.

The checkout's layout is made up in a scratch folder: torchnpugen (a link to the fetched package), the case as
`torch_npu/csrc/aten/npu_native_functions.yaml`, and op-plugin's generated `config/vXrY/` files, empty (no
op-plugin op is merged in; its derivatives only decide which ops go to the autograd key, never a verdict).
Each case runs in a forked child: torchnpugen keeps its caches and patches torchgen in module globals.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import traceback
from pathlib import Path

ACCEPTED = "accepted"


def _layout(root: Path, torchnpugen: Path, torch: str) -> tuple[Path, Path]:
    """The checkout's folders torchnpugen reads: (the backend yaml's path, op-plugin's per-release yaml)."""
    (root / "torchnpugen").symlink_to(torchnpugen, target_is_directory=True)
    major, minor = torch.split(".")[:2]
    config = root / "third_party" / "op-plugin" / "op_plugin" / "config" / f"v{major}r{minor}"
    config.mkdir(parents=True)
    # parse_npu_yaml drops lines without a colon: an empty mapping must be written with keys.
    (config / "op_plugin_functions.yaml").write_text("official: []\ncustom: []\n")
    (config / "derivatives.yaml").write_text("[]\n")
    aten = root / "torch_npu" / "csrc" / "aten"
    aten.mkdir(parents=True)
    return aten / "npu_native_functions.yaml", config / "op_plugin_functions.yaml"


def _verdict(source: Path, op_plugin: Path) -> None:
    """What torchnpugen's run() does with the file up to its code generation; raises what it raises."""
    from torchgen.gen import get_grouped_native_functions
    from torchnpugen import gen_backend_stubs as stubs
    from torchnpugen import utils

    utils.rename_privateuse1_dispatch_key()
    torchgen_dir = Path(utils.get_torchgen_dir())
    utils.merge_custom_yaml(str(source), str(op_plugin))
    merged = utils.gen_custom_yaml_path(str(source))
    native = str(torchgen_dir / "packaged" / "ATen" / "native" / "native_functions.yaml")
    tags = str(torchgen_dir / "packaged" / "ATen" / "native" / "tags.yaml")
    parsed = stubs.parse_native_and_custom_yaml(native, tags, merged)
    utils.get_target_functions(str(op_plugin))
    grouped = get_grouped_native_functions(parsed.native_functions)
    stubs.parse_backend_yaml(native, merged, grouped, parsed.backend_indices)


def _memoise_yaml_loads() -> None:
    """yaml.safe_load of a file torchnpugen reads again and again (native_functions.yaml, three times per case)
    parsed once: pure-Python PyYAML takes seconds on it, and the same bytes load to the same data (a deep copy
    each time: torchnpugen edits what it loads)."""
    import copy

    import yaml

    loads = yaml.safe_load
    seen: dict[str, object] = {}

    def safe_load(stream):  # noqa: ANN001, ANN202 - yaml's own signature
        text = stream if isinstance(stream, str) else stream.read()
        if len(text) < 100_000:
            return loads(text)
        if text not in seen:
            seen[text] = loads(text)
        return copy.deepcopy(seen[text])

    yaml.safe_load = safe_load


def _run_case(source: Path, op_plugin: Path, text: str) -> str:
    """The verdict of one case, in a forked child (fresh module globals each time)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, write the verdict, leave without running the parent's cleanups
        os.close(read)
        try:
            source.write_text(text)
            merged = source.with_name("npu_native_functions_by_codegen.yaml")
            if merged.exists():
                merged.chmod(0o600)
                merged.unlink()
            _verdict(source, op_plugin)
            verdict = ACCEPTED
        except Exception as exc:  # noqa: BLE001 - torchnpugen raises KeyError, ValueError, TypeError, ...
            traceback.print_exc(file=sys.stderr)
            verdict = f"{type(exc).__name__}: {exc}"
        with os.fdopen(write, "w") as out:
            out.write(verdict)
        sys.stderr.flush()
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as got:
        verdict = got.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not verdict:
        return f"crashed: status {status}"
    return verdict


def main(argv: list[str]) -> int:
    with open(argv[0], encoding="utf-8") as f:
        job = json.load(f)
    # torchnpugen.autograd.utils picks op-plugin's config folder by TORCH_VERSION (else the installed torch's).
    os.environ["TORCH_VERSION"] = job["torch"]
    os.environ.pop("ACLNN_EXTENSION_SWITCH", None)
    found: dict[str, str | None] = {}
    with tempfile.TemporaryDirectory() as scratch, contextlib.redirect_stdout(sys.stderr):
        root = Path(scratch)
        source, op_plugin = _layout(root, Path(job["torchnpugen"]).resolve(), job["torch"])
        sys.path.insert(0, str(root))
        _memoise_yaml_loads()
        import torchnpugen.gen_backend_stubs  # noqa: F401 - imported once, before the forks
        import yaml
        from torchnpugen.utils import get_torchgen_dir

        with open(Path(get_torchgen_dir(), "packaged", "ATen", "native", "native_functions.yaml")) as f:
            yaml.safe_load(f)  # loaded once here, for every child

        for case in job["cases"]:
            verdict = _run_case(source, op_plugin, Path(case["path"]).read_text(encoding="utf-8"))
            found[case["name"]] = None if verdict == ACCEPTED else verdict
    json.dump(found, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
