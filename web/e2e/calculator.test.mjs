// Browser tests of the calculator: real headless Chromium (Debian's) driving the page served by the
// real `gpuctl web`. Each test opens a fresh browser context, so nothing leaks between them.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { serve, launch, openPage, ARTIFACTS, GPUCTL } from "./harness.mjs";

let server, browser;
before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await serve();
  browser = await launch();
});
after(async () => { await browser?.close(); server?.stop(); });

/** `gpuctl plan --sim FILE` (the exported image is a name, resolved through a cloud's image API: the
 * in-process local cloud's here), with a home whose ~/.ssh holds the public keys the export names:
 * throws (failing the test) unless it exits 0; returns what it printed. */
const plan = (file) => {
  const home = mkdtempSync(path.join(tmpdir(), "gpuctl-web-home-"));
  mkdirSync(path.join(home, ".ssh"));
  // Public halves only, of keys whose private halves were thrown away.
  writeFileSync(path.join(home, ".ssh/id_ed25519.pub"), "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO2a1L/E68n+5sZjP5Zzs6Dz+RnIt9VGaEXKK/EgZZKW me@laptop\n");
  writeFileSync(path.join(home, ".ssh/id_rsa.pub"), "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDyUSzFRX6BlPCXVwGlPJ2aq4JIrBHpWO6v/+qdK5Mt4W4BqBF/GJjht1oz0d2eLH/oAonZsIA9xLlS8mDO167cWL0xevJP/LlhUlNNvf4SfPOa0Ml8vK3v9LT26xDHlvmbVx3fCuKCyr6dIN5rrK0AEn0sa6GP58rwYHIZV9DDwH2ZOTVBgu2IV8tcHN7MGz7YP8NKJNPYFG4Q07aarKCUU89mo/X5cZv+bwXMXqyZhOVeqloJqLwbKMInrVIqIKYwc5bo4y52RpA89mM1IRC6XyEb79S9wB5ogirgLvT662REkhOVn0dZnTLEJepDAga83XLbjtgYkh+ymt51HKaV me@laptop\n");
  return execFileSync(GPUCTL, ["plan", "--sim", file], { encoding: "utf8", env: { ...process.env, HOME: home, NO_COLOR: "1" } });
};

const rowKeys = (page) => page.getByTestId("offer-row").evaluateAll((rows) => rows.map((r) => r.dataset.key));
const firstRowText = (page) => page.getByTestId("offer-row").first().innerText();
async function ready(page, query = "") {
  await page.goto(server.url + query);
  await page.getByTestId("offer-row").first().waitFor();
}
/** Waits until `probe()` returns something other than `before` (the page updates as you type). */
async function changed(probe, before, what) {
  for (let i = 0; i < 100; i++) {
    const now = await probe();
    if (JSON.stringify(now) !== JSON.stringify(before)) return now;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`${what} did not change`);
}

test("typing inputs re-ranks the offers", async () => {
  const page = await openPage(browser);
  await ready(page);
  const count0 = Number(await page.getByTestId("offer-count").innerText());
  const top0 = await firstRowText(page);
  assert.ok(count0 > 3, `default question has offers (${count0})`);

  // The table shows the first rows (and down to the chosen one) until "show all"; the chart has all.
  const shown = await page.getByTestId("offer-row").count();
  assert.ok(shown < count0, `${shown} of ${count0} rows shown`);
  assert.equal(await page.locator('[data-testid="chart-cost-time"] circle').count(), count0);
  await page.getByTestId("show-all").click();
  await changed(() => page.getByTestId("offer-row").count(), shown, "the number of rows after show all");
  assert.equal(await page.getByTestId("offer-row").count(), count0);
  await page.getByTestId("show-all").click();
  await changed(() => page.getByTestId("offer-row").count(), count0, "the number of rows after show fewer");

  // 100× the tokens: the same offers cost more and take longer, so the first row's text changes.
  await page.getByTestId("tokens").fill("5B");
  const top1 = await changed(() => firstRowText(page), top0, "the top row after tokens=5B");
  assert.notEqual(top1, top0);

  // A full fine-tune needs ~16 bytes/param: far fewer offers fit than for LoRA.
  await page.getByTestId("method").selectOption("full");
  const count2 = Number(await changed(() => page.getByTestId("offer-count").innerText(), String(count0), "the offer count"));
  assert.ok(count2 < count0, `full fine-tune fits fewer offers (${count2} < ${count0})`);
  assert.match(await page.locator("details.infeasible summary").innerText(), /\(\d+\)/);

  // Bad input is named next to its field and loses nothing else.
  await page.getByTestId("tokens").fill("lots");
  await page.getByTestId("error-tokens").waitFor();
  assert.match(await page.getByTestId("error-tokens").innerText(), /not a token count/);
  assert.equal(await page.getByTestId("method").inputValue(), "full");
  await page.getByTestId("tokens").fill("50M");
  await page.getByTestId("offer-row").first().waitFor();

  // A budget below every offer leaves none, and says so.
  await page.getByTestId("method").selectOption("lora");
  await page.getByTestId("budget").fill("1");
  await page.getByText(/No offer fits/).waitFor();
  assert.equal(await page.getByTestId("offer-row").count(), 0);
  assert.deepEqual(page.errors, []);
});

