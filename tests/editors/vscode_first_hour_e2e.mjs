// Drives code-server (VS Code in the browser) with Debian's chromium through playwright-core: what a newcomer
// meets first. A lens on a narrow window (an op with many kernels: the title must stay inside the editor, the
// full list in its tooltip), then "opgen: Generate" on the samples' native_functions.yaml after an edit (it saves
// first and says so, then fails on the deliberate mistakes: an error notification with "Show output", which opens
// the whole text). Writes what it saw as JSON to $OUT (tests/editors/test_vscode_first_hour.py asserts on it).
//
// Env: CODE_SERVER_URL, WORKSPACE, PLAYWRIGHT_CORE (the package folder), CHROMIUM, SCREENSHOT_DIR, OUT,
//      WIDE_FILE (the workspace-relative yaml with the wide op), WIDE_OP (its name).
import * as fs from "node:fs";
import * as path from "node:path";
import { env, launch, palette as paletteOf, sleep } from "./vscode_browser.mjs";

const shots = env("SCREENSHOT_DIR");
const out = env("OUT");
const result = { lenses: [], editorRight: 0, notification: "", notificationIsError: false, actions: [], output: "", errors: [] };

const { page, close } = await launch();
const palette = (command) => paletteOf(page, command);

async function openFile(query) {
  const name = query.split("/").pop();
  const folder = query.includes("/") ? query.split("/").slice(0, -1).join("/") : null;
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(query);
  let row = page.locator(".quick-input-list .monaco-list-row", { hasText: name });
  row = folder ? row.filter({ hasText: folder }) : row.filter({ hasNotText: "wide" });
  await row.first().waitFor();
  await sleep(300);
  await row.first().click();
  await page.locator(".tabs-container .tab.active", { hasText: name }).waitFor();
}

try {
  await page.setViewportSize({ width: 760, height: 700 });
  await page.goto(`${env("CODE_SERVER_URL")}/?folder=${encodeURIComponent(env("WORKSPACE"))}`);
  await page.locator(".monaco-workbench .part.statusbar").waitFor();
  await palette("View: Close Primary Side Bar").catch(() => undefined);

  console.log("[first_hour] a lens on a narrow window");
  await openFile(env("WIDE_FILE"));
  const lenses = page.locator(".editor-group-container.active .monaco-editor .codelens-decoration");
  for (let i = 0; i < 90 && !(await lenses.allInnerTexts()).some((t) => /kernels/.test(t)); i++) await sleep(1000);
  await sleep(1000);
  const editor = await page.locator(".editor-group-container.active .monaco-editor").first().boundingBox();
  result.editorRight = editor ? editor.x + editor.width : 0;
  // A lens with a command is a link, one without (the kernels) a span; both carry the tooltip as their title.
  const parts = ".editor-group-container.active .monaco-editor .codelens-decoration > a, " +
    ".editor-group-container.active .monaco-editor .codelens-decoration > span";
  for (const link of await page.locator(parts).all()) {
    const box = await link.boundingBox();
    result.lenses.push({ text: (await link.innerText()).trim(), title: (await link.getAttribute("title")) || "",
                         right: box ? box.x + box.width : 0 });
  }
  await page.screenshot({ path: path.join(shots, "vscode-lens-narrow.png") });

  console.log("[first_hour] Generate after an edit: saved, then an error");
  await page.setViewportSize({ width: 1200, height: 800 });
  await openFile("native_functions.yaml");
  // (on a loaded machine the editor may not take the keys yet: click and type again until its tab is dirty)
  const dirty = page.locator(".tabs-container .tab.active.dirty");
  for (let i = 0; i < 5 && !(await dirty.count()); i++) {
    await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.type("# edited\n");
    await dirty.waitFor({ timeout: 10000 }).catch(() => undefined);
  }
  if (!(await dirty.count())) result.errors.push("typing into native_functions.yaml did not make its tab dirty");
  await palette("opgen: Generate");
  const toast = page.locator(".notifications-toasts .notification-toast", { hasText: /opgen:/ }).first();
  await toast.waitFor({ timeout: 300000 });
  await sleep(500);
  result.notification = (await toast.innerText()).replace(/\s+/g, " ").trim();
  result.notificationIsError = (await toast.locator(".codicon-error").count()) > 0;
  result.actions = (await toast.locator(".monaco-button").allInnerTexts()).map((t) => t.trim());
  await page.screenshot({ path: path.join(shots, "vscode-generate-error.png") });
  const show = toast.locator(".monaco-button", { hasText: "Show output" }).first();
  if (await show.isVisible().catch(() => false)) {
    await show.click();
    const lines = page.locator(".part.panel .monaco-editor .view-lines").first();
    for (let i = 0; i < 30 && !/Generate failed/.test(result.output); i++) {
      result.output = (await lines.innerText().catch(() => "")).replace(/\u00a0/g, " ");
      await sleep(500);
    }
    await page.screenshot({ path: path.join(shots, "vscode-generate-output.png") });
  }
} catch (error) {
  result.errors.push(String(error && error.stack ? error.stack : error));
  await page.screenshot({ path: path.join(shots, "vscode-first-hour-failure.png") }).catch(() => undefined);
} finally {
  fs.writeFileSync(out, JSON.stringify(result, null, 2));
  await close();
}
