// Bundles opgen_lsp and its dependencies (PyYAML's C loader for every CPython 3.11+) into bundled/libs
// (scripts/bundle_server.py does the work, with $PYTHON, else python3). `npm run package` runs it first.
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const python = process.env.PYTHON ?? (process.platform === "win32" ? "python" : "python3");
execFileSync(python, [path.join(here, "bundle_server.py")], { stdio: "inherit" });
