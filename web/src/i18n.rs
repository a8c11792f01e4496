//! The page's two languages: which one to show (URL first, then the browser's preference) and every
//! piece of text in both. Text lives here, not in the components, so a missing translation is a
//! compile error rather than a blank on the page.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    /// The code used in the URL (`lang=zh`) and in `<html lang>`.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    pub fn from_code(code: &str) -> Option<Lang> {
        match code {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }

    /// The first of the browser's preferred languages (`navigator.languages`) that we speak;
    /// English when none is Chinese or English.
    pub fn from_browser<'a>(preferred: impl IntoIterator<Item = &'a str>) -> Lang {
        for tag in preferred {
            let primary = tag.split(['-', '_']).next().unwrap_or("").to_ascii_lowercase();
            if let Some(lang) = Lang::from_code(&primary) {
                return lang;
            }
        }
        Lang::En
    }
}

/// One piece of UI text in both languages.
#[derive(Clone, Copy, Debug)]
pub struct Text {
    pub en: &'static str,
    pub zh: &'static str,
}

impl Text {
    pub fn get(self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => self.en,
            Lang::Zh => self.zh,
        }
    }
}

macro_rules! texts {
    ($($name:ident: $en:literal, $zh:literal;)*) => {
        $(pub const $name: Text = Text { en: $en, zh: $zh };)*
    };
}