test("language follows the browser and can be switched", async () => {
  const zh = await openPage(browser, { locale: "zh-CN" });
  await ready(zh);
  assert.match(await zh.locator("h1").innerText(), /GPU 成本计算器/);
  assert.equal(await zh.locator("html").getAttribute("lang"), "zh-CN");
  const zhCost = await zh.locator("td.cheapest").first().innerText();
  assert.match(zhCost, /^¥/, `Chinese CNY convention: ${zhCost}`);
  // The engine's warnings come as codes and read in Chinese too (the default question's prices are
  // mostly estimates, so rows carry that warning): listed under the table, and on each row's marks.
  const marks = await zh.locator("td.warn .wmark").evaluateAll((ms) => ms.map((m) => m.title));
  const zhWarnings = [...(await zh.getByTestId("row-notes").locator("li").allInnerTexts()), ...marks].join("\n");
  assert.match(zhWarnings, /价格为估算值/);
  assert.doesNotMatch(zhWarnings, /price is|estimate|reclaimed/);

  const page = await openPage(browser, { locale: "en-US" });
  await ready(page);
  assert.match(await page.locator("h1").innerText(), /GPU cost calculator/);
  assert.match(await page.locator("td.cheapest").first().innerText(), /^CN¥/);
  await page.getByTestId("lang").selectOption("zh");
  await page.getByText("GPU 成本计算器").waitFor();
  assert.match(await page.locator("td.cheapest").first().innerText(), /^¥/);
  await page.waitForURL(/[?&]lang=zh/); // the URL follows once typing pauses
  await page.screenshot({ path: path.join(ARTIFACTS, "calculator-zh.png") });
  assert.deepEqual([...zh.errors, ...page.errors], []);
});

