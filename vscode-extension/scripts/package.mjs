// `npm run package`: the platform .vsix that carries the server, for this machine (opgen-lsp.vsix).
// `npm run package:all`: one for each platform below (opgen-lsp-<target>.vsix), all built here.
// Each bundles opgen_lsp (scripts/bundle_server.py --platform: the pure-Python packages, and PyYAML's
// C loader from that platform's wheels) into bundled/libs, then packages it for that vsce target.
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const extension = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// vsce's names of the platforms VS Code ships that a CPython wheel of PyYAML exists for.
const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"];
const here = `${process.platform}-${process.arch}`; // this machine, in vsce's names: linux-x64, darwin-arm64, ...
const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const python = process.env.PYTHON ?? (process.platform === "win32" ? "python" : "python3");
const run = (command, args) => execFileSync(command, args, { cwd: extension, stdio: "inherit" });

function packageFor(target, out) {
  // This machine's build takes the compiled modules of its own pip tags (musl, older glibc, ...).
  const platform = target === here ? [] : ["--platform", target];
  run(python, [path.join(extension, "scripts", "bundle_server.py"), ...platform]);
  run(npx, ["vsce", "package", "--no-dependencies", "--target", target, "--out", out]);
}

if (process.argv.includes("--all")) {
  // This machine's last, so that bundled/ holds a copy that runs here afterwards.
  for (const target of [...TARGETS.filter((t) => t !== here), ...TARGETS.filter((t) => t === here)]) {
    packageFor(target, `opgen-lsp-${target}.vsix`);
  }
} else {
  packageFor(here, "opgen-lsp.vsix");
}
