"""Server settings: typed, with defaults, read from initializationOptions and workspace/configuration.

Both sources use the same shape (camelCase keys; workspace/configuration
section "opgen"):

    {"debounceMs": 0, "tagsPath": "aten/src/ATen/native/tags.yaml", "maxWorkspaceSymbols": 500,
     "nativeFunctionsPath": null, "implPaths": [], "outputDir": null,
     "generateTarget": "auto", "perOperatorHeaders": false, "codeLens": true,
     "kernelDirs": [], "kernelSeverity": "warning", "kernelStubFile": null, "torchVersion": null,
     "pytorchFormatCheck": true, "compatibilityBase": "HEAD", "upgradeTarget": null,
     "lazy": {"preset": "auto", "shapeInferenceHeader": null}}

Relative paths are taken from the workspace root. docs/lsp.md lists every
setting with what it does.

A value of the wrong type or out of range is reported through `warn` and the
default is used instead; unknown keys are reported too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import field, fields
from typing import Any, TypeGuard

from ..frozen import record
from ..releases import parse_version

SECTION = "opgen"


# The environment variable the server's own tests set its test-only hooks with (a JSON object, camelCase keys);
# they are read from nowhere else: no client setting, initializationOptions or workspace can reach them.
TESTING_ENVIRONMENT = "OPGEN_LSP_TESTING"


@record
class Testing:
    """Hooks for the server's own tests, from TESTING_ENVIRONMENT only (issue 27: as settings, a workspace could
    make every hover fail or each generated file wait 10 s)."""

    fail_hover: bool = False
    # opgen.generate waits this long before each file (so that a test can cancel it midway).
    generate_delay_ms: int = 0
    # Worker processes for a cold kernel index (0: the index's default).
    kernel_workers: int = 0


@record
class Lazy:
    """gen_lazy_tensor's settings for backend yamls with full_codegen / ir_gen ops (section "opgen.lazy")."""

    # The flags the hover's generated code follows: "torchscript" (--gen-ts-lowerings --node-base TsNode
    # --node-base-hdr torch/csrc/lazy/ts_backend/ts_node.h), "default" (no flags), or "auto" (TorchScript
    # for PyTorch's own `backend: Lazy` yaml, default for any other).
    preset: str = "auto"
    # The header whose compute_shape_ declarations full_codegen ops are checked against (OPG535); default:
    # for a `backend: Lazy` yaml the torch/csrc/lazy/core/shape_inference.h of the PyTorch checkout holding
    # the workspace or the yaml, else the installed wheel's; for other backends none (no check).
    shape_inference_header: str | None = None


