import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { stderrLevels } from "../src/log";

describe("stderrLevels", () => {
  it("keeps the level each record was logged at, and gives a traceback its record's", () => {
    const levelOf = stderrLevels();
    const lines = [
      "2026-12-01 09:20:01,123 DEBUG pygls.protocol.json_rpc: Cancel notification for unknown message id \"7\"",
      "2026-12-01 09:20:01,200 INFO opgen_lsp.lsp.server: indexed 3 files",
      "2026-12-01 09:20:02,001 WARNING opgen_lsp.lsp.server: no tags.yaml beside",
      "2026-12-01 09:20:03,004 ERROR opgen_lsp.lsp.server: hover failed",
      "Traceback (most recent call last):",
      "  File \"x.py\", line 1, in <module>",
      "2026-12-01 09:20:04,000 INFO opgen_lsp.lsp.server: recovered",
    ];
    assert.deepEqual(lines.map(levelOf), ["debug", "info", "warn", "error", "error", "error", "info"]);
  });

  it("treats text before any record (an interpreter's own error) as an error", () => {
    assert.equal(stderrLevels()("/usr/bin/python3: No module named opgen_lsp"), "error");
  });
});
