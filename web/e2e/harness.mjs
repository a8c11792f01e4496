// Shared by the browser tests and the budget bench: serve web/dist with the real `gpuctl web`, and
// drive Debian's Chromium through playwright-core (no browser download: the binary is /usr/bin/chromium).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { chromium } from "playwright-core";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const DIST = path.join(ROOT, "web/dist");
export const ARTIFACTS = path.join(ROOT, "web/e2e/artifacts");
export const GPUCTL = process.env.GPUCTL_BIN ?? path.join(ROOT, "target/debug/gpuctl");
const CHROMIUM = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";

/** Starts `gpuctl web --addr 127.0.0.1:0` and resolves to { url, stop } once it prints its address. */
export async function serve() {
  if (!existsSync(GPUCTL)) throw new Error(`no gpuctl binary at ${GPUCTL}: run cargo build -p gpuctl (or set GPUCTL_BIN)`);
  if (!existsSync(path.join(DIST, "index.html"))) throw new Error(`no ${DIST}/index.html: run scripts/build-web`);
  const child = spawn(GPUCTL, ["web", "--dir", DIST, "--addr", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const url = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`gpuctl web printed no address in 10 s: ${out}${stderr}`)), 10_000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/ at (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`gpuctl web exited ${code}: ${stderr}`)); });
  });
  return { url, stop: () => child.kill("SIGINT") };
}

/** Headless Chromium with the flags of issue 6 (no sandbox as root, nothing phoning home). */
export async function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--disable-sync", "--no-first-run"],
  });
}

/** A fresh page that fails the test on any console error or uncaught exception in the page. */
export async function openPage(browser, { locale = "en-US" } = {}) {
  const context = await browser.newContext({ locale, viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => { if (m.type() === "error") page.errors.push(`console: ${m.text()}`); });
  return page;
}
