// The VS Code client of opgen-lsp: starts the server for PyTorch operator yaml, and adds the
// commands Generate, Show generated code and Restart server, and a status bar item.
import * as cp from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";
import {
  affectsServerStart,
  documentSelector,
  opAtCursor,
  SERVER_SETTINGS,
  serverSettings,
  userSettings,
} from "./config";
import { stderrLevels } from "./log";
import { parseInspection, type PythonCandidate, resolveServer, type ServerCommand, ServerNotFound } from "./resolve";
import { generateOutcome, parseTorchgenVersion, type ReleaseInfo, type ServerState, statusView } from "./status";

let client: LanguageClient | undefined;
let status: vscode.StatusBarItem;
let output: vscode.LogOutputChannel;
let extensionContext: vscode.ExtensionContext;
let torchgenVersion: string | undefined;
let starting: Promise<void> | undefined;
// The torch release of each open native_functions.yaml (the server's opgen/release), and the latest one told.
const releases = new Map<string, ReleaseInfo>();
let latestRelease: ReleaseInfo | undefined;
let shown: { state: ServerState; detail?: string } = { state: "starting" };

/** The release to show: the active editor's native_functions.yaml's, else the latest the server told. */
function releaseInView(): ReleaseInfo | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri.toString();
  return (uri !== undefined ? releases.get(uri) : undefined) ?? latestRelease;
}

function setStatus(state: ServerState, detail?: string): void {
  shown = { state, detail };
  const view = statusView(state, torchgenVersion, detail, releaseInView());
  status.text = view.text;
  status.tooltip = view.tooltip;
  status.backgroundColor = view.error ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  status.show();
}

function run(command: string, args: string[], env?: Record<string, string>): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    cp.execFile(command, args, { timeout: 20000, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout: `${stdout}${stderr}` });
    });
  });
}

function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    for (const ext of process.platform === "win32" ? [".exe", ".cmd", ""] : [""]) {
      const candidate = path.join(dir, name + ext);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) {
          return candidate;
        }
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/** A virtual environment's interpreter (bin/python, Scripts\\python.exe on Windows). */
function venvPython(folder: string): string {
  return process.platform === "win32" ? path.join(folder, "Scripts", "python.exe") : path.join(folder, "bin", "python");
}

/** The interpreters to try, best first: the setting, the Python extension's, python.defaultInterpreterPath,
 * the workspace folders' .venv, $VIRTUAL_ENV, then python3 on PATH. */
async function pythonCandidates(resource: vscode.Uri | undefined): Promise<PythonCandidate[]> {
  const out: PythonCandidate[] = [];
  const configured = vscode.workspace.getConfiguration("opgen", resource).get<string | null>("server.pythonPath");
  if (configured) {
    out.push({ path: configured, source: "opgen.server.pythonPath" });
  }
  const pythonExtension = vscode.extensions.getExtension("ms-python.python");
  if (pythonExtension) {
    try {
      const api = pythonExtension.isActive ? pythonExtension.exports : await pythonExtension.activate();
      const environments = api?.environments;
      if (environments?.getActiveEnvironmentPath) {
        const active = environments.getActiveEnvironmentPath(resource);
        const resolved = environments.resolveEnvironment ? await environments.resolveEnvironment(active) : undefined;
        const executable: string | undefined = resolved?.executable?.uri?.fsPath ?? active?.path;
        if (executable) {
          out.push({ path: executable, source: "Python extension" });
        }
      } else if (api?.settings?.getExecutionDetails) {
        const command: string[] | undefined = api.settings.getExecutionDetails(resource)?.execCommand;
        if (command?.[0]) {
          out.push({ path: command[0], source: "Python extension" });
        }
      }
    } catch (error) {
      output.appendLine(`The Python extension's API failed: ${String(error)}`);
    }
  }
  const fallback = vscode.workspace.getConfiguration("python", resource).get<string>("defaultInterpreterPath");
  if (fallback && fallback !== "python") {
    out.push({ path: fallback, source: "python.defaultInterpreterPath" });
  }
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const python = venvPython(path.join(folder.uri.fsPath, ".venv"));
    if (fs.existsSync(python)) {
      out.push({ path: python, source: "workspace .venv" });
    }
  }
  // The extension host's environment: code-server and remote hosts take it from a login shell, which may
  // not have the activated environment's bin/ on PATH even when VIRTUAL_ENV is set.
  if (process.env.VIRTUAL_ENV) {
    out.push({ path: venvPython(process.env.VIRTUAL_ENV), source: "VIRTUAL_ENV" });
  }
  out.push({ path: process.platform === "win32" ? "python" : "python3", source: "PATH", fallback: true });
  return out;
}

