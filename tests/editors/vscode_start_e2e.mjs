// Drives code-server until the server runs: opens the workspace and native_functions.yaml, waits for the
// status bar's "opgen torch X.Y.Z (source)". With SELECT_INTERPRETER (an environment's folder) it then runs
// "Python: Select Interpreter", picks that one, and waits for the extension's output channel log (under
// USER_DATA/logs) to show a "Starting" line containing EXPECT_RESTART, and for the status bar to say the
// server runs again. Writes what it saw as JSON to $OUT (tests/editors/test_vscode_python.py asserts on it).
//
// Env: CODE_SERVER_URL, WORKSPACE, PLAYWRIGHT_CORE, CHROMIUM, SCREENSHOT_DIR, OUT, USER_DATA;
//      optional SELECT_INTERPRETER, EXPECT_RESTART.
import * as fs from "node:fs";
import * as path from "node:path";
import { env, launch, sleep } from "./vscode_browser.mjs";

const result = { statusBar: "", statusBarAfterSwitch: "", errors: [] };
const { page, close } = await launch();
const input = page.locator(".quick-input-widget input");

/** Types into the quick input (the palette, a quick pick) and picks the first row that has `text`. */
async function pick(typed, text) {
  await input.waitFor({ state: "visible" });
  await input.fill(typed);
  const row = page.locator(".quick-input-list .monaco-list-row").filter({ hasText: text }).first();
  await row.waitFor();
  await sleep(300);
  await row.click();
}

async function runningStatus() {
  const status = page.locator(".part.statusbar .statusbar-item", { hasText: "opgen" }).first();
  await status.waitFor();
  let text = "";
  for (const deadline = Date.now() + 90000; Date.now() < deadline; await sleep(500)) {
    text = (await status.innerText()).trim();
    if (/torch \d|missing|failed/.test(text)) break;  // "opgen torch 2.13.0 (default)" once running
  }
  return text;
}

function startingLines() {
  const logs = path.join(env("USER_DATA"), "logs");
  const files = fs.readdirSync(logs, { recursive: true }).filter((f) => /opgen-lsp.*\.log$/.test(String(f)));
  return files.flatMap((f) => fs.readFileSync(path.join(logs, String(f)), "utf8").split("\n")).filter((l) => l.includes("Starting "));
}

try {
  await page.goto(`${env("CODE_SERVER_URL")}/?folder=${encodeURIComponent(env("WORKSPACE"))}`);
  await page.locator(".monaco-workbench .part.statusbar").waitFor();
  await page.keyboard.press("Control+P");
  await pick("native_functions.yaml", "native_functions.yaml");
  result.statusBar = await runningStatus();
  if (process.env.SELECT_INTERPRETER) {
    await page.keyboard.press("F1");
    await pick(">Python: Select Interpreter", "Python: Select Interpreter");
    await sleep(500);
    await pick(env("SELECT_INTERPRETER"), env("SELECT_INTERPRETER"));
    const wanted = env("EXPECT_RESTART");
    for (const deadline = Date.now() + 90000; Date.now() < deadline && !startingLines().some((l) => l.includes(wanted));) {
      await sleep(500);
    }
    await sleep(1000);
    result.statusBarAfterSwitch = await runningStatus();
  }
  await page.screenshot({ path: path.join(env("SCREENSHOT_DIR"), "vscode-started.png") });
} catch (error) {
  result.errors.push(String(error && error.stack ? error.stack : error));
  await page.screenshot({ path: path.join(env("SCREENSHOT_DIR"), "vscode-failure.png") }).catch(() => undefined);
} finally {
  fs.writeFileSync(env("OUT"), JSON.stringify(result, null, 2));
  await close();
}