@record
class Settings:
    # Delay between the last edit and the re-check that publishes diagnostics.
    debounce_ms: int = 0
    # The tags.yaml to check every native_functions.yaml against; default: the one beside it.
    tags_path: str | None = None
    # At most this many workspace symbols per query.
    max_workspace_symbols: int = 500
    # At most this many documents keep their analysis (the parsed model: about 10 MB for the real
    # native_functions.yaml); beyond it, the least recently used keep their text and are re-analysed on demand.
    retained_analyses: int = 16
    # The native_functions.yaml backend yamls are checked against; default: an open one, else
    # aten/src/ATen/native/native_functions.yaml in the workspace, else the copy inside the installed torch.
    native_functions_path: str | None = None
    # C++ files or folders holding a backend's kernel definitions; default: the C++ files beside the backend yaml.
    impl_paths: tuple[str, ...] = ()
    # Where opgen.generate writes (relative paths: from the workspace root); nothing is written elsewhere.
    # Default (None): a folder of its own for each input yaml under build/ (lsp.commands.default_output_dir).
    output_dir: str | None = None
    # What opgen.generate generates: "native" (gen.py's files), "backend" (gen_backend_stubs' files for the
    # backend yaml), or "auto" (backend when the workspace has a backend yaml but no native_functions.yaml).
    generate_target: str = "auto"
    # opgen.generate: the per-operator header layout (gen.py --per-operator-headers).
    per_operator_headers: bool = False
    # Code lenses on each op (its dispatch keys and backends, "show generated code").
    code_lens: bool = True
    # Folders of C++ sources whose kernel definitions the dispatch tables are checked against; default:
    # aten/src/ATen when the workspace is a PyTorch checkout (the check is off elsewhere).
    kernel_dirs: tuple[str, ...] = ()
    # The severity of missing-kernel diagnostics (OPG600/OPG601), or "off".
    kernel_severity: str = "warning"
    # The C++ file the "create the missing kernel" quick fix appends to; default: the first file that
    # defines kernels of the same op family.
    kernel_stub_file: str | None = None
    # The torch release whose torchgen to match ("2.14", "2.15.0"); default: detected from each
    # native_functions.yaml (version.txt of a PyTorch checkout, torch/version.py beside a packaged torchgen).
    torch_version: str | None = None
    # OPG009 and its quick fix: whether native_functions.yaml round-trips through ruamel.yaml as PyTorch's
    # NATIVEFUNCTIONS lint requires (checked when the file is opened or saved).
    pytorch_format_check: bool = True
    # OPG209/OPG210: the git revision each native_functions.yaml's schemas are compared with for backward and
    # forward compatibility (on open and save), or "off".
    compatibility_base: str = "HEAD"
    # OPG975: the torch release backend yamls move to ("2.15"): each listed op that is removed, renamed or changes
    # its schema or kernel declaration from the release the yaml is checked against gets an information
    # diagnostic on its line; None: no such check.
    upgrade_target: str | None = None
    lazy: Lazy = field(default_factory=Lazy)
    testing: Testing = field(default_factory=Testing)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _int_in(low: int, high: int) -> Callable[[object], int | None]:
    def check(value: object) -> int | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            return None
        return int(value) if low <= value <= high else None
    check.__doc__ = f"a whole number from {low} to {high}"
    return check


def _is_path(value: object) -> TypeGuard[str]:
    """A non-empty string no file system refuses outright (a NUL byte is in no path)."""
    return isinstance(value, str) and bool(value.strip()) and "\0" not in value


def _optional_path(value: object) -> str | None:
    return value if _is_path(value) else None


_optional_path.__doc__ = "a file path (a non-empty string) or null"


def _bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


_bool.__doc__ = "true or false"


def _path(value: object) -> str | None:
    return value if _is_path(value) else None


_path.__doc__ = "a file path (a non-empty string)"


def _paths(value: object) -> tuple[str, ...] | None:
    if _is_path(value):
        return (value,)
    if isinstance(value, (list, tuple)) and all(_is_path(v) for v in value):
        return tuple(value)
    return None


_paths.__doc__ = "a list of file or folder paths (non-empty strings)"


def _one_of(*choices: str) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        return value if isinstance(value, str) and value in choices else None
    check.__doc__ = "one of " + ", ".join(repr(c) for c in choices)
    return check

def _torch_version(value: object) -> str | None:
    return value if isinstance(value, str) and parse_version(value) is not None else None


_torch_version.__doc__ = "a torch version such as '2.14' or '2.14.1', or null"


_REVISION = re.compile(r"[\w./~^@{}-]+")


def _revision(value: object) -> str | None:
    if isinstance(value, str) and not value.startswith("-") and _REVISION.fullmatch(value):
        return value  # never an option to git: `git show` gets it as REV:./file
    return None


_revision.__doc__ = "a git revision (HEAD, main, HEAD~1, a commit) or 'off'"


