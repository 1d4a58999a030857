import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseInspection, type Probe, resolveServer, ServerNotFound } from "../src/resolve";

/** Every existing interpreter is Python 3.12 unless `versions` says otherwise. */
function probe(files: string[], withOpgen: string[], onPath: Record<string, string> = {},
               versions: Record<string, [number, number]> = {}): Probe & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    inspect: async (python) => {
      asked.push(python);
      return { version: versions[python] ?? [3, 12], hasOpgen: withOpgen.includes(python) };
    },
    exists: (p) => files.includes(p),
    which: (name) => onPath[name],
  };
}

describe("resolveServer", () => {
  it("uses a configured server path first, adding --stdio and the extra arguments", async () => {
    const p = probe(["/opt/opgen-lsp", "/usr/bin/python3"], ["/usr/bin/python3"]);
    const server = await resolveServer({ serverPath: "/opt/opgen-lsp", serverArgs: ["--log-level", "DEBUG"], pythons: [{ path: "/usr/bin/python3", source: "PATH" }], probe: p });
    assert.deepEqual(server, { command: "/opt/opgen-lsp", args: ["--stdio", "--log-level", "DEBUG"], source: "opgen.server.path" });
    assert.deepEqual(p.asked, []);
  });
  it("looks a bare configured name up on PATH, and fails when a configured path is missing", async () => {
    const p = probe(["/home/u/bin/opgen-lsp"], [], { "opgen-lsp": "/home/u/bin/opgen-lsp" });
    assert.equal((await resolveServer({ serverPath: "opgen-lsp", pythons: [], probe: p })).command, "/home/u/bin/opgen-lsp");
    await assert.rejects(resolveServer({ serverPath: "/nope/opgen-lsp", pythons: [], probe: p }), ServerNotFound);
  });
  it("keeps an explicit --tcp", async () => {
    const p = probe(["/opt/opgen-lsp"], []);
    const server = await resolveServer({ serverPath: "/opt/opgen-lsp", serverArgs: ["--tcp", "--port", "1"], pythons: [], probe: p });
    assert.deepEqual(server.args, ["--tcp", "--port", "1"]);
  });
  it("takes the first interpreter that has opgen_lsp", async () => {
    const p = probe(["/venv/bin/python", "/usr/bin/python3"], ["/usr/bin/python3"], { python3: "/usr/bin/python3" });
    const server = await resolveServer({
      pythons: [
        { path: "/venv/bin/python", source: "Python extension" },
        { path: "/missing/python", source: "opgen.server.pythonPath" },
        { path: "python3", source: "PATH", fallback: true },
      ],
      probe: p,
    });
    assert.equal(server.command, "/usr/bin/python3");
    assert.deepEqual(server.args, ["-m", "opgen_lsp.serve", "--stdio"]);
    assert.match(server.source, /^PATH/);
    assert.deepEqual(p.asked, ["/venv/bin/python", "/usr/bin/python3"]);
  });
  it("asks each interpreter once", async () => {
    const p = probe(["/usr/bin/python3"], ["/usr/bin/python3"]);
    await resolveServer({ pythons: [{ path: "/usr/bin/python3", source: "a" }, { path: "/usr/bin/python3", source: "b" }], probe: p });
    assert.deepEqual(p.asked, ["/usr/bin/python3"]);
  });
  it("falls back to the bundled copy, run by the first interpreter, with PYTHONPATH", async () => {
    const p = probe(["/venv/bin/python", "/ext/bundled/libs/opgen_lsp"], []);
    const server = await resolveServer({
      pythons: [{ path: "/venv/bin/python", source: "Python extension" }],
      bundledLibs: "/ext/bundled/libs",
      existingPythonPath: "/site",
      probe: p,
    });
    assert.equal(server.command, "/venv/bin/python");
    assert.deepEqual(server.env, { PYTHONPATH: "/ext/bundled/libs:/site" });
    assert.match(server.source, /bundled/);
  });
  it("prefers the bundled copy to python3 on PATH, but not to an interpreter chosen for the workspace", async () => {
    const files = ["/ws/.venv/bin/python", "/usr/bin/python3", "/ext/bundled/libs/opgen_lsp"];
    const path = { path: "python3", source: "PATH", fallback: true };
    const p = probe(files, ["/usr/bin/python3"], { python3: "/usr/bin/python3" });
    const bundled = await resolveServer({ pythons: [path], bundledLibs: "/ext/bundled/libs", probe: p });
    assert.equal(bundled.command, "/usr/bin/python3");
    assert.deepEqual(bundled.env, { PYTHONPATH: "/ext/bundled/libs" });
    const venv = await resolveServer({
      pythons: [{ path: "/ws/.venv/bin/python", source: "workspace .venv" }, path],
      bundledLibs: "/ext/bundled/libs",
      probe: probe(files, ["/ws/.venv/bin/python"], { python3: "/usr/bin/python3" }),
    });
    assert.equal(venv.command, "/ws/.venv/bin/python");
    assert.equal(venv.env, undefined);
    assert.match(venv.source, /^workspace \.venv/);
    // Without a bundle, python3's own opgen_lsp.
    assert.equal((await resolveServer({ pythons: [path], probe: p })).source, "PATH (/usr/bin/python3)");
  });
  it("runs the bundle only with Python 3.11+", async () => {
    const files = ["/old/python", "/usr/bin/python3", "/ext/bundled/libs/opgen_lsp"];
    const p = probe(files, [], { python3: "/usr/bin/python3" }, { "/old/python": [3, 10] });
    const server = await resolveServer({
      pythons: [{ path: "/old/python", source: "Python extension" }, { path: "python3", source: "PATH", fallback: true }],
      bundledLibs: "/ext/bundled/libs",
      probe: p,
    });
    assert.equal(server.command, "/usr/bin/python3");
    const only = probe(["/old/python", "/ext/bundled/libs/opgen_lsp"], ["/old/python"], {}, { "/old/python": [3, 10] });
    await assert.rejects(
      resolveServer({ pythons: [{ path: "/old/python", source: "Python extension" }], bundledLibs: "/ext/bundled/libs", probe: only }),
      (error: unknown) => error instanceof ServerNotFound && /Python 3\.10; opgen needs 3\.11\+/.test(error.message)
        && /no Python 3\.11\+ to run it/.test(error.message),
    );
  });
  it("reads the interpreter probe's output", () => {
    assert.deepEqual(parseInspection({ code: 0, stdout: "3 12 True\n" }), { version: [3, 12], hasOpgen: true });
    assert.deepEqual(parseInspection({ code: 0, stdout: "3 9 False\nsome warning" }), { version: [3, 9], hasOpgen: false });
    assert.equal(parseInspection({ code: 1, stdout: "SyntaxError" }), undefined);
    assert.equal(parseInspection({ code: 0, stdout: "" }), undefined);
  });
  it("names only steps that work when nothing is found", async () => {
    const none = probe(["/usr/bin/python3"], []);
    await assert.rejects(
      resolveServer({ pythons: [{ path: "/usr/bin/python3", source: "PATH", fallback: true }], probe: none }),
      (error: unknown) => error instanceof ServerNotFound && !/pip install opgen-lsp/.test(error.message)
        && /python3 -m pip install <clone>/.test(error.message) && /npm run package/.test(error.message),
    );
  });
  it("then opgen-lsp on PATH, else says what it tried", async () => {
    const p = probe(["/usr/bin/python3", "/usr/local/bin/opgen-lsp"], [], { "opgen-lsp": "/usr/local/bin/opgen-lsp" });
    const found = await resolveServer({ pythons: [{ path: "/usr/bin/python3", source: "PATH" }], bundledLibs: "/ext/bundled/libs", probe: p });
    assert.equal(found.command, "/usr/local/bin/opgen-lsp");
    const none = probe(["/usr/bin/python3"], []);
    await assert.rejects(
      resolveServer({ pythons: [{ path: "/usr/bin/python3", source: "PATH" }], probe: none }),
      (error: unknown) => error instanceof ServerNotFound && /opgen_lsp not installed/.test(error.message) && /bundled/.test(error.message),
    );
  });
});
