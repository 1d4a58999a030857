// `npm run package`: the platform .vsix that carries the server. Bundles opgen_lsp (bundle-server), then
// packages for this machine's platform (vsce --target, e.g. linux-x64): the bundle's compiled modules
// (PyYAML's C loader) are this platform's. The output is opgen-lsp.vsix.
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const extension = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const target = `${process.platform}-${process.arch}`; // vsce's names: linux-x64, linux-arm64, darwin-arm64, win32-x64, ...
const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const run = (command, args) => execFileSync(command, args, { cwd: extension, stdio: "inherit" });
run(process.execPath, [path.join(extension, "scripts", "bundle-server.mjs")]);
run(npx, ["vsce", "package", "--no-dependencies", "--target", target, "--out", "opgen-lsp.vsix"]);