// Prints "3 12 True": the version, and whether opgen_lsp imports with the module the server is started by
// (opgen_lsp.serve; an older opgen_lsp has none, and the bundled copy is used instead).
const INSPECT = [
  "import sys",
  "print(*sys.version_info[:2], end=' ')",
  "try:\n import importlib.util\n print(importlib.util.find_spec('opgen_lsp.serve') is not None)\nexcept Exception:\n print(False)",
].join("\n");

async function findServer(): Promise<ServerCommand> {
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  const config = vscode.workspace.getConfiguration("opgen", resource);
  return resolveServer({
    serverPath: config.get<string | null>("server.path"),
    serverArgs: config.get<string[]>("server.args") ?? [],
    pythons: await pythonCandidates(resource),
    bundledLibs: extensionContext.asAbsolutePath(path.join("bundled", "libs")),
    pathSeparator: path.delimiter,
    existingPythonPath: process.env.PYTHONPATH,
    probe: {
      inspect: async (python) => parseInspection(await run(python, ["-c", INSPECT])),
      exists: (p) => fs.existsSync(p),
      which,
    },
  });
}

/** The server's options as the `opgen` section holds them now (initializationOptions). */
function currentServerSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration("opgen", vscode.workspace.workspaceFolders?.[0]?.uri);
  const section: Record<string, unknown> = {};
  for (const key of Object.keys(SERVER_SETTINGS)) {
    section[key] = config.get(key);
  }
  return serverSettings(section);
}

/** The user's own values of the settings the server trusts only from the user (initializationOptions.userSettings). */
function currentUserSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration("opgen");
  return userSettings((key) => config.inspect(key)?.globalValue);
}

async function torchgenOf(server: ServerCommand, initialized: LanguageClient): Promise<string | undefined> {
  const fromInfo = parseTorchgenVersion(initialized.initializeResult?.serverInfo?.version);
  if (fromInfo) {
    return fromInfo;
  }
  const helpArgs = server.args[0] === "-m" ? ["-m", server.args[1], "--help"] : ["--help"];
  return parseTorchgenVersion((await run(server.command, helpArgs, server.env)).stdout);
}

function selector(): ReturnType<typeof documentSelector> {
  return documentSelector(vscode.workspace.getConfiguration("opgen").get<unknown[]>("files"));
}

async function startClient(): Promise<void> {
  setStatus("starting");
  let server: ServerCommand;
  try {
    server = await findServer();
  } catch (error) {
    const message = error instanceof ServerNotFound ? error.message : String(error);
    output.appendLine(message);
    setStatus("missing", message);
    void vscode.window.showErrorMessage(message, "Open settings").then((choice) => {
      if (choice) {
        void vscode.commands.executeCommand("workbench.action.openSettings", "opgen.server");
      }
    });
    return;
  }
  output.appendLine(`Starting ${server.command} ${server.args.join(" ")} (${server.source})`);
  const serverOptions: ServerOptions = {
    command: server.command,
    args: server.args,
    options: { env: { ...process.env, ...server.env } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: selector(),
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    // Hovers end with a link to "Show generated code" (the op's whole generated code): the one command they may run.
    markdown: { isTrusted: { enabledCommands: ["opgenLsp.showGenerated"] } },
    // The default shows every stderr line as an error: keep the level the server logged it at.
    stdioOptions: {
      stdout: (input, channel) => readline.createInterface({ input, crlfDelay: Infinity }).on("line", (line) => channel.info(line)),
      stderr: (input, channel) => {
        const levelOf = stderrLevels();
        readline.createInterface({ input, crlfDelay: Infinity }).on("line", (line) => channel[levelOf(line)](line));
      },
    },
    // commandLinks: this client runs the hover's command link (markdown.isTrusted above); others get the CLI command.
    initializationOptions: { ...currentServerSettings(), userSettings: currentUserSettings(), commandLinks: true },
    synchronize: { configurationSection: "opgen" },
    middleware: {
      workspace: {
        // The `opgen` section also holds the client's own keys (server.*, files, trace): send only the server's.
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (!Array.isArray(result)) {
            return result;
          }
          return result.map((value, i) => (params.items[i]?.section === "opgen" ? serverSettings(value) : value));
        },
      },
    },
  };
  const created = new LanguageClient("opgen", "opgen-lsp", serverOptions, clientOptions);
  client = created;
  releases.clear();
  latestRelease = undefined;
  created.onNotification("opgen/release", (info: ReleaseInfo) => {
    if (client === created) {
      releases.set(info.uri, info);
      latestRelease = info;
      setStatus(shown.state, shown.detail);
    }
  });
  created.onDidChangeState((event) => {
    if (client !== created) {
      return;
    }
    if (event.newState === State.Running) {
      setStatus("running", server.source);
    } else if (event.newState === State.Starting) {
      setStatus("starting", server.source);
    } else {
      setStatus("stopped", server.source);
    }
  });
  try {
    await created.start();
  } catch (error) {
    output.appendLine(`opgen-lsp failed to start: ${String(error)}`);
    setStatus("failed", `${server.source}: ${String(error)}`);
    return;
  }
  torchgenVersion = await torchgenOf(server, created);
  setStatus(created.state === State.Running ? "running" : "stopped", server.source);
}

