// The injection grammar, tokenized by vscode-textmate + oniguruma (the engine VS Code uses).
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { before, describe, it } from "node:test";
import * as oniguruma from "vscode-oniguruma";
import * as textmate from "vscode-textmate";

const ROOT = path.resolve(__dirname, "..", "..");
const INJECTION = "opgen.func-schema.injection";
// A stand-in for VS Code's YAML grammar: every line a plain scalar.
const YAML_STUB = {
  scopeName: "source.yaml",
  patterns: [
    { match: "#.*$", name: "comment.line.number-sign.yaml" },
    { match: "\\S.*$", name: "string.unquoted.plain.out.yaml" },
  ],
};

let grammar: textmate.IGrammar;

before(async () => {
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope: string) => {
      if (scope === "source.yaml") {
        return textmate.parseRawGrammar(JSON.stringify(YAML_STUB), "yaml.json");
      }
      if (scope === INJECTION) {
        const file = path.join(ROOT, "syntaxes", "opgen-schema.injection.tmLanguage.json");
        return textmate.parseRawGrammar(fs.readFileSync(file, "utf8"), file);
      }
      return null;
    },
    getInjections: (scope: string) => (scope === "source.yaml" ? [INJECTION] : undefined),
  });
  const loaded = await registry.loadGrammar("source.yaml");
  assert.ok(loaded);
  grammar = loaded;
});

/** [text, innermost scope] of every token of one line. */
function tokens(line: string): [string, string][] {
  const result = grammar.tokenizeLine(line, textmate.INITIAL);
  return result.tokens.map((t) => [line.slice(t.startIndex, t.endIndex), t.scopes[t.scopes.length - 1]]);
}

function scopeOf(line: string, text: string): string | undefined {
  return tokens(line).find(([t]) => t.trim() === text)?.[1];
}

describe("func: schema injection grammar", () => {
  const add = "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";

  it("scopes the op name and the overload", () => {
    assert.equal(scopeOf(add, "add"), "entity.name.function.operator.opgen");
    assert.equal(scopeOf(add, "Tensor"), "entity.name.function.overload.opgen");
    assert.equal(scopeOf(add, "func"), "entity.name.tag.yaml");
  });

  it("scopes types, argument names, the keyword-only marker, defaults and the arrow", () => {
    const all = tokens(add);
    assert.ok(all.some(([t, s]) => t === "Tensor" && s === "storage.type.opgen"));
    assert.equal(scopeOf(add, "self"), "variable.parameter.opgen");
    assert.equal(scopeOf(add, "alpha"), "variable.parameter.opgen");
    assert.equal(scopeOf(add, "*"), "keyword.operator.keyword-only.opgen");
    assert.equal(scopeOf(add, "1"), "constant.other.default.opgen");
    assert.equal(scopeOf(add, "->"), "keyword.operator.arrow.opgen");
  });

  it("scopes alias annotations, optional and list types and named returns", () => {
    const line = "- func: minmax.out(Tensor self, int[1]? dim=None, *, Tensor(a!) low, Tensor(b!) high) -> (Tensor(a!) low, Tensor(b!) high)";
    assert.equal(scopeOf(line, "(a!)"), "storage.modifier.alias-annotation.opgen");
    assert.equal(scopeOf(line, "int[1]?"), "storage.type.opgen");
    assert.equal(scopeOf(line, "None"), "constant.other.default.opgen");
    assert.equal(scopeOf(line, "high"), "variable.parameter.opgen");
    const view = "- func: unfold_all(Tensor(a -> *) self) -> Tensor(a)[]";
    assert.equal(scopeOf(view, "(a -> *)"), "storage.modifier.alias-annotation.opgen");
  });

  it("works on an indented func: without the list dash", () => {
    assert.equal(scopeOf("  func: relu(Tensor self) -> Tensor", "relu"), "entity.name.function.operator.opgen");
  });

  it("leaves other keys, comments and plain scalars to YAML", () => {
    assert.deepEqual(tokens("  variants: function, method").map(([, s]) => s), ["source.yaml", "string.unquoted.plain.out.yaml"]);
    assert.equal(tokens("# func: not(Tensor self) -> Tensor")[0][1], "comment.line.number-sign.yaml");
    assert.equal(scopeOf("  structured_delegate: func: x", "x"), undefined);
  });
});
