// Which opgen-lsp to start (pure logic: the file system and the interpreter are probed through `Probe`).
//
// In order: the configured server path; the Python interpreter (the setting, else the Python
// extension's, else `python.defaultInterpreterPath`, else python3 on PATH) with opgen_lsp
// installed; the copy bundled in the extension (bundled/libs, run by any of those interpreters);
// last, an `opgen-lsp` on PATH.

export interface PythonCandidate {
  path: string;
  /** Where the interpreter came from, for messages: "opgen.server.pythonPath", "Python extension", ... */
  source: string;
}

export interface ServerCommand {
  command: string;
  args: string[];
  /** Extra environment variables (the bundled copy sets PYTHONPATH). */
  env?: Record<string, string>;
  /** For the status bar tooltip and the output channel. */
  source: string;
}

export interface Probe {
  /** Whether `python -c "import opgen_lsp"` succeeds. */
  hasOpgen(python: string): Promise<boolean>;
  /** Whether a file or folder exists. */
  exists(path: string): boolean;
  /** The full path of an executable on PATH, or undefined. */
  which(name: string): string | undefined;
}

export interface ResolveOptions {
  serverPath?: string | null;
  serverArgs?: readonly string[];
  pythons: readonly PythonCandidate[];
  /** The extension's bundled/libs folder (holds opgen_lsp when the .vsix was built with `npm run bundle-server`). */
  bundledLibs?: string;
  probe: Probe;
  /** Separator of PYTHONPATH entries (":" here, ";" on Windows). */
  pathSeparator?: string;
  existingPythonPath?: string;
}

export class ServerNotFound extends Error {
  constructor(public readonly tried: string[]) {
    super(
      "opgen-lsp was not found. Install it into your Python environment (pip install opgen-lsp), " +
        "or set opgen.server.path or opgen.server.pythonPath. Tried: " +
        tried.join("; "),
    );
  }
}

function withStdio(args: readonly string[]): string[] {
  const out = [...args];
  if (!out.includes("--stdio") && !out.includes("--tcp")) {
    out.unshift("--stdio");
  }
  return out;
}

export async function resolveServer(options: ResolveOptions): Promise<ServerCommand> {
  const extra = options.serverArgs ?? [];
  const tried: string[] = [];
  const serverPath = options.serverPath?.trim();
  if (serverPath) {
    // A configured path is used as it is (a missing one is an error, not a reason to look elsewhere).
    const found = serverPath.includes("/") || serverPath.includes("\\") ? serverPath : options.probe.which(serverPath);
    if (!found || !options.probe.exists(found)) {
      throw new ServerNotFound([`opgen.server.path = ${serverPath} (not found)`]);
    }
    return { command: found, args: withStdio(extra), source: "opgen.server.path" };
  }
  const seen = new Set<string>();
  const pythons: PythonCandidate[] = [];
  for (const candidate of options.pythons) {
    if (!candidate.path || seen.has(candidate.path)) {
      continue;
    }
    seen.add(candidate.path);
    pythons.push(candidate);
  }
  const usable: PythonCandidate[] = [];
  for (const python of pythons) {
    const path = python.path.includes("/") || python.path.includes("\\") ? python.path : options.probe.which(python.path);
    if (!path || !options.probe.exists(path)) {
      tried.push(`${python.source}: ${python.path} (no such interpreter)`);
      continue;
    }
    usable.push({ path, source: python.source });
    if (await options.probe.hasOpgen(path)) {
      return {
        command: path,
        args: ["-m", "opgen_lsp.lsp.main", ...withStdio(extra)],
        source: `${python.source} (${path})`,
      };
    }
    tried.push(`${python.source}: ${path} (opgen_lsp not installed)`);
  }
  if (options.bundledLibs && options.probe.exists(`${options.bundledLibs}/opgen_lsp`) && usable.length > 0) {
    const sep = options.pathSeparator ?? ":";
    const pythonPath = options.existingPythonPath ? `${options.bundledLibs}${sep}${options.existingPythonPath}` : options.bundledLibs;
    return {
      command: usable[0].path,
      args: ["-m", "opgen_lsp.lsp.main", ...withStdio(extra)],
      env: { PYTHONPATH: pythonPath },
      source: `bundled copy, run by ${usable[0].path}`,
    };
  }
  tried.push("bundled copy (none in this build)");
  const onPath = options.probe.which("opgen-lsp");
  if (onPath) {
    return { command: onPath, args: withStdio(extra), source: `PATH (${onPath})` };
  }
  tried.push("opgen-lsp on PATH (none)");
  throw new ServerNotFound(tried);
}
