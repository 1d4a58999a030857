// Pure logic (no `vscode` import) so that node's test runner can load it.

/** The files the server is started for, by path pattern: the YAML extension keeps every other yaml. */
export const DEFAULT_PATTERNS = [
  "**/native_functions.yaml",
  "**/tags.yaml",
  "**/*_functions.yaml",
  "**/derivatives.yaml",
  "**/autograd/deprecated.yaml",
];

export interface DocumentFilter {
  scheme: string;
  pattern: string;
}

/** The document selector: the default patterns plus the `opgen.files` setting, for files on disk. */
export function documentSelector(extra: readonly unknown[] | undefined): DocumentFilter[] {
  const patterns: string[] = [...DEFAULT_PATTERNS];
  for (const p of extra ?? []) {
    if (typeof p === "string" && p.trim() !== "" && !patterns.includes(p.trim())) {
      patterns.push(p.trim());
    }
  }
  return patterns.map((pattern) => ({ scheme: "file", pattern }));
}

/** Every option the server reads (docs/lsp.md, "Settings"), with its default. */
export const SERVER_SETTINGS: Readonly<Record<string, unknown>> = {
  debounceMs: 0,
  tagsPath: null,
  maxWorkspaceSymbols: 500,
  retainedAnalyses: 16,
  nativeFunctionsPath: null,
  implPaths: [],
  outputDir: null,
  generateTarget: "auto",
  perOperatorHeaders: false,
  codeLens: true,
  kernelDirs: [],
  kernelSeverity: "warning",
  kernelStubFile: null,
  torchVersion: null,
  pytorchFormatCheck: true,
  compatibilityBase: "HEAD",
  upgradeTarget: null,
  lazy: { preset: "auto", shapeInferenceHeader: null },
};

/** Client-only keys of the `opgen` section: never sent to the server (it warns about unknown keys). */
export const CLIENT_SETTINGS = ["server", "files", "trace"];

/**
 * The server's options out of the `opgen` configuration section: only the keys it knows, and only
 * those that are set (null-valued paths stay null: the server takes null as "use the default").
 */
export function serverSettings(section: Record<string, unknown> | undefined | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!section || typeof section !== "object") {
    return out;
  }
  for (const key of Object.keys(SERVER_SETTINGS)) {
    const value = section[key];
    if (value !== undefined) {
      out[key] = value;
    }
  }
  return out;
}

/**
 * Settings that make the server write files: it writes outside the workspace folders only where the user's
 * own value points, which no workspace can set (docs/lsp.md, "Workspace trust").
 */
export const USER_TRUSTED_SETTINGS = ["outputDir"];

/**
 * initializationOptions.userSettings: the user-level values (`inspect(key).globalValue`, never a workspace's)
 * of the settings the server trusts only from the user.
 */
export function userSettings(globalValue: (key: string) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of USER_TRUSTED_SETTINGS) {
    const value = globalValue(key);
    if (typeof value === "string" && value.trim() !== "") {
      out[key] = value;
    }
  }
  return out;
}

/**
 * Server settings that cannot be applied to a running server without re-reading the configuration (the
 * user-level opgen.outputDir goes in initializationOptions: a change restarts the server).
 */
export function affectsServerStart(changed: (section: string) => boolean): boolean {
  return ["opgen.server", "opgen.files", "opgen.trace", ...USER_TRUSTED_SETTINGS.map((k) => `opgen.${k}`)].some(
    (s) => changed(s),
  );
}

const OP_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?$/;

/** The op (`name.overload`) a `func:` line declares, or undefined when the line is not one. */
export function opOfFuncLine(line: string): string | undefined {
  const m = /^\s*(?:-\s+)?func:\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\(/.exec(line);
  return m && OP_NAME.test(m[1]) ? m[1] : undefined;
}

/**
 * The op declared by the entry the cursor is in: the nearest `func:` line at or above `line` that is
 * still in the same entry (an entry starts at a `- ` line at the top level).
 */
export function opAtCursor(lines: readonly string[], line: number): string | undefined {
  for (let i = Math.min(line, lines.length - 1); i >= 0; i--) {
    const op = opOfFuncLine(lines[i]);
    if (op) {
      return op;
    }
    if (/^-\s/.test(lines[i])) {
      // the first line of the entry, and not a func: line: look below it for the func: line
      for (let j = i + 1; j < lines.length && !/^-\s/.test(lines[j]); j++) {
        const below = opOfFuncLine(lines[j]);
        if (below) {
          return below;
        }
      }
      return undefined;
    }
  }
  return undefined;
}