texts! {
    TITLE: "GPU cost calculator", "GPU 成本计算器";
    SUBTITLE: "Which GPU instance, billed how, for how long, at what cost — Tencent Cloud, Alibaba Cloud, JD Cloud. The same engine as the gpuctl CLI, running in your browser.",
        "选哪种 GPU 实例、怎么计费、要多久、花多少钱 —— 腾讯云、阿里云、京东云。与 gpuctl 命令行同一个引擎，在浏览器里运行。";
    LANGUAGE: "Language", "语言";
    TAB_OFFERS: "Offers", "方案排名";
    TAB_PLAN: "Staged plan", "阶梯式部署";
    TAB_TCO: "Self-build vs cloud (TCO)", "自建 vs 上云 (TCO)";
    JOB: "The job", "任务";
    MODEL: "Model", "模型";
    CUSTOM_MODEL: "custom (parameter count)", "自定义（参数量）";
    PARAMS: "Parameters", "参数量";
    PARAMS_HINT: "e.g. 7b, 13B, 350M — overrides the model", "如 7b、13B、350M，填写后覆盖模型选择";
    METHOD: "Method", "方法";
    PRECISION: "Precision", "精度";
    AUTO: "automatic", "自动";
    SEQ: "Sequence length", "序列长度";
    TOKENS: "Dataset tokens", "数据集 token 数";
    TOKENS_HINT: "per epoch, e.g. 50M, 1.5B; for inference: tokens to generate", "每轮，如 50M、1.5B；推理时为要处理的 token 数";
    EPOCHS: "Epochs", "训练轮数";
    USAGE: "How you use the GPUs", "使用方式";
    GPUS: "GPUs per instance", "每实例 GPU 数";
    ANY: "any", "不限";
    HOURS_PER_DAY: "Hours per day", "每天使用小时数";
    DAYS: "Days of use", "使用天数";
    DAYS_HINT: "empty: as long as the job takes", "留空：按任务所需时间";
    DEADLINE: "Deadline (days)", "截止期限（天）";
    BUDGET: "Budget (¥)", "预算（¥）";
    PROVIDERS: "Providers", "云厂商";
    OPTIONAL: "optional", "可选";
    RANK: "#", "#";
    OFFER: "Instance", "实例";
    GPU_COL: "GPUs", "GPU";
    FIT: "Memory per GPU", "单卡显存";
    TIME: "Time", "耗时";
    PER_1M: "¥ / 1M tokens", "¥ / 百万 token";
    PRICE: "Price & source", "价格与来源";
    WARNINGS: "Warnings", "提示";
    DAYS_OLD: "days old", "天前";
    CHEAPEST: "cheapest mode", "最便宜的计费方式";
    OFFERS_FOUND: "offers fit", "个方案可行";
    SHOWING: "showing", "已显示";
    PARAMS_UNIT: "params", "参数";
    SHOW_ALL: "show all", "显示全部";
    SHOW_FEWER: "show fewer", "收起";
    DOES_NOT_FIT: "Offers that do not fit, and why", "不可行的方案及原因";
    CHOSEN: "Chosen", "已选";
    CHOOSE_HINT: "Click a row or a point to choose an offer.", "点击表格行或图中的点来选择方案。";
    EXPORT: "Export spec", "导出部署文件";
    EXPORT_HINT: "a stage TOML for `gpuctl plan` / `gpuctl provision`", "可直接用于 `gpuctl plan` / `gpuctl provision` 的 TOML";
    PREVIEW: "Preview the spec", "预览部署文件";
    NO_OFFERS: "No offer fits. See why below, or relax the deadline, budget or GPU count.", "没有可行方案。请查看下方原因，或放宽截止期限、预算或 GPU 数量。";
    FIX_INPUTS: "Fix the inputs marked in red.", "请修正标红的输入。";
    CHART_COST_TIME: "Cost vs time of every offer (log scales): the line joins the cheap-and-fast frontier", "各方案的成本与耗时（对数坐标）：折线连接“又快又省”的前沿";
    CHART_MODES: "Cost of each billing mode over days of use", "各计费方式随使用天数的成本";
    CHART_MODES_FOR: "for the chosen instance at", "所选实例，每天使用";
    HOURS_A_DAY: "h/day", "小时";
    AXIS_HOURS: "hours of work", "工作小时数";
    AXIS_COST: "cost ¥", "成本 ¥";
    AXIS_DAYS: "days of use", "使用天数";
    AXIS_UTIL: "utilization", "利用率";
    AXIS_PER_YEAR: "¥ per year", "每年 ¥";
    THIS_JOB: "this job", "本任务";
    ASSUMPTIONS: "Assumptions", "假设";
    ENGINE_NOTE: "Engine notes are in English.", "引擎说明为英文。";
    STAGE_VALIDATE: "1 · Validate", "1 · 验证";
    STAGE_TUNE: "2 · Tune", "2 · 调优";
    STAGE_PRODUCE: "3 · Produce", "3 · 生产";
    STAGE_VALIDATE_WHY: "Prove the pipeline end to end on the cheapest card that fits: QLoRA-4 on 1 % of the data, pay-as-you-go, released automatically.",
        "在能装下的最便宜显卡上端到端跑通流程：QLoRA-4，1% 数据，按量计费并自动释放。";
    STAGE_TUNE_WHY: "The real job as you described it, on the cheapest offer that meets the deadline and budget.",
        "按你描述的真实任务，在满足期限和预算的最便宜方案上运行。";
    STAGE_PRODUCE_WHY: "Serve the tuned model around the clock for a month; longer terms win here, spot is excluded.",
        "全天候部署推理一个月；长期合约在这里更划算，不使用竞价实例。";
    STAGE_NONE: "No offer fits this stage.", "此阶段没有可行方案。";
    ALTERNATIVES: "Fallbacks on other providers", "其他云厂商的备选";
    PLAN_TOTAL: "All three stages, high estimate", "三个阶段合计（高估）";
    TCO_CLUSTER: "Self-built cluster", "自建集群";
    TCO_GPU: "GPU to compare", "对比的 GPU";
    TCO_GPUS: "GPUs", "GPU 数量";
    TCO_CARD: "Price per card (¥)", "单卡价格（¥）";
    TCO_SERVER: "Server without GPUs (¥ each)", "服务器（不含 GPU，¥/台）";
    TCO_NETWORK: "Network + storage (¥)", "网络与存储（¥）";
    TCO_YEARS: "Depreciation (years)", "折旧年限";
    TCO_KW: "Power per server at load (kW)", "单台满载功率（kW）";
    TCO_PUE: "PUE", "PUE";
    TCO_KWH: "Electricity (¥/kWh)", "电价（¥/kWh）";
    TCO_OPS: "Ops staff (¥/year)", "运维人力（¥/年）";
    TCO_UTIL: "Utilization (%)", "利用率（%）";
    TCO_SELF_YEAR: "Self-built per year", "自建每年";
    TCO_DEPRECIATION: "depreciation", "折旧";
    TCO_POWER: "power", "电费";
    TCO_OPS_SHORT: "ops", "运维";
    TCO_PER_GPU_HOUR: "per GPU-hour used", "每 GPU 小时（实际使用）";
    TCO_CLOUD: "Cloud for the same GPU-hours", "云上同等 GPU 小时";
    TCO_BREAK_EVEN: "Self-built beats pay-as-you-go above", "自建比按量计费更省的利用率阈值";
    TCO_NEVER: "Self-built never beats pay-as-you-go at these inputs.", "在这些输入下，自建始终不如按量计费划算。";
    TCO_VERDICT_SELF: "At this utilization, self-built is cheaper than the best cloud option.", "在此利用率下，自建比最便宜的云方案更省。";
    TCO_VERDICT_CLOUD: "At this utilization, the cloud is cheaper.", "在此利用率下，上云更省。";
    TCO_CHART: "Yearly cost against utilization: self-built vs the cheapest cloud mode", "年成本随利用率变化：自建 vs 最便宜的云计费方式";
    SELF_BUILT: "self-built", "自建";
    CLOUD_BEST: "cloud (cheapest mode)", "云（最便宜方式）";
}

