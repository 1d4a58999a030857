// A stand-in for the Python extension (ms-python.python), for tests/editors/test_vscode_python.py: the part
// of its documented API (the `PythonExtension` of @vscode/python-extension) that opgen's extension calls,
// and its command "Python: Select Interpreter". It knows the environments (virtual environments' folders)
// of the setting pythonStandIn.environments; the first is active until another is selected, which fires
// onDidChangeActiveEnvironmentPath. getActiveEnvironmentPath gives the environment's folder, not its
// interpreter (the API allows either), so a client must ask resolveEnvironment for the executable.
const path = require("node:path");
const vscode = require("vscode");

function activate(context) {
  const known = () => vscode.workspace.getConfiguration("pythonStandIn").get("environments") || [];
  let selected;
  const active = () => {
    const folder = selected ?? known()[0] ?? "";
    return { id: folder, path: folder };
  };
  const changed = new vscode.EventEmitter();
  context.subscriptions.push(
    changed,
    vscode.commands.registerCommand("python.setInterpreter", async () => {
      const folder = await vscode.window.showQuickPick(known(), { placeHolder: "Select Interpreter" });
      if (folder) {
        selected = folder;
        changed.fire({ ...active(), resource: undefined });
      }
    }),
  );
  const resolveEnvironment = async (environment) => {
    const folder = typeof environment === "string" ? environment : environment?.path;
    if (!folder) {
      return undefined;
    }
    const python = process.platform === "win32" ? path.join(folder, "Scripts", "python.exe") : path.join(folder, "bin", "python");
    return {
      id: folder,
      path: folder,
      executable: { uri: vscode.Uri.file(python), bitness: "64-bit", sysPrefix: folder },
      environment: { type: "VirtualEnvironment", name: path.basename(folder), folderUri: vscode.Uri.file(folder), workspaceFolder: undefined },
      tools: ["Venv"],
      version: undefined,
    };
  };
  return {
    ready: Promise.resolve(),
    environments: {
      getActiveEnvironmentPath: () => active(),
      resolveEnvironment,
      onDidChangeActiveEnvironmentPath: changed.event,
      get known() {
        return known().map((folder) => ({ id: folder, path: folder }));
      },
    },
  };
}

module.exports = { activate, deactivate() {} };
