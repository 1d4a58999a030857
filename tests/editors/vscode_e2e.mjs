// Drives code-server (VS Code 1.100 in the browser) with Debian's chromium through playwright-core:
// opens the workspace, reads the Problems panel, hovers a func: line, runs "opgen: Generate".
// Writes what it saw as JSON to $OUT (tests/editors/test_vscode.py asserts on it).
//
// Env: CODE_SERVER_URL, WORKSPACE, PLAYWRIGHT_CORE (the package folder), CHROMIUM, SCREENSHOT_DIR,
//      HOVER_LINE (1-based line of a func: line in native_functions.yaml), HOVER_COLUMN, OUT.
import * as fs from "node:fs";
import * as path from "node:path";
import { env, launch, palette as paletteOf, sleep } from "./vscode_browser.mjs";

const url = env("CODE_SERVER_URL");
const workspace = env("WORKSPACE");
const shots = env("SCREENSHOT_DIR");
const out = env("OUT");
const result = { steps: [], problems: [], statusBar: "", hover: "", linkText: "", shownTitle: "", shownText: "", generateMessage: "", errors: [] };
const step = (name) => {
  result.steps.push({ name, at: Date.now() });
  console.log(`[vscode_e2e] ${name}`);
};

const { page, close } = await launch();
const palette = (command) => paletteOf(page, command);

async function openFile(query) {
  const name = query.split("/").pop();
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(query);
  // The root file, or the one in the folder the query names (rows show the folder after the name).
  const folder = query.includes("/") ? query.split("/").slice(0, -1).join("/") : null;
  let row = page.locator(".quick-input-list .monaco-list-row", { hasText: name });
  row = folder ? row.filter({ hasText: folder }) : row.filter({ hasNotText: "clean" });
  await row.first().waitFor();
  await sleep(300);
  await row.first().click();
  await page.locator(".tabs-container .tab.active", { hasText: name }).waitFor();
}

async function goTo(line, column) {
  await page.locator(".monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+G");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(`:${line}:${column}`);
  await sleep(200);
  await page.keyboard.press("Enter");
}

try {
  step("open code-server");
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench .part.statusbar").waitFor();
  await page.locator(".explorer-folders-view, .explorer-viewlet").first().waitFor().catch(() => undefined);

  step("open tags.yaml and native_functions.yaml");
  await openFile("tags.yaml");
  await openFile("native_functions.yaml");

  step("wait for the server (status bar)");
  const status = page.locator(".part.statusbar .statusbar-item", { hasText: "opgen" }).first();
  await status.waitFor();
  const deadline = Date.now() + 90000;
  while (Date.now() < deadline) {
    result.statusBar = (await status.innerText()).trim();
    // Running, the release of native_functions.yaml told (opgen/release): "opgen torch 2.13.0 (default)".
    if (/torch \d|missing|failed/.test(result.statusBar)) break;
    await sleep(500);
  }

  step("Problems panel");
  await palette("View: Focus Problems (Errors, Warnings, Infos)");
  await palette("View: Toggle Maximized Panel");
  const rows = page.locator(".markers-panel .monaco-list-row");
  await rows.first().waitFor();
  // Rows are virtualised: wait until the count settles, then read every row.
  let seen = -1;
  for (let i = 0; i < 60; i++) {
    const texts = await rows.allInnerTexts();
    const count = texts.filter((t) => /OPG\d{3}/.test(t)).length;
    if (count === seen && count >= 12) break;
    seen = count;
    await sleep(1000);
  }
  result.problems = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
  await page.screenshot({ path: path.join(shots, "vscode-problems.png") });
  await palette("View: Toggle Maximized Panel");
  await palette("View: Hide Panel");

  step("hover a func: line");
  await openFile("native_functions.yaml");
  const hover = page.locator(".monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents").first();
  const wanted = /at::Tensor scale\(/;
  // The hover can be hidden again by a late re-render (code lenses, semantic tokens): try again then.
  for (let attempt = 0; attempt < 5; attempt++) {
    await goTo(env("HOVER_LINE"), env("HOVER_COLUMN"));
    await sleep(500);
    await palette("Show or Focus Hover");
    let text = "";
    for (let i = 0; i < 40 && !wanted.test(text); i++) {
      text = await hover.innerText({ timeout: 1000 }).catch(() => "");
      await sleep(250);
    }
    if (!wanted.test(text)) continue;
    result.hover = text;
    // Scroll the hover (mouse wheel over it) to the C++ declaration for the screenshot.
    const box = await hover.boundingBox();
    if (!box) continue;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const cpp = hover.getByText(wanted).first();
    for (let i = 0; i < 10; i++) {
      const line = await cpp.boundingBox().catch(() => null);
      if (line && line.y >= box.y && line.y + line.height <= box.y + box.height * 0.5) break;
      await page.mouse.wheel(0, 60);
      await sleep(200);
    }
    await sleep(500);
    await page.screenshot({ path: path.join(shots, "vscode-hover.png") });
    if (await hover.isVisible()) break;
    result.hover = "";
  }

  step("the hover's link: Show generated code");
  const link = hover.getByRole("link", { name: "opgen: Show generated code" }).first();
  if (await link.isVisible().catch(() => false)) {
    await link.click();
    const linkTab = page.locator(".tabs-container .tab.active").filter({ hasNotText: "native_functions.yaml" });
    await linkTab.waitFor({ timeout: 30000 }).catch(() => undefined);
    await sleep(1000);
    result.linkText = (await page.locator(".editor-group-container.active .monaco-editor .view-lines").first()
      .innerText().catch(() => "")).replace(/\u00a0/g, " ");
    await openFile("native_functions.yaml");
  }
  await page.keyboard.press("Escape");

  step("opgen: Show generated code");
  await goTo(env("HOVER_LINE"), env("HOVER_COLUMN"));
  await palette("opgen: Show generated code");
  const shownTab = page.locator(".tabs-container .tab.active").filter({ hasNotText: "native_functions.yaml" });
  await shownTab.waitFor({ timeout: 30000 });
  result.shownTitle = (await shownTab.innerText()).trim();
  await sleep(1000);
  result.shownText = (await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().innerText())
    .replace(/\u00a0/g, " ");

  step("opgen: Generate");
  await openFile(env("GENERATE_FILE")); // a clean native_functions.yaml with templates of its own: generated from
  result.generateMessage = "";
  await palette("opgen: Generate");
  const toast = page.locator(".notifications-toasts .notification-toast", { hasText: /opgen:/ }).first();
  await toast.waitFor({ timeout: 300000 });
  result.generateMessage = (await toast.innerText()).replace(/\s+/g, " ").trim();
} catch (error) {
  result.errors.push(String(error && error.stack ? error.stack : error));
  await page.screenshot({ path: path.join(shots, "vscode-failure.png") }).catch(() => undefined);
} finally {
  fs.writeFileSync(out, JSON.stringify(result, null, 2));
  await close();
}