_CHECKS: dict[str, Callable[[object], Any]] = {
    "debounce_ms": _int_in(0, 10_000),
    "tags_path": _optional_path,
    "max_workspace_symbols": _int_in(1, 100_000),
    "retained_analyses": _int_in(1, 10_000),
    "native_functions_path": _optional_path,
    "impl_paths": _paths,
    "output_dir": _optional_path,
    "generate_target": _one_of("auto", "native", "backend"),
    "per_operator_headers": _bool,
    "code_lens": _bool,
    "kernel_dirs": _paths,
    "kernel_severity": _one_of("error", "warning", "information", "hint", "off"),
    "kernel_stub_file": _optional_path,
    "torch_version": _torch_version,
    "pytorch_format_check": _bool,
    "compatibility_base": _revision,
    "upgrade_target": _torch_version,
}
_LAZY_CHECKS: dict[str, Callable[[object], Any]] = {"preset": _one_of("auto", "default", "torchscript"),
                                                    "shape_inference_header": _optional_path}
_TESTING_CHECKS: dict[str, Callable[[object], Any]] = {"fail_hover": _bool, "generate_delay_ms": _int_in(0, 10_000),
                                                       "kernel_workers": _int_in(0, 64)}


def _read(cls: type, checks: Mapping[str, Callable[[object], Any]], raw: Mapping[str, object], where: str,
          warn: Callable[[str], None]) -> dict[str, object]:
    known = {_camel(f.name): f for f in fields(cls)}
    values: dict[str, object] = {}
    for key, value in raw.items():
        f = known.get(key)
        if f is None:
            warn(f"opgen: unknown setting '{where}{key}' is ignored")
            continue
        if f.name not in checks:
            continue
        if value is None and f.default is None:
            values[f.name] = None
            continue
        checked = checks[f.name](value)
        if checked is None:
            warn(f"opgen: setting '{where}{key}' must be {checks[f.name].__doc__}, not {value!r}; "
                 f"using the default {f.default!r}")
            continue
        values[f.name] = checked
    return values


def parse_settings(raw: object, warn: Callable[[str], None]) -> Settings:
    """Settings from a JSON-like object; anything unusable is reported through `warn` and defaulted."""
    if raw is None:
        return Settings()
    if not isinstance(raw, Mapping):
        warn(f"opgen: settings must be an object, not {raw!r}; using the defaults")
        return Settings()
    nested = {"lazy": _section(Lazy, _LAZY_CHECKS, raw, "lazy", warn), "testing": testing_from_environment(warn)}
    if "testing" in raw:
        warn("opgen: setting 'testing' is ignored: the server's test-only hooks are not settings")
    # userSettings: the user's own values, read (from initializationOptions only) by trust.py; commandLinks: what the
    # client can run, read by features.Client.
    rest = {k: v for k, v in raw.items() if k not in nested and k not in ("userSettings", "commandLinks")}
    return Settings(**_read(Settings, _CHECKS, rest, "", warn), **nested)  # type: ignore[arg-type]


def _section(cls: type, checks: Mapping[str, Callable[[object], Any]], raw: Mapping[str, object], name: str,
             warn: Callable[[str], None]):
    """A nested object of settings (opgen.lazy; the testing hooks from the environment)."""
    value = raw.get(name)
    if isinstance(value, Mapping):
        return cls(**_read(cls, checks, value, f"{name}.", warn))
    if value is not None:
        warn(f"opgen: setting '{name}' must be an object, not {value!r}")
    return cls()


def testing_from_environment(warn: Callable[[str], None], environ: Mapping[str, str] = os.environ) -> Testing:
    """The test-only hooks TESTING_ENVIRONMENT sets (all off when it is not set)."""
    text = environ.get(TESTING_ENVIRONMENT)
    if not text:
        return Testing()
    try:
        raw = json.loads(text)
    except ValueError:
        raw = text
    return _section(Testing, _TESTING_CHECKS, {"testing": raw}, "testing", warn)


def settings_from(*sources: object, warn: Callable[[str], None]) -> Settings:
    """Settings from several sources (initializationOptions, then workspace/configuration): later
    sources override earlier ones key by key; a source of None is skipped."""
    merged: dict[str, object] = {}
    for source in sources:
        if source is None:
            continue
        if not isinstance(source, Mapping):
            warn(f"opgen: settings must be an object, not {source!r}; ignoring them")
            continue
        merged.update(source)
    return parse_settings(merged, warn)
