// Drives code-server (VS Code in the browser) with Debian's chromium through playwright-core, on a
// PyTorch-shaped tree: opens tools/autograd/derivatives.yaml, reads the Problems panel, hovers a name: line.
// Writes what it saw as JSON to $OUT (tests/editors/test_vscode_derivatives.py asserts on it).
//
// Env: CODE_SERVER_URL, WORKSPACE, PLAYWRIGHT_CORE (the package folder), CHROMIUM, SCREENSHOT_DIR, OUT.
import * as fs from "node:fs";
import * as path from "node:path";
import { env, launch, palette as paletteOf, sleep } from "./vscode_browser.mjs";

const shots = env("SCREENSHOT_DIR");
const out = env("OUT");
const result = { problems: [], hover: "", errors: [] };

const { page, close } = await launch();
const palette = (command) => paletteOf(page, command);

try {
  await page.goto(`${env("CODE_SERVER_URL")}/?folder=${encodeURIComponent(env("WORKSPACE"))}`);
  await page.locator(".monaco-workbench .part.statusbar").waitFor();
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill("derivatives.yaml");
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: "derivatives.yaml" }).first();
  await row.waitFor();
  await sleep(300);
  await row.click();
  await page.locator(".tabs-container .tab.active", { hasText: "derivatives.yaml" }).waitFor();

  await palette("View: Focus Problems (Errors, Warnings, Infos)");
  const rows = page.locator(".markers-panel .monaco-list-row");
  for (let i = 0; i < 90 && !(await rows.allInnerTexts()).some((t) => /OPG711/.test(t)); i++) await sleep(1000);
  result.problems = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
  await palette("View: Hide Panel");

  const hover = page.locator(".monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents").first();
  const wanted = /struct TORCH_API MulBackward0/;
  for (let attempt = 0; attempt < 5 && !result.hover; attempt++) {
    await page.locator(".monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+G");
    await page.locator(".quick-input-widget input").fill(":1:12");
    await sleep(200);
    await page.keyboard.press("Enter");
    await sleep(500);
    await palette("Show or Focus Hover");
    for (let i = 0; i < 40; i++) {
      const text = await hover.innerText({ timeout: 1000 }).catch(() => "");
      if (wanted.test(text)) {
        result.hover = text;
        break;
      }
      await sleep(250);
    }
  }
  await page.screenshot({ path: path.join(shots, "vscode-derivatives-hover.png") });
} catch (error) {
  result.errors.push(String(error && error.stack ? error.stack : error));
  await page.screenshot({ path: path.join(shots, "vscode-derivatives-failure.png") }).catch(() => undefined);
} finally {
  fs.writeFileSync(out, JSON.stringify(result, null, 2));
  await close();
}
