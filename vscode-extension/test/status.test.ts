import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { generateOutcome, generateSummary, parseTorchgenVersion, shortSource, statusView } from "../src/status";

describe("parseTorchgenVersion", () => {
  it("reads the version from opgen-lsp --help and similar texts", () => {
    assert.equal(parseTorchgenVersion("Language server for PyTorch operator yaml (native_functions.yaml, tags.yaml),\nmatching torchgen 2.13.0."), "2.13.0");
    assert.equal(parseTorchgenVersion("0.1.0 (torchgen 2.14.1)"), "2.14.1");
    assert.equal(parseTorchgenVersion("torchgen=2.13"), "2.13");
    assert.equal(parseTorchgenVersion("opgen-lsp 0.1.0"), undefined);
    assert.equal(parseTorchgenVersion(undefined), undefined);
  });
});

describe("statusView", () => {
  it("shows the torchgen version when running", () => {
    const view = statusView("running", "2.13.0", "PATH (/usr/bin/python3)");
    assert.equal(view.text, "$(check) opgen torchgen 2.13.0");
    assert.match(view.tooltip, /matches torchgen 2\.13\.0/);
    assert.match(view.tooltip, /PATH/);
    assert.equal(view.error, false);
  });
  it("shows the state otherwise, as an error when missing or failed", () => {
    assert.equal(statusView("starting").text, "$(sync~spin) opgen: starting");
    assert.equal(statusView("missing").error, true);
    assert.equal(statusView("failed").error, true);
    assert.equal(statusView("stopped").error, false);
  });
});

describe("generateSummary", () => {
  it("prefers the server's summary", () => {
    assert.equal(generateSummary({ summary: "12 files written" }), "opgen: 12 files written");
  });
  it("counts lists or numbers otherwise", () => {
    assert.equal(generateSummary({ outputDir: "/o", written: ["a", "b"], unchanged: 3, errors: [] }), "opgen: 2 written, 3 unchanged in /o");
    assert.equal(generateSummary({ written: [], unchanged: [], errors: ["x"], cancelled: true }), "opgen: 0 written, 0 unchanged, 1 errors in the output folder (cancelled)");
    assert.equal(generateSummary(null), "opgen: Generate finished");
  });
});

describe("statusView with a release", () => {
  const release = {
    uri: "file:///src/pytorch/aten/src/ATen/native/native_functions.yaml", version: "2.16.0a0", profile: "2.15.0",
    source: "version.txt of /src/pytorch", fit: "newer", label: "torch 2.16.0a0 (version.txt of /src/pytorch)",
    note: "torch 2.16.0a0 (version.txt of /src/pytorch) is newer than the releases opgen knows (2.6 to 2.15): checked and generated as torch 2.15",
  };
  it("shows the release in view and where it came from", () => {
    const view = statusView("running", "2.13.0", "PATH (/usr/bin/python3)", release);
    assert.equal(view.text, "$(check) opgen torch 2.16.0a0 (version.txt)");
    assert.match(view.tooltip, /native_functions\.yaml checked as torch 2\.16\.0a0 \(version\.txt of \/src\/pytorch\)/);
    assert.match(view.tooltip, /checked and generated as torch 2\.15/);
    assert.equal(view.error, false);
  });
  it("names a packaged torch, a setting or the default briefly", () => {
    assert.equal(shortSource("/venv/lib/python3.11/site-packages/torch/version.py"), "torch/version.py");
    assert.equal(shortSource("opgen.torchVersion"), "opgen.torchVersion");
    assert.equal(shortSource("default"), "default");
    assert.equal(statusView("starting", "2.13.0", undefined, release).text, "$(sync~spin) opgen: starting");
  });
});

describe("generateOutcome", () => {
  it("is an error with every message in full when the server reports errors", () => {
    const long = "no templates folder at /w/templates, and torch is not installed to provide one";
    const outcome = generateOutcome({ summary: `0 file(s) written, 0 unchanged, 1 error(s): ${long}`, errors: [long] });
    assert.equal(outcome.failed, true);
    assert.equal(outcome.message, `opgen: Generate failed: 0 file(s) written, 0 unchanged, 1 error(s): ${long}`);
    assert.deepEqual(outcome.details, [long]);
    assert.equal(generateOutcome({ summary: "failed" }).failed, true);
  });
  it("is information when nothing failed, and says that it saved the document first", () => {
    assert.deepEqual(generateOutcome({ summary: "3 file(s) written", errors: [] }),
      { failed: false, message: "opgen: 3 file(s) written", details: [] });
    assert.equal(generateOutcome({ summary: "3 file(s) written", errors: [] }, "native_functions.yaml").message,
      "opgen: saved native_functions.yaml first (Generate reads the files on disk); 3 file(s) written");
    assert.equal(generateOutcome({ summary: "1 error(s): x", errors: ["x"] }, "native_functions.yaml").message,
      "opgen: Generate failed: saved native_functions.yaml first (Generate reads the files on disk); 1 error(s): x");
  });
});
