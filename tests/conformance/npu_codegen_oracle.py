"""Run by test_vendor_codegen.py through the reference cache, with a torch release's torchgen on PYTHONPATH:

    python npu_codegen_oracle.py JOB.json

JOB is {"torchnpugen": the folder of torch_npu's codegen package (Ascend/pytorch's `torchnpugen/`, fetched for
the test), "op_plugin_root": a folder holding op-plugin's `torchnpugen/` and `op_plugin/config/deprecated.yaml`,
"torch": "X.Y.Z", "cases": [{"name", "path": an npu_native_functions.yaml, "op_plugin": an
op_plugin_functions.yaml or absent, "baseline": true for the op-plugin case the others are compared with}]}. For each case, the
steps of torchnpugen's `gen_backend_stubs.run` that read the file, as its `generate_code.sh` runs them: merge
op-plugin's per-release file into it (`merge_custom_yaml`), parse native_functions.yaml with the file's custom
ops (`parse_native_and_custom_yaml`, torchgen's NativeFunction.from_yaml and error checks), then
`parse_backend_yaml` (the sections, every op name against the release). The code generation after it is not
run: it writes into the vendor's tree and needs its C++ sources. A case with an op-plugin file first goes through
op-plugin's generators (gen_op_plugin_functions, gen_op_backend), whose per-release file torchnpugen then merges.
Prints {name: {"rejection": null when every step accepts, else "ExceptionType: message" (or the generator's last
words), "changed_declarations": op-plugin's OpInterface.h declarations (types only) that the baseline case's
lacks}} as JSON.

The checkout's layout is made up in a scratch folder: torchnpugen (a link to the fetched package), the case as
`torch_npu/csrc/aten/npu_native_functions.yaml`, and op-plugin's generated `config/vXrY/` files (an empty
op_plugin_functions.yaml for a case without one; derivatives.yaml always empty: it only decides which ops go to
the autograd key, never a verdict).
Each case runs in a forked child: torchnpugen keeps its caches and patches torchgen in module globals.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

ACCEPTED = "accepted"
_RAISED = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit)\b")


def _layout(root: Path, torchnpugen: Path, torch: str) -> tuple[Path, Path]:
    """The checkout's folders torchnpugen reads: (the backend yaml's path, op-plugin's per-release yaml)."""
    (root / "torchnpugen").symlink_to(torchnpugen, target_is_directory=True)
    major, minor = torch.split(".")[:2]
    config = root / "third_party" / "op-plugin" / "op_plugin" / "config" / f"v{major}r{minor}"
    config.mkdir(parents=True)
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


def _op_plugin_file(op_plugin: Path, case: dict, job: dict) -> tuple[str | None, set[str]]:
    """op-plugin's per-release file for the case, made by op-plugin's own generators from the case's
    op_plugin_functions.yaml as its gencode.sh runs them (gen_op_plugin_functions, then gen_op_backend, which
    declares op-plugin's kernels in OpInterface.h from the schemas the file gives), or empty when the case has
    none. Returns (what a generator said when it failed, else None; OpInterface.h's declarations, types only)."""
    if not case.get("op_plugin"):
        # parse_npu_yaml drops lines without a colon: an empty mapping must be written with keys.
        op_plugin.write_text("official: []\ncustom: []\n")
        return None, set()
    root = Path(job["op_plugin_root"]).resolve()
    env = {**os.environ, "PYTHONPATH": str(root), "PYTORCH_VERSION": job["torch"]}
    op_plugin.unlink(missing_ok=True)
    made = _generator(["gen_op_plugin_functions", f"--version={job['torch']}", f"--output_dir={op_plugin.parent}/",
                       f"--source_yaml={case['op_plugin']}"], root, env)
    if made is None and not op_plugin.is_file():
        made = "gen_op_plugin_functions: wrote no file"
    if made is not None:
        return made, set()
    with tempfile.TemporaryDirectory() as out:
        made = _generator(["gen_op_backend", f"--version={job['torch']}", f"--output_dir={out}/",
                           f"--source_yaml={op_plugin}",
                           f"--deprecate_yaml={root / 'op_plugin' / 'config' / 'deprecated.yaml'}"], root, env)
        header = Path(out, "OpInterface.h")
        if made is not None or not header.is_file():
            return made or "gen_op_backend: wrote no OpInterface.h", set()
        return None, _declarations(header.read_text(encoding="utf-8"))


def _generator(argv: list[str], root: Path, env: dict[str, str]) -> str | None:
    """`python -m torchnpugen.<argv>` in op-plugin's root (its templates are found from there); None when it
    succeeds, else its last words."""
    done = subprocess.run([sys.executable, "-m", f"torchnpugen.{argv[0]}", *argv[1:]], cwd=root, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return None
    # The exception's own line: torchgen-style errors add their context on the lines after it.
    raised = [line for line in done.stderr.splitlines() if _RAISED.match(line)]
    return f"{argv[0]}: {raised[-1] if raised else f'status {done.returncode}'}"


def _declarations(header: str) -> set[str]:
    """OpInterface.h's kernel declarations as far as a caller sees them: return type, name, parameter types (the
    parameters' names dropped)."""
    out = set()
    for line in header.splitlines():
        line = line.strip()
        if not line.startswith("OP_PLUGIN_HIDDEN ") or "(" not in line or not line.endswith(");"):
            continue
        head, params = line[len("OP_PLUGIN_HIDDEN "):-2].split("(", 1)
        types = []
        for param in _top_level(params):
            declared = param.split("=", 1)[0].strip()  # a default does not change what a caller passes
            types.append(declared.rsplit(" ", 1)[0] if " " in declared else declared)
        out.add(f"{head}({', '.join(types)})")
    return out


def _top_level(params: str) -> list[str]:
    """A parameter list split at its top-level commas (not those of a template's or a default's brackets)."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(params):
        if c in "<({[":
            depth += 1
        elif c in ">)}]":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(params[start:i].strip())
            start = i + 1
    if params[start:].strip():
        out.append(params[start:].strip())
    return out


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
    found: dict[str, dict] = {}
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

        baseline: set[str] = set()
        for case in job["cases"]:
            failed, declared = _op_plugin_file(op_plugin, case, job)
            verdict = failed or _run_case(source, op_plugin, Path(case["path"]).read_text(encoding="utf-8"))
            if case.get("baseline"):
                baseline = declared
            found[case["name"]] = {"rejection": None if verdict == ACCEPTED else verdict,
                                   "changed_declarations": sorted(declared - baseline) if declared else []}
    json.dump(found, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