/// A billing mode's name for people.
pub fn mode_name(mode: gpuctl_core::BillingMode, lang: Lang) -> &'static str {
    use gpuctl_core::BillingMode::*;
    let t = match mode {
        Hourly => Text { en: "Pay-as-you-go", zh: "按量计费" },
        Spot => Text { en: "Spot", zh: "竞价实例" },
        Weekly => Text { en: "Weekly", zh: "按周" },
        Monthly => Text { en: "Monthly", zh: "包月" },
        Year1 => Text { en: "1 year", zh: "包年 1 年" },
        Year3 => Text { en: "3 years", zh: "包年 3 年" },
    };
    t.get(lang)
}

/// A provider's name for people.
pub fn provider_name(p: gpuctl_core::Provider, lang: Lang) -> &'static str {
    use gpuctl_core::Provider::*;
    let t = match p {
        Tencent => Text { en: "Tencent Cloud", zh: "腾讯云" },
        Alibaba => Text { en: "Alibaba Cloud", zh: "阿里云" },
        JdCloud => Text { en: "JD Cloud", zh: "京东云" },
    };
    t.get(lang)
}

/// A method's name for people.
pub fn method_name(m: gpuctl_core::Method, lang: Lang) -> &'static str {
    use gpuctl_core::Method::*;
    let t = match m {
        Full => Text { en: "Full fine-tune (mixed precision)", zh: "全量微调（混合精度）" },
        FullPure16 => Text { en: "Full fine-tune (pure 16-bit)", zh: "全量微调（纯 16 位）" },
        Freeze => Text { en: "Freeze (last layers only)", zh: "冻结微调（仅最后几层）" },
        Lora => Text { en: "LoRA", zh: "LoRA" },
        Qlora8 => Text { en: "QLoRA 8-bit", zh: "QLoRA 8 位" },
        Qlora4 => Text { en: "QLoRA 4-bit", zh: "QLoRA 4 位" },
        Inference => Text { en: "Inference", zh: "推理" },
    };
    t.get(lang)
}

