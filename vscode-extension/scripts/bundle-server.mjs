// Optional: bundles opgen_lsp and its pure-Python dependencies into bundled/libs, so that the .vsix
// can run the server with any Python 3.11+ interpreter that lacks opgen_lsp (the third choice of
// the server resolution). `npm run bundle-server && npm run package`.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const extension = path.resolve(here, "..");
const repo = path.resolve(extension, "..");
const target = path.join(extension, "bundled", "libs");
const python = process.env.PYTHON ?? "python3";
fs.rmSync(target, { recursive: true, force: true });
fs.mkdirSync(target, { recursive: true });
execFileSync(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile", "--target", target, repo], {
  stdio: "inherit",
});
// Console scripts and caches are of no use inside the extension.
fs.rmSync(path.join(target, "bin"), { recursive: true, force: true });
for (const entry of fs.readdirSync(target)) {
  if (entry === "__pycache__") {
    fs.rmSync(path.join(target, entry), { recursive: true, force: true });
  }
}
console.log(`bundled opgen_lsp into ${path.relative(extension, target)}`);
