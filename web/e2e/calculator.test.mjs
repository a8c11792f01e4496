// Browser tests of the calculator in real headless Chromium against `gpuctl web`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { serve, launch, openPage, ARTIFACTS } from "./harness.mjs";

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.stop(); });

test("page renders", async () => {
  const page = await openPage(browser);
  await page.goto(server.url);
  await page.getByText("gpuctl").first().waitFor();
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, "calculator.png"), fullPage: true });
  assert.deepEqual(page.errors, []);
});