test("the Chinese view words the engine's assumptions, reasons, verdicts, price age and field errors", async () => {
  const page = await openPage(browser, { locale: "zh-CN" });
  // A budget and a deadline that rule offers out, so every kind of reason is listed.
  await ready(page, "?budget=300&deadline=1");
  const english = /\b(prices?|estimates?|needs|fits?|does not|budget|deadline|days|old|weights|layers|params|memory|inference|unsuitable|training|spot|overhead|activations|as of|confidence|the|per)\b/i;
  const chinese = (text, what) => {
    assert.match(text, /[\u4e00-\u9fff]/, `${what} is in Chinese: ${text}`);
    assert.doesNotMatch(text, english, `${what} has English left: ${text}`);
    return text;
  };

  const age = chinese(await page.getByTestId("price-age").innerText(), "the price age");
  assert.match(age, /^价格日期 \d{4}-\d\d-\d\d … \d{4}-\d\d-\d\d（到 \d{4}-\d\d-\d\d 已有 \d+–\d+ 天）$/);

  // Fit verdicts: the memory cell's tooltip.
  const verdicts = await page.locator('[data-testid="offer-row"] td.fit').evaluateAll((tds) => tds.map((td) => td.title));
  assert.ok(verdicts.length > 0);
  for (const v of verdicts) assert.match(chinese(v, "a fit verdict"), /^每张 GPU 需要 [\d.]+ GB，有 \d+ GB：放得下（剩余 [\d.]+ GB）$/);

  // Why offers do not fit: memory, training suitability, deadline and budget, amounts in 万/¥.
  await page.getByTestId("infeasible").locator("summary").click();
  await page.getByTestId("infeasible").locator("li").first().waitFor();
  const reasons = chinese((await page.getByTestId("infeasible").locator("li").allInnerTexts()).join("\n"), "the reasons");
  for (const kind of [/放不下/, /不适合训练/, /赶不上截止期限：需 \d+ 小时/, /超出预算：¥[\d,.]+万?（高估）> ¥300\.00/]) {
    assert.match(reasons, kind);
  }

  // Assumptions of the ranking (footer), the staged plan and the TCO comparison.
  await page.locator("footer details summary").click();
  const assumptions = chinese(await page.getByTestId("assumptions").innerText(), "the assumptions");
  assert.match(assumptions, /所有线性层上 LoRA 秩 8/);
  await page.getByTestId("tab-plan").click();
  await page.getByTestId("stage-validate").waitFor();
  chinese(await page.locator(".results ul.small.muted").last().innerText(), "the plan's assumptions");
  await page.getByTestId("tab-tco").click();
  await page.getByTestId("tco-verdict").waitFor();
  await page.locator(".results details summary").last().click();
  chinese(await page.locator(".results details ul").last().innerText(), "the TCO assumptions");
  await page.screenshot({ path: path.join(ARTIFACTS, "calculator-zh-tco.png"), fullPage: true });

  // A field's error message.
  await page.getByTestId("tokens").fill("lots");
  await page.getByTestId("error-tokens").waitFor();
  assert.match(chinese(await page.getByTestId("error-tokens").innerText(), "a field's error"), /“lots”不是有效的/);
  assert.deepEqual(page.errors, []);
});

test("a shared link reproduces the view", async () => {
  const page = await openPage(browser);
  await ready(page);
  await page.getByTestId("model").selectOption("");
  await page.getByTestId("params").fill("13b");
  await page.getByTestId("method").selectOption("qlora4");
  await page.getByTestId("tokens").fill("200M");
  await page.getByTestId("hours-per-day").fill("8");
  await page.getByTestId("days").fill("10");
  await page.getByTestId("provider-jdcloud").uncheck();
  await page.getByTestId("offer-row").nth(2).click();
  await page.locator("tr.picked").waitFor();
  const keys = await rowKeys(page);
  const chosen = await page.getByTestId("chosen").getAttribute("data-key");
  assert.equal(chosen, keys[2]);
  assert.ok(keys.every((k) => !k.startsWith("jdcloud/")), "JD Cloud unticked");
  await page.waitForURL(/[?&]pick=/); // the URL follows once typing pauses
  const url = page.url();
  assert.match(url, /params=13b/);

  // Someone else opens the link in a new browser profile, in another language.
  const other = await openPage(browser, { locale: "zh-CN" });
  await other.goto(url);
  await other.getByTestId("offer-row").first().waitFor();
  assert.deepEqual(await rowKeys(other), keys);
  assert.equal(await other.getByTestId("chosen").getAttribute("data-key"), chosen);
  for (const id of ["params", "tokens", "hours-per-day", "days"]) {
    assert.equal(await other.getByTestId(id).inputValue(), await page.getByTestId(id).inputValue(), id);
  }
  assert.equal(await other.getByTestId("method").inputValue(), "qlora4");
  assert.equal(await other.getByTestId("provider-jdcloud").isChecked(), false);
  assert.deepEqual([...page.errors, ...other.errors], []);
});

