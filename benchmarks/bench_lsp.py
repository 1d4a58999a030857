"""opgen-lsp vs yaml-language-server on the real native_functions.yaml, with ../shared/tools/lspbench.py.

    python benchmarks/bench_lsp.py [--edits N] [--lspbench PATH] [--json OUT]

Both servers get the same document (torchgen's packaged native_functions.yaml, copied with
its tags.yaml into a temporary workspace), the same edits (a broken line inserted in the
middle and removed again, alternately) and the same hover positions. yaml-language-server
is installed with npm into benchmarks/.node on first use. Prints a Markdown table with the
goals: opgen's edit-to-diagnostics at most 0.1x yaml-language-server's, open-to-diagnostics
at most 0.5x, hover median under 10 ms, memory under 200 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODE_PREFIX = HERE / ".node"
YAML_LS = NODE_PREFIX / "node_modules" / "yaml-language-server" / "bin" / "yaml-language-server"
DEFAULT_LSPBENCH = HERE.parent.parent / "shared" / "tools" / "lspbench.py"


def ensure_yaml_language_server() -> Path:
    if not YAML_LS.exists():
        print("installing yaml-language-server into benchmarks/.node ...", file=sys.stderr)
        subprocess.run(["npm", "install", "--silent", "--prefix", str(NODE_PREFIX), "yaml-language-server"],
                       check=True)
    return YAML_LS


def real_native_functions() -> Path:
    import torchgen

    return Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"


def hover_positions(text: str) -> list[str]:
    """A func: line in the middle of the file and a dispatch key near it (0-based line:column)."""
    lines = text.split("\n")
    func = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("- func:"))
    key = next(i for i in range(func, len(lines)) if lines[i].startswith("    ") and ":" in lines[i])
    return [f"{func}:10", f"{key}:5"]


def bench(lspbench: Path, server: str, file: Path, edits: int, hovers: list[str]) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        result_path = out.name
    cmd = [sys.executable, str(lspbench), "--server", server, "--file", str(file), "--edits", str(edits),
           "--json", result_path]
    for h in hovers:
        cmd += ["--hover", h]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    data = json.loads(Path(result_path).read_text())
    os.unlink(result_path)
    return data


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


def table(opgen: dict, yaml_ls: dict) -> str:
    def ratio(key: str) -> str:
        a, b = opgen.get(key), yaml_ls.get(key)
        return f"{a / b:.3f}x" if a is not None and b else "-"

    def met(ok: bool) -> str:
        return "yes" if ok else "**no**"

    e_ratio = opgen["edit_to_diagnostics_median_s"] / yaml_ls["edit_to_diagnostics_median_s"]
    o_ratio = opgen["open_to_diagnostics_s"] / yaml_ls["open_to_diagnostics_s"]
    rows = [
        "| Measure | opgen-lsp | yaml-language-server | opgen / yaml-ls | Goal | Met |",
        "|---|---|---|---|---|---|",
        f"| edit-to-diagnostics (median) | {ms(opgen['edit_to_diagnostics_median_s'])} | "
        f"{ms(yaml_ls['edit_to_diagnostics_median_s'])} | {ratio('edit_to_diagnostics_median_s')} | <= 0.1x | "
        f"{met(e_ratio <= 0.1)} |",
        f"| open-to-diagnostics | {ms(opgen['open_to_diagnostics_s'])} | {ms(yaml_ls['open_to_diagnostics_s'])} | "
        f"{ratio('open_to_diagnostics_s')} | <= 0.5x | {met(o_ratio <= 0.5)} |",
        f"| hover (median) | {ms(opgen.get('hover_median_s'))} | {ms(yaml_ls.get('hover_median_s'))} | "
        f"{ratio('hover_median_s')} | < 10 ms | {met(opgen.get('hover_median_s', 1) < 0.010)} |",
        f"| memory (RSS at the end) | {opgen['rss_mb']:.0f} MB | {yaml_ls['rss_mb']:.0f} MB | {ratio('rss_mb')} | "
        f"< 200 MB | {met(opgen['rss_mb'] < 200)} |",
        f"| diagnostics after a broken edit | {opgen.get('edit_diag_counts', ['-'])[0]} | "
        f"{yaml_ls.get('edit_diag_counts', ['-'])[0]} | | | |",
    ]
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--lspbench", type=Path, default=DEFAULT_LSPBENCH)
    ap.add_argument("--json", type=Path, default=None, help="also write both raw results here")
    args = ap.parse_args()
    yaml_ls = ensure_yaml_language_server()
    source = real_native_functions()
    with tempfile.TemporaryDirectory(prefix="bench-lsp-") as tmp:
        native = Path(tmp) / "native_functions.yaml"
        shutil.copyfile(source, native)
        shutil.copyfile(source.parent / "tags.yaml", Path(tmp) / "tags.yaml")
        hovers = hover_positions(native.read_text(encoding="utf-8"))
        opgen = bench(args.lspbench, f"{sys.executable} -m opgen_lsp.serve --stdio", native, args.edits, hovers)
        other = bench(args.lspbench, f"node {yaml_ls} --stdio", native, args.edits, hovers)
    print(f"native_functions.yaml: {opgen['lines']} lines, {args.edits} edits, hovers at {', '.join(hovers)}\n")
    print(table(opgen, other))
    if args.json:
        args.json.write_text(json.dumps({"opgen": opgen, "yaml-language-server": other}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