async function stopClient(): Promise<void> {
  const old = client;
  client = undefined;
  if (old) {
    try {
      await old.stop(3000);
    } catch (error) {
      output.appendLine(`Stopping opgen-lsp: ${String(error)}`);
    }
    await old.dispose(3000).catch(() => undefined);
  }
}

async function restart(): Promise<void> {
  if (starting) {
    await starting;
  }
  starting = (async () => {
    await stopClient();
    torchgenVersion = undefined;
    await startClient();
  })();
  try {
    await starting;
  } finally {
    starting = undefined;
  }
}

async function runningClient(): Promise<LanguageClient | undefined> {
  if (starting) {
    await starting;
  }
  if (client?.state === State.Running) {
    return client;
  }
  showFailure("opgen-lsp is not running (opgen: Restart server, or see the opgen-lsp output).");
  return undefined;
}

/** The active editor's document when the server handles it. */
function activeOperatorDocument(): vscode.TextDocument | undefined {
  const document = vscode.window.activeTextEditor?.document;
  return document && vscode.languages.match(selector(), document) > 0 ? document : undefined;
}

async function generate(): Promise<unknown> {
  const lsp = await runningClient();
  if (!lsp) {
    return undefined;
  }
  const document = activeOperatorDocument();
  let saved: string | undefined;
  if (document?.isDirty) {
    await document.save(); // the server generates from the files as saved on disk (the message says so)
    saved = path.basename(document.uri.fsPath);
  }
  const args = document ? [{ uri: document.uri.toString() }] : [];
  try {
    const result = await lsp.sendRequest(ExecuteCommandRequest.type, { command: "opgen.generate", arguments: args });
    const outcome = generateOutcome(result, saved);
    output.info(outcome.message);
    if (outcome.failed) {
      outcome.details.forEach((line) => output.error(line));
      showFailure(outcome.message);
    } else {
      void vscode.window.showInformationMessage(outcome.message);
    }
    return result;
  } catch (error) {
    showFailure(`opgen: Generate failed: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** A failed command: an error notification (cut when long) whose "Show output" opens the whole text. */
function showFailure(message: string): void {
  output.error(message);
  void vscode.window.showErrorMessage(message, "Show output").then((choice) => {
    if (choice) {
      output.show(true);
    }
  });
}

async function showGenerated(what?: string): Promise<unknown> {
  const lsp = await runningClient();
  if (!lsp) {
    return undefined;
  }
  const editor = vscode.window.activeTextEditor;
  const document = activeOperatorDocument();
  let target = what;
  if (!target && editor && document) {
    target = opAtCursor(document.getText().split(/\r?\n/), editor.selection.active.line);
  }
  if (!target) {
    target = await vscode.window.showInputBox({
      prompt: "An operator (name.overload) or a generated file",
      placeHolder: "add.Tensor, or Functions.h",
    });
  }
  if (!target) {
    return undefined;
  }
  const arg: Record<string, string> = /\.(h|cpp|yaml)$/.test(target) ? { file: target } : { op: target };
  if (document) {
    arg.uri = document.uri.toString();
  }
  let result: { uri?: string; title?: string; text?: string } | undefined;
  try {
    result = await lsp.sendRequest(ExecuteCommandRequest.type, { command: "opgen.showGenerated", arguments: [arg] });
  } catch (error) {
    showFailure(`opgen: Show generated code failed: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  if (!result) {
    return undefined;
  }
  // The server asks LSP 3.18 clients to show its virtual document itself; otherwise show the text.
  const shown = vscode.workspace.textDocuments.find((d) => d.uri.toString() === result?.uri);
  if (shown) {
    await vscode.window.showTextDocument(shown, { preview: true });
  } else if (typeof result.text === "string") {
    const untitled = await vscode.workspace.openTextDocument({ content: result.text, language: "cpp" });
    await vscode.window.showTextDocument(untitled, { preview: true });
  }
  return result;
}

/** opgen: Scaffold a new operator: a schema typed in a prompt, plain or structured, sent to opgen.scaffold
 * (the server computes the edits and applies them through workspace/applyEdit). */
async function scaffold(schema?: string): Promise<unknown> {
  const lsp = await runningClient();
  if (!lsp) {
    return undefined;
  }
  const typed = schema ?? (await vscode.window.showInputBox({
    prompt: "The new operator's functional schema (its in-place and out= entries are derived from it)",
    placeHolder: "my_op(Tensor self, Scalar alpha=1) -> Tensor",
  }));
  if (!typed) {
    return undefined;
  }
  const kind = await vscode.window.showQuickPick(["Plain kernels", "Structured (structured_delegate to out=)"],
                                                 { title: "opgen: Scaffold a new operator" });
  if (!kind) {
    return undefined;
  }
  const arg: Record<string, unknown> = { schema: typed, structured: kind.startsWith("Structured") };
  const document = activeOperatorDocument();
  if (document) {
    arg.uri = document.uri.toString();
  }
  let result: { error?: string } | undefined;
  try {
    result = await lsp.sendRequest(ExecuteCommandRequest.type, { command: "opgen.scaffold", arguments: [arg] });
  } catch (error) {
    showFailure(`opgen: Scaffold failed: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  if (result?.error) {
    showFailure(`opgen: Scaffold: ${result.error}`);
  }
  return result;
}

async function menu(): Promise<void> {
  const items: (vscode.QuickPickItem & { command: string })[] = [
    { label: "$(play) Generate", command: "opgenLsp.generate" },
    { label: "$(file-code) Show generated code", command: "opgenLsp.showGenerated" },
    { label: "$(new-file) Scaffold a new operator", command: "opgenLsp.scaffold" },
    { label: "$(debug-restart) Restart server", command: "opgenLsp.restartServer" },
    { label: "$(output) Show the server's output", command: "opgenLsp.showOutput" },
  ];
  const choice = await vscode.window.showQuickPick(items, { title: "opgen" });
  if (choice) {
    await vscode.commands.executeCommand(choice.command);
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<{ client: () => LanguageClient | undefined }> {
  extensionContext = context;
  output = vscode.window.createOutputChannel("opgen-lsp", { log: true });
  status = vscode.window.createStatusBarItem("opgen.status", vscode.StatusBarAlignment.Right, 100);
  status.name = "opgen-lsp";
  status.command = "opgenLsp.menu";
  context.subscriptions.push(
    output,
    status,
    vscode.commands.registerCommand("opgenLsp.generate", generate),
    vscode.commands.registerCommand("opgenLsp.showGenerated", showGenerated),
    vscode.commands.registerCommand("opgenLsp.scaffold", scaffold),
    vscode.commands.registerCommand("opgenLsp.restartServer", restart),
    vscode.commands.registerCommand("opgenLsp.showOutput", () => output.show(true)),
    vscode.commands.registerCommand("opgenLsp.menu", menu),
    vscode.window.onDidChangeActiveTextEditor(() => setStatus(shown.state, shown.detail)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (affectsServerStart((section) => event.affectsConfiguration(section))) {
        void restart();
      }
    }),
  );
  await restart();
  // After the first start, which activated the Python extension (if installed) to ask for its interpreter.
  const pythonExtension = vscode.extensions.getExtension("ms-python.python");
  if (pythonExtension?.isActive) {
    const onChange = pythonExtension.exports?.environments?.onDidChangeActiveEnvironmentPath;
    if (typeof onChange === "function") {
      context.subscriptions.push(onChange(() => void restart()));
    }
  }
  return { client: () => client };
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