// Published config.json files: Qwen2.5-7B-Instruct's (whole) and Qwen3-30B-A3B's (MoE).
const QWEN25_7B = {
  architectures: ["Qwen2ForCausalLM"], attention_dropout: 0.0, bos_token_id: 151643, eos_token_id: 151645,
  hidden_act: "silu", hidden_size: 3584, initializer_range: 0.02, intermediate_size: 18944,
  max_position_embeddings: 32768, max_window_layers: 28, model_type: "qwen2", num_attention_heads: 28,
  num_hidden_layers: 28, num_key_value_heads: 4, rms_norm_eps: 1e-06, rope_theta: 1000000.0,
  sliding_window: 131072, tie_word_embeddings: false, torch_dtype: "bfloat16", transformers_version: "4.43.1",
  use_cache: true, use_sliding_window: false, vocab_size: 152064,
};
const QWEN3_30B_A3B = {
  architectures: ["Qwen3MoeForCausalLM"], attention_bias: false, attention_dropout: 0.0, bos_token_id: 151643,
  decoder_sparse_step: 1, eos_token_id: 151645, head_dim: 128, hidden_act: "silu", hidden_size: 2048,
  initializer_range: 0.02, intermediate_size: 6144, max_position_embeddings: 40960, max_window_layers: 48,
  mlp_only_layers: [], model_type: "qwen3_moe", moe_intermediate_size: 768, norm_topk_prob: true,
  num_attention_heads: 32, num_experts: 128, num_experts_per_tok: 8, num_hidden_layers: 48,
  num_key_value_heads: 4, output_router_logits: false, rms_norm_eps: 1e-06, rope_scaling: null,
  rope_theta: 1000000.0, router_aux_loss_coef: 0.001, sliding_window: null, tie_word_embeddings: false,
  torch_dtype: "bfloat16", transformers_version: "4.51.0", use_cache: true, use_sliding_window: false,
  vocab_size: 151936,
};

test("a pasted, picked or dropped config.json is the model; a bad one names its field", async () => {
  const page = await openPage(browser);
  await ready(page);
  const offerCount = async () => Number(await page.getByTestId("offer-count").innerText());
  const hint = () => page.getByTestId("params-hint").innerText();
  const presetCount = await offerCount();

  // Dense: Qwen2.5-7B's config reads as the preset's shape (7.6B parameters, computed from it).
  const dense = JSON.stringify(QWEN25_7B, null, 2);
  await page.getByTestId("config").fill(dense);
  await page.getByTestId("params-hint").filter({ hasText: /^7\.6\d?B/ }).waitFor();
  assert.equal(await page.getByTestId("model").inputValue(), "", "the config replaces the preset");
  await page.getByTestId("offer-row").first().waitFor();
  const denseCount = await offerCount();
  assert.ok(Math.abs(denseCount - presetCount) <= 2, `about the preset's offers (${denseCount} vs ${presetCount})`);
  const denseKeys = await rowKeys(page);

  // MoE, from the file picker: Qwen3-30B-A3B, 30.5B parameters, every expert in memory.
  await page.getByTestId("config-file").setInputFiles({
    name: "config.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(QWEN3_30B_A3B, null, 2)),
  });
  await page.getByTestId("params-hint").filter({ hasText: /^30\.\d+B/ }).waitFor();
  assert.match(await page.getByTestId("config").inputValue(), /"qwen3_moe"/);
  await page.getByTestId("offer-row").first().waitFor();
  const moeCount = await offerCount();
  assert.ok(moeCount > 0 && moeCount < denseCount, `fewer offers hold 30B than 7B (${moeCount} < ${denseCount})`);
  assert.notDeepEqual(await rowKeys(page), denseKeys);

  // The link carries the config: a fresh profile opens the same model and offers.
  await page.waitForURL(/[?&]config=/);
  const other = await openPage(browser);
  await other.goto(page.url());
  await other.getByTestId("offer-row").first().waitFor();
  assert.deepEqual(await rowKeys(other), await rowKeys(page));
  assert.equal(await other.getByTestId("config").inputValue(), await page.getByTestId("config").inputValue());

  // Dropped on the box: a partial config names what is missing, and nothing typed is lost.
  await page.getByTestId("tokens").fill("80M");
  const partial = '{"hidden_size": 4096, "num_hidden_layers": 32}';
  const drop = await page.evaluateHandle((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], "config.json", { type: "application/json" }));
    return dt;
  }, partial);
  await page.getByTestId("config").dispatchEvent("drop", { dataTransfer: drop });
  await page.getByTestId("error-config").waitFor();
  assert.equal(await page.getByTestId("error-config").innerText(),
    "missing `num_attention_heads` (or `n_head`): the number of attention heads");
  assert.equal(await page.getByTestId("config").inputValue(), partial);
  assert.equal(await page.getByTestId("tokens").inputValue(), "80M");
  assert.equal(await page.getByTestId("offer-row").count(), 0);
  await page.getByTestId("lang").selectOption("zh");
  await page.getByTestId("error-config").filter({ hasText: "缺少 `num_attention_heads`（或 `n_head`）：注意力头数" }).waitFor();

  // Not JSON: the browser's own message, which says where.
  await page.getByTestId("config").fill('{"hidden_size": 4096,,}');
  await page.getByTestId("error-config").filter({ hasText: /^不是有效的 JSON：.*JSON at position 21/ }).waitFor();
  await page.screenshot({ path: path.join(ARTIFACTS, "calculator-config-error.png") });

  // Fixed in place, it is the model again; a preset chosen after it wins, the text stays.
  await page.getByTestId("config").fill(dense);
  await page.getByTestId("offer-row").first().waitFor();
  await page.getByTestId("model").selectOption("qwen3-8b");
  await page.getByTestId("params-hint").filter({ hasText: /^8\.\d+B/ }).waitFor();
  assert.equal(await page.getByTestId("config").inputValue(), dense);
  assert.equal(await hint() !== "", true);
  assert.deepEqual([...page.errors, ...other.errors], []);
});