/// One of the engine's warnings (by its stable code) in the page's language. English is the
/// engine's own text, so the two views never say different things.
pub fn warning(w: &gpuctl_core::Warning, lang: Lang) -> String {
    use gpuctl_core::Warning::*;
    if lang == Lang::En {
        return w.to_string();
    }
    match w {
        SpotReclaim => "竞价实例随时可能被回收（通常提前约 5 分钟通知）：请勤存检查点，并做好重启准备".into(),
        StalePrice { days, as_of } => format!("价格已有 {days} 天未更新（截至 {as_of}）"),
        EstimatedPrice => "价格为估算值（见推算说明）".into(),
        BriefPrice => "价格来自需求说明，未经核实".into(),
        DerivedPrice => "价格由其他计费方式推算".into(),
        AscendStack => "昇腾：需要 CANN 配合 MindSpore 或 torch_npu，不支持 CUDA".into(),
        VgpuSlice { share, gpu } => format!("vGPU 切片（{share} 张 {gpu}）：与他人共享显卡，仅支持 CUDA"),
        NoBf16 { gpu } => format!("{gpu} 不支持 BF16：以 FP16 加损失缩放训练"),
        VllmComputeCapability => "vLLM 需要计算能力 ≥ 7.0：请换用其他服务框架".into(),
        NoTokensOrHours => "未给出 token 数或使用时长：费用按使用 1 小时计算".into(),
        FullFineTuneMemory { bytes_per_param, gb, model, params } => format!(
            "全量微调每个参数需保存 {bytes_per_param:.0} 字节的权重、梯度和 Adam 状态（不含激活）：{model}（{:.2}B 参数）需 {gb:.0} GB，须用多张大显存 GPU 配合 ZeRO/FSDP；单张 24 GB 显卡放不下（LoRA 或 QLoRA 可以）",
            params / 1e9
        ),
        NoOfferFits => "没有可运行此任务的方案：原因见“放不下”列表".into(),
        NoCloudPrice { gpu } => format!("目录中没有 GPU“{gpu}”的云上价格：无从比较"),
        EstimatedCloudPrices => "部分云上价格为估算值（见各价格的推算说明）".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_language_picks_first_spoken() {
        let check = |prefs: &[&str], expected| assert_eq!(Lang::from_browser(prefs.iter().copied()), expected, "{prefs:?}");
        check(&["zh-CN", "en-US"], Lang::Zh);
        check(&["en-GB", "zh"], Lang::En);
        check(&["fr-FR", "zh-Hans-CN"], Lang::Zh);
        check(&["ZH_tw"], Lang::Zh);
        check(&["de"], Lang::En);
        check(&[], Lang::En);
    }

    /// Every warning code reads in Chinese in the zh view (no English words left but names and
    /// units), and in the engine's own words in the en view.
    #[test]
    fn warnings_in_both_languages() {
        use gpuctl_core::{Date, Warning::*};
        let all = [
            SpotReclaim,
            StalePrice { days: 168, as_of: Date::constant(2026, 6, 15) },
            EstimatedPrice,
            BriefPrice,
            DerivedPrice,
            AscendStack,
            VgpuSlice { share: 0.25, gpu: "NVIDIA A10".into() },
            NoBf16 { gpu: "NVIDIA T4".into() },
            VllmComputeCapability,
            NoTokensOrHours,
            FullFineTuneMemory { bytes_per_param: 16.0, gb: 121.9, model: "qwen2.5-7b".into(), params: 7.62e9 },
            NoOfferFits,
            NoCloudPrice { gpu: "h800".into() },
            EstimatedCloudPrices,
        ];
        for w in &all {
            assert_eq!(warning(w, Lang::En), w.to_string());
            let zh = warning(w, Lang::Zh);
            assert!(zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "{zh}");
            for english in ["price", "spot", "the ", "needs", "estimate"] {
                assert!(!zh.to_lowercase().contains(english), "{zh}");
            }
        }
        assert_eq!(warning(&all[1], Lang::Zh), "价格已有 168 天未更新（截至 2026-06-15）");
        assert!(warning(&all[10], Lang::Zh).contains("qwen2.5-7b（7.62B 参数）需 122 GB"));
    }
}
