import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  affectsServerStart,
  CLIENT_SETTINGS,
  DEFAULT_PATTERNS,
  documentSelector,
  opAtCursor,
  opOfFuncLine,
  SERVER_SETTINGS,
  serverSettings,
  userSettings,
} from "../src/config";

const ROOT = path.resolve(__dirname, "..", "..");
const REPO = path.resolve(ROOT, "..");

describe("documentSelector", () => {
  it("has the default patterns, for files", () => {
    assert.deepEqual(
      documentSelector(undefined).map((f) => f.pattern),
      ["**/native_functions.yaml", "**/tags.yaml", "**/*_functions.yaml", "**/derivatives.yaml",
        "**/autograd/deprecated.yaml"],
    );
    assert.ok(documentSelector([]).every((f) => f.scheme === "file"));
  });
  it("adds the opgen.files patterns once, ignoring blanks and non-strings", () => {
    const patterns = documentSelector(["**/my_backend.yaml", " ", 3, "**/tags.yaml", "**/my_backend.yaml"]).map((f) => f.pattern);
    assert.deepEqual(patterns, [...DEFAULT_PATTERNS, "**/my_backend.yaml"]);
  });
});

/** Settings by dotted name (`lazy.preset`), as docs/lsp.md and package.json name nested ones. */
function flatten(settings: Readonly<Record<string, unknown>>, prefix = ""): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(settings)) {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      Object.assign(out, flatten(value as Record<string, unknown>, `${prefix}${key}.`));
    } else {
      out[`${prefix}${key}`] = value;
    }
  }
  return out;
}

describe("settings", () => {
  it("declares every server option of docs/lsp.md, with its default, in package.json", () => {
    const doc = fs.readFileSync(path.join(REPO, "docs", "lsp.md"), "utf8");
    const table = doc.slice(doc.indexOf("## Settings"));
    const rows = [...table.matchAll(/^\| `([A-Za-z.]+)` \|[^|]*\| `([^`]*)` \|/gm)];
    const documented = rows.map((m) => m[1]);
    const defaults = flatten(SERVER_SETTINGS);
    for (const [, key, value] of rows) {
      assert.deepEqual(defaults[key], JSON.parse(value), `docs/lsp.md's default of ${key}`);
    }
    assert.ok(documented.length >= 9, `found ${documented.join(", ")}`);
    assert.deepEqual([...documented].sort(), Object.keys(defaults).sort());
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
    const properties = manifest.contributes.configuration.properties;
    for (const key of documented) {
      assert.ok(properties[`opgen.${key}`], `opgen.${key} is not a contributed setting`);
      assert.deepEqual(properties[`opgen.${key}`].default, defaults[key], `default of opgen.${key}`);
    }
  });
  it("contributes only server options and the client's own keys", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
    for (const key of Object.keys(manifest.contributes.configuration.properties)) {
      const first = key.replace(/^opgen\./, "").split(".")[0];
      assert.ok(first in SERVER_SETTINGS || CLIENT_SETTINGS.includes(first), key);
    }
  });
  it("sends the server only its own keys", () => {
    const section = {
      debounceMs: 10,
      tagsPath: null,
      outputDir: "out",
      server: { path: "/x" },
      files: ["**/a.yaml"],
      trace: { server: "off" },
    };
    assert.deepEqual(serverSettings(section), { debounceMs: 10, tagsPath: null, outputDir: "out" });
    assert.deepEqual(serverSettings(undefined), {});
    assert.deepEqual(serverSettings(null), {});
  });
  it("restarts the server for server.*, files and trace changes only", () => {
    assert.equal(affectsServerStart((s) => s === "opgen.server"), true);
    assert.equal(affectsServerStart((s) => s === "opgen.files"), true);
    assert.equal(affectsServerStart((s) => s === "opgen.debounceMs"), false);
    assert.equal(affectsServerStart((s) => s === "opgen.outputDir"), true); // its user value is an init option
  });
});

describe("userSettings", () => {
  it("passes the user-level outputDir, and nothing a workspace set", () => {
    const global: Record<string, unknown> = { outputDir: "/home/me/gen", debounceMs: 5 };
    assert.deepEqual(userSettings((key) => global[key]), { outputDir: "/home/me/gen" });
  });
  it("leaves out unset, blank and non-string values", () => {
    assert.deepEqual(userSettings(() => undefined), {});
    assert.deepEqual(userSettings(() => " "), {});
    assert.deepEqual(userSettings(() => 7), {});
  });
});

describe("the op at the cursor", () => {
  it("reads name.overload from a func: line", () => {
    assert.equal(opOfFuncLine("- func: add.Tensor(Tensor self, Tensor other) -> Tensor"), "add.Tensor");
    assert.equal(opOfFuncLine("  func: relu(Tensor self) -> Tensor"), "relu");
    assert.equal(opOfFuncLine("  variants: function"), undefined);
    assert.equal(opOfFuncLine("# - func: add(Tensor self) -> Tensor"), undefined);
  });
  it("finds the entry's func: line from any line of the entry", () => {
    const lines = [
      "- func: scale(Tensor self) -> Tensor",
      "  variants: function",
      "",
      "- dispatch:",
      "    CPU: x",
      "  func: tile_rows(Tensor self) -> Tensor",
      "- variants: method",
    ];
    assert.equal(opAtCursor(lines, 0), "scale");
    assert.equal(opAtCursor(lines, 1), "scale");
    assert.equal(opAtCursor(lines, 4), "tile_rows");
    assert.equal(opAtCursor(lines, 3), "tile_rows");
    assert.equal(opAtCursor(lines, 6), undefined);
  });
  it("finds every op of the samples' native_functions.yaml", () => {
    const lines = fs.readFileSync(path.join(REPO, "samples", "native_functions.yaml"), "utf8").split("\n");
    const funcLines = lines.map((l, i) => [l, i] as const).filter(([l]) => /^- func:/.test(l));
    assert.ok(funcLines.length >= 30);
    for (const [line, i] of funcLines) {
      assert.equal(opAtCursor(lines, i + 1), opOfFuncLine(line), `line ${i + 2}`);
    }
  });
});