test("export spec downloads a stage TOML that gpuctl plan reads", async () => {
  const page = await openPage(browser);
  await ready(page, "?method=qlora4&tokens=50M");
  const chosen = await page.getByTestId("chosen").getAttribute("data-key");
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-spec").click()]);
  assert.match(download.suggestedFilename(), /^qwen2-5-7b-qlora4\.toml$/);
  const file = path.join(ARTIFACTS, download.suggestedFilename());
  await download.saveAs(file);
  const text = readFileSync(file, "utf8");
  const spec = parseToml(text);
  const [provider, instance, region] = chosen.split("/");
  assert.equal(spec.deployment, "qwen2-5-7b-qlora4");
  assert.equal(spec.pool.length, 1);
  assert.equal(spec.pool[0].provider, provider);
  assert.equal(spec.pool[0].region, region);
  assert.ok(spec.pool[0].instance_type.endsWith(instance), `${spec.pool[0].instance_type} names ${instance}`);
  // The preview is written when opened (not on every keystroke), and it is the file.
  await page.getByTestId("chosen").locator("summary").click();
  await changed(() => page.getByTestId("spec-preview").textContent(), "", "the spec preview");
  assert.equal(text, await page.getByTestId("spec-preview").textContent(), "the preview is the file");

  // The real CLI reads it (always: a gpuctl without `plan` fails here rather than skipping the check).
  assert.match(plan(file), new RegExp(instance.replace(/[.]/g, "\\.")));
});

test("staged plan and TCO tabs", async () => {
  const page = await openPage(browser);
  await ready(page);
  await page.getByTestId("tab-plan").click();
  for (const s of ["validate", "tune", "produce"]) await page.getByTestId(`stage-${s}`).waitFor();
  await page.waitForURL(/tab=plan/);
  await page.screenshot({ path: path.join(ARTIFACTS, "plan.png"), fullPage: true });
  // Each stage's spec (pay-as-you-go, the tune offer's mode, a long term) goes through gpuctl plan.
  for (const s of ["validate", "tune", "produce"]) {
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId(`export-stage-${s}`).click()]);
    const file = path.join(ARTIFACTS, `stage-${s}.toml`);
    await download.saveAs(file);
    const spec = parseToml(readFileSync(file, "utf8"));
    assert.equal(spec.pool[0].name, s);
    assert.match(plan(file), new RegExp(`\\b${s}\\b`));
  }

  await page.getByTestId("tab-tco").click();
  await page.getByTestId("tco-break-even").waitFor();
  await page.getByTestId("tco-util").fill("5");
  const low = await page.getByTestId("tco-verdict").innerText();
  await page.getByTestId("tco-util").fill("100");
  const high = await changed(() => page.getByTestId("tco-verdict").innerText(), low, "the TCO verdict");
  assert.match(low, /cloud is cheaper/);
  assert.match(high, /self-built is cheaper/);
  await page.getByTestId("tco-pue").fill("0.2");
  await page.getByTestId("error-tco-pue").waitFor();
  await page.getByTestId("tco-pue").fill("1.4");
  await page.screenshot({ path: path.join(ARTIFACTS, "tco.png"), fullPage: true });
  assert.deepEqual(page.errors, []);
});

