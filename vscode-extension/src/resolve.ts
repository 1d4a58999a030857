// Which opgen-lsp to start (pure logic: the file system and the interpreters are probed through `Probe`).
//
// In order: the configured server path; an interpreter chosen for this workspace (the setting, the
// Python extension's, python.defaultInterpreterPath, the workspace's .venv, $VIRTUAL_ENV) with
// opgen_lsp installed; the copy bundled in the extension (bundled/libs, in the platform .vsix), run by
// the first of those interpreters (or python3 on PATH) that is Python 3.11+; python3 on PATH with
// opgen_lsp installed; last, an `opgen-lsp` on PATH.

/** The oldest Python opgen_lsp runs on (pyproject.toml's requires-python). */
export const MIN_PYTHON: readonly [number, number] = [3, 11];

export interface PythonCandidate {
  path: string;
  /** Where the interpreter came from, for messages: "opgen.server.pythonPath", "Python extension", ... */
  source: string;
  /** python3 on PATH: used with its own opgen_lsp only when the extension bundles none. */
  fallback?: boolean;
}

/** What an interpreter is: its version, and whether it imports opgen_lsp. */
export interface Interpreter {
  version: readonly [number, number];
  hasOpgen: boolean;
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
  /** The interpreter's version and whether `import opgen_lsp` works; undefined when it does not run. */
  inspect(python: string): Promise<Interpreter | undefined>;
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
      "opgen-lsp was not found. Install the extension's platform build (`npm run package` in the repository's " +
        "vscode-extension/; it carries the server and needs a Python 3.11+), or install opgen from a clone of its " +
        "repository into a Python 3.11+ environment (`python3 -m pip install <clone>`, or `pipx install <clone>` " +
        "for an opgen-lsp on PATH) and select that interpreter (opgen.server.pythonPath), or set opgen.server.path. " +
        "Tried: " +
        tried.join("; "),
    );
  }
}

/** The interpreter from the output of extension.ts's INSPECT ("3 12 True"); undefined when it did not run. */
export function parseInspection(result: { code: number; stdout: string }): Interpreter | undefined {
  // stdout comes first (warnings on stderr may follow).
  const match = /^(\d+) (\d+) (True|False)\b/.exec(result.stdout.trim());
  if (result.code !== 0 || !match) {
    return undefined;
  }
  return { version: [Number(match[1]), Number(match[2])], hasOpgen: match[3] === "True" };
}

function atLeast(version: readonly [number, number], minimum: readonly [number, number]): boolean {
  return version[0] > minimum[0] || (version[0] === minimum[0] && version[1] >= minimum[1]);
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
  const usable: PythonCandidate[] = [];
  let installedOnPath: ServerCommand | undefined;
  for (const python of options.pythons) {
    if (!python.path || seen.has(python.path)) {
      continue;
    }
    seen.add(python.path);
    const path = python.path.includes("/") || python.path.includes("\\") ? python.path : options.probe.which(python.path);
    if (!path || !options.probe.exists(path)) {
      tried.push(`${python.source}: ${python.path} (no such interpreter)`);
      continue;
    }
    const found = await options.probe.inspect(path);
    if (!found) {
      tried.push(`${python.source}: ${path} (does not run)`);
      continue;
    }
    if (!atLeast(found.version, MIN_PYTHON)) {
      tried.push(`${python.source}: ${path} (Python ${found.version.join(".")}; opgen needs ${MIN_PYTHON.join(".")}+)`);
      continue;
    }
    usable.push({ ...python, path });
    if (!found.hasOpgen) {
      tried.push(`${python.source}: ${path} (opgen_lsp not installed)`);
      continue;
    }
    const server = { command: path, args: ["-m", "opgen_lsp.serve", ...withStdio(extra)], source: `${python.source} (${path})` };
    if (!python.fallback) {
      return server;
    }
    installedOnPath ??= server;
  }
  if (options.bundledLibs && options.probe.exists(`${options.bundledLibs}/opgen_lsp`) && usable.length > 0) {
    const sep = options.pathSeparator ?? ":";
    const pythonPath = options.existingPythonPath ? `${options.bundledLibs}${sep}${options.existingPythonPath}` : options.bundledLibs;
    return {
      command: usable[0].path,
      args: ["-m", "opgen_lsp.serve", ...withStdio(extra)],
      env: { PYTHONPATH: pythonPath },
      source: `bundled copy, run by ${usable[0].path}`,
    };
  }
  if (installedOnPath) {
    return installedOnPath;
  }
  tried.push(options.bundledLibs && options.probe.exists(`${options.bundledLibs}/opgen_lsp`)
    ? `bundled copy (no Python ${MIN_PYTHON.join(".")}+ to run it)`
    : "bundled copy (none in this build: `npm run package` makes the build that carries it)");
  const onPath = options.probe.which("opgen-lsp");
  if (onPath) {
    return { command: onPath, args: withStdio(extra), source: `PATH (${onPath})` };
  }
  tried.push("opgen-lsp on PATH (none)");
  throw new ServerNotFound(tried);
}
