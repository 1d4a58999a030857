// Shared by the code-server scripts: their environment, Debian's chromium through playwright-core (the package
// folder in $PLAYWRIGHT_CORE), and the command palette.
import { createRequire } from "node:module";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** An environment variable the script cannot run without. */
export const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

/** A headless chromium with a fresh profile: { context, page, close() }. */
export async function launch() {
  const { chromium } = createRequire(import.meta.url)(env("PLAYWRIGHT_CORE"));
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "opgen-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1500, height: 1000 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(60000);
  const close = async () => {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return { context, page, close };
}

/** Runs a command of the command palette (F1) by its title. */
export async function palette(page, command) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(`>${command}`);
  const row = page.locator(".quick-input-list .monaco-list-row").filter({ hasText: command }).first();
  await row.waitFor();
  await sleep(300);
  await row.click();
  await input.waitFor({ state: "hidden" });
}