test("screenshot of the default view (CI artifact)", async () => {
  const page = await openPage(browser);
  await ready(page);
  await page.screenshot({ path: path.join(ARTIFACTS, "calculator.png"), fullPage: false });
  assert.deepEqual(page.errors, []);
});

// The catalog is its own static file (issue 18). Without it the page says so, in the page's language,
// with the reason, rather than showing an empty calculator.
test("a catalog that cannot load gives a clear error, not an empty page", async () => {
  for (const [answer, reason] of [
    [{ status: 503, body: "down" }, "catalog.bin: HTTP 503"],
    [{ status: 200, body: "not a catalog", contentType: "application/octet-stream" }, "not a catalog in build.rs's binary form"],
  ]) {
    const page = await openPage(browser);
    await page.route("**/catalog.bin", (route) => route.fulfill(answer));
    // The WASM late, so the catalog's failure comes first: the page must still hold it for the answer
    // (once an unhandled rejection, seen as a page error only when the timing fell that way).
    await page.route("**/gpuctl_web_bg.wasm", async (route) => {
      await new Promise((r) => setTimeout(r, 500));
      await route.continue();
    });
    await page.goto(server.url + "?lang=zh");
    const error = page.getByTestId("catalog-error");
    await error.waitFor();
    const text = await error.innerText();
    assert.match(text, /无法加载价格目录/);
    assert.ok(text.includes(reason), `${text} names the reason (${reason})`);
    assert.equal(await page.getByTestId("offer-row").count(), 0);
    // The only error logged is the browser's own line about the failed response.
    assert.deepEqual(page.errors.filter((e) => !/status of 503/.test(e)), []);
    await page.context().close();
  }
});

// Once loaded, the service worker keeps the code and the catalog: with the server gone, a reload still
// ranks offers. A server of its own, so stopping it leaves the other tests theirs.
test("offline after the first visit: the cached code and catalog still rank", async () => {
  const own = await serve();
  const page = await openPage(browser);
  await page.goto(own.url);
  await page.getByTestId("offer-row").first().waitFor();
  // Installed (its install step cached the files) and controlling this page.
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((res) => navigator.serviceWorker.addEventListener("controllerchange", res, { once: true }));
    }
  });
  // The catalog is in the worker's cache itself, not only in the browser's HTTP cache (which could
  // also answer the reload below for a while).
  const cached = await page.evaluate(async () => {
    const res = await caches.match(new URL("catalog.bin", location.href).href);
    return res ? (await res.arrayBuffer()).byteLength : 0;
  });
  assert.ok(cached > 1000, `catalog.bin cached by the service worker (${cached} bytes)`);
  const online = await page.getByTestId("offer-count").innerText();
  own.stop();
  for (let i = 0; ; i++) {
    try { await fetch(own.url); } catch { break; }
    if (i > 100) assert.fail("the server did not stop");
    await new Promise((r) => setTimeout(r, 50));
  }
  await page.reload();
  await page.getByTestId("offer-row").first().waitFor();
  assert.equal(await page.getByTestId("offer-count").innerText(), online);
  assert.equal(await page.getByTestId("catalog-error").count(), 0);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

// Issue 16: "can a 16 GB T4 run 7B?" is one choice, and the table is scannable — a warning shared by
// rows is listed once under the table and marked per row, so at least 10 rows fit a 1440×900 window.
test("the GPU filter answers 'can a T4 run it' and ten rows fit a 1440×900 window", async () => {
  const page = await openPage(browser);
  await page.setViewportSize({ width: 1440, height: 900 });
  await ready(page, "?model=qwen2.5-7b&method=qlora4&tokens=50M");
  const all = Number(await page.getByTestId("offer-count").innerText());

  // Rows fit: the table's first ten rows are each short (no warning text written out on them).
  const heights = await page.getByTestId("offer-row").evaluateAll((rows) => rows.slice(0, 10).map((r) => r.getBoundingClientRect().height));
  assert.equal(heights.length, 10, "at least ten rows shown");
  const tall = heights.reduce((a, b) => a + b, 0);
  assert.ok(tall <= 900, `ten rows take ${tall.toFixed(0)} px of a 900 px window (${heights.map((h) => h.toFixed(0)).join(", ")})`);
  // Each distinct warning is written once, under the table; rows carry numbered marks with the text on hover.
  const notes = await page.getByTestId("row-notes").locator("li").allInnerTexts();
  assert.ok(notes.length > 0, "the rows' warnings are listed");
  assert.equal(new Set(notes).size, notes.length, `each warning once: ${notes}`);
  const mark = page.locator("[data-testid=offer-row] .wmark").first();
  assert.equal(await mark.getAttribute("title"), notes[Number(await mark.innerText()) - 1]);

  // Only T4 instances: every row's GPU column says T4, fewer rows than for any GPU, and the choice is in the URL.
  await page.getByTestId("gpu").selectOption("t4");
  const count = Number(await changed(() => page.getByTestId("offer-count").innerText(), String(all), "the offer count after gpu=t4"));
  assert.ok(count > 0 && count < all, `a T4 runs QLoRA 7B: ${count} of ${all} offers`);
  const gpus = await page.getByTestId("offer-row").evaluateAll((rows) => rows.map((r) => r.children[2].innerText));
  assert.ok(gpus.every((g) => /T4/.test(g)), `T4 rows only: ${gpus}`);
  await page.waitForURL(/[?&]gpu=t4(&|$)/); // the URL follows once typing pauses
  // A full fine-tune of 7B does not fit one 16 GB T4: only clusters of one-T4 nodes sharded over all
  // of them are offered (issue 14), and each row says how many nodes and how they share the work.
  await page.getByTestId("gpus").selectOption("1");
  await page.getByTestId("method").selectOption("full");
  await page.getByTestId("cluster").first().waitFor();
  const clusters = await page.getByTestId("offer-row").evaluateAll((rows) => rows.map((r) => r.children[2].innerText));
  assert.ok(clusters.length > 0, "T4 clusters are offered");
  assert.ok(clusters.every((g) => /\d+ nodes × 1 × .*T4/.test(g) && /full sharding/.test(g)), `only T4 clusters: ${clusters}`);
  // The chosen row's line names its nodes too: its cost is the whole cluster's.
  assert.match(await page.getByTestId("chosen").innerText(), /\d+ nodes × 1 × .*T4/);
  assert.deepEqual(page.errors, []);
});

// Inference's own settings (issue 16): what runs the decode loop and how much of the sequence is
// output. They appear only for inference, reach the engine (its assumptions say so), land in the URL,
// and output past the sequence is refused next to the field.
test("inference takes a runtime and output tokens; training hides them", async () => {
  const page = await openPage(browser);
  await ready(page, "?model=qwen2.5-7b&method=inference&seq=32768&gpus=1");
  await page.locator("footer details summary").click();
  const said = () => page.getByTestId("assumptions").innerText();
  assert.match(await said(), /counted as prompt/);
  assert.match(await said(), /a serving engine such as vLLM or SGLang/);

  const whole = await said();
  await page.getByTestId("output-tokens").fill("2048");
  assert.match(await changed(said, whole, "the assumptions after output tokens"), /prefill of the 30720-token prompt/);
  await page.waitForURL(/[?&]out=2048(&|$)/);
  // Eager transformers decodes ten times slower than a serving engine: the rows' times change.
  const serving = await firstRowText(page);
  await page.getByTestId("runtime").selectOption("transformers");
  await changed(() => firstRowText(page), serving, "the first row after the runtime");
  await page.waitForURL(/[?&]runtime=transformers(&|$)/);

  await page.getByTestId("output-tokens").fill("40000");
  await page.getByTestId("error-output-tokens").waitFor();
  assert.match(await page.getByTestId("error-output-tokens").innerText(), /from 0 to the sequence length, 32768/);

  await page.getByTestId("method").selectOption("lora");
  await page.getByTestId("offer-row").first().waitFor();
  assert.ok(await page.getByTestId("runtime").isHidden(), "no runtime choice for training");
  assert.ok(await page.getByTestId("output-tokens").isHidden(), "no output tokens for training");
  assert.deepEqual(page.errors, []);
});
