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
    CATALOG_UNAVAILABLE: "The price catalog could not be loaded, so there is nothing to rank.",
        "无法加载价格目录，暂无可排名的方案。";
    CATALOG_RETRY: "Reload the page when the connection is back; once loaded, the page also works offline.",
        "网络恢复后请刷新页面；加载成功一次后，本页离线也能使用。";
    TAB_OFFERS: "Offers", "方案排名";
    TAB_PLAN: "Staged plan", "阶梯式部署";
    TAB_TCO: "Self-build vs cloud (TCO)", "自建 vs 上云 (TCO)";
    JOB: "The job", "任务";
    MODEL: "Model", "模型";
    CUSTOM_MODEL: "custom (parameter count or config.json)", "自定义（参数量或 config.json）";
    CONFIG: "Hugging Face config.json", "Hugging Face config.json";
    CONFIG_HINT: "paste or drop a model's config.json here (or choose the file below)", "在此粘贴或拖入模型的 config.json（或在下方选择文件）";
    PARAMS: "Parameters", "参数量";
    PARAMS_HINT: "e.g. 7b, 13B, 350M — overrides the model", "如 7b、13B、350M，填写后覆盖模型选择";
    METHOD: "Method", "方法";
    PRECISION: "Precision", "精度";
    AUTO: "automatic", "自动";
    SEQ: "Sequence length", "序列长度";
    RUNTIME: "Runs on", "推理框架";
    RUNTIME_SERVING: "a serving engine (vLLM, SGLang)", "推理服务引擎（vLLM、SGLang）";
    RUNTIME_TRANSFORMERS: "Hugging Face transformers (eager)", "Hugging Face transformers（即时执行）";
    OUTPUT_TOKENS: "Output tokens per sequence", "每条序列输出 token 数";
    OUTPUT_TOKENS_HINT: "part of the sequence; empty = all prompt", "属于序列长度；留空 = 全部按提示词计";
    TOKENS: "Dataset tokens", "数据集 token 数";
    TOKENS_HINT: "per epoch, e.g. 50M, 1.5B; for inference: tokens to generate", "每轮，如 50M、1.5B；推理时为要处理的 token 数";
    EPOCHS: "Epochs", "训练轮数";
    USAGE: "How you use the GPUs", "使用方式";
    GPUS: "GPUs per instance", "每实例 GPU 数";
    GPU_FILTER: "GPU", "显卡型号";
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
    AS_OF: "as of", "截至";
    CONFIDENCE: "confidence", "可信度";
    PER_YEAR: " / yr", "/年";
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
        NoOfferFits => "没有可运行此任务的方案：原因见“不可行的方案及原因”".into(),
        NoCloudPrice { gpu } => format!("目录中没有 GPU“{gpu}”的云上价格：无从比较"),
        EstimatedCloudPrices => "部分云上价格为估算值（见各价格的推算说明）".into(),
        SlowNodeLink { gbps } => format!("节点之间只有 {gbps} Gbit/s（低于 10）：速度由网络而非 GPU 决定"),
    }
}

/// A name that matched nothing ("unknown method 'loar' (did you mean lora?)"), in the page's language.
pub fn unknown_name(e: &gpuctl_core::UnknownName, lang: Lang) -> String {
    if lang == Lang::En {
        return e.to_string();
    }
    let kind = match e.kind.as_str() {
        "model" => "模型",
        "method" => "方法",
        "precision" => "精度",
        "provider" => "云厂商",
        "region" => "地域",
        "billing mode" => "计费方式",
        other => other,
    };
    let mut out = format!("未知的{kind}“{}”", e.given);
    if !e.suggestions.is_empty() {
        out.push_str(&format!("，是否想输入：{}？", e.suggestions.join("、")));
    }
    out
}

/// A refused number of the job question ([`gpuctl_core::InputError`]: core's bounds, English in
/// its `Display`) in the page's language.
pub fn input_error(e: &gpuctl_core::InputError, lang: Lang) -> String {
    use gpuctl_core::InputError::*;
    if lang == Lang::En {
        return e.to_string();
    }
    match e {
        SeqLenOutOfRange { min, .. } => format!("序列长度须为 {min} 到 1M 之间的整数"),
        GpusOutOfRange { max } => format!("每实例 GPU 数须为 1 到 {max} 之间的整数"),
        EpochsOutOfRange { max } => format!("训练轮数须大于 0 且不超过 {max}"),
        HoursPerDayOutOfRange => "每天使用小时数须大于 0 且不超过 24".into(),
        DaysOutOfRange { max_days } => {
            if max_days % 365.0 == 0.0 {
                format!("使用天数须大于 0 且不超过 {} 年", max_days / 365.0)
            } else {
                format!("使用天数须大于 0 且不超过 {max_days} 天")
            }
        }
        TokensNegative => "token 数不能为负".into(),
        DeadlineNotPositive => "截止期限须大于 0 天".into(),
        BudgetNotPositive => "预算须为大于 0 的金额（¥）".into(),
        ParamsTooFew { .. } => "模型至少有 1M 参数（70 亿写作 7b）".into(),
        OutputTokensOverSeqLen { seq_len } => {
            format!("输出 token 数是序列的末尾部分：须为 0 到序列长度 {seq_len} 之间的整数")
        }
    }
}

/// Why a pasted config.json was refused ([`ConfigError`](gpuctl_core::hf_config::ConfigError): core's
/// rules, English in its `Display`, the same as the CLI's) in the page's language.
pub fn config_error(e: &gpuctl_core::hf_config::ConfigError, lang: Lang) -> String {
    use gpuctl_core::hf_config::{ConfigProblem::*, Setting};
    if lang == Lang::En {
        return e.to_string();
    }
    let what = |s: &Setting| match s {
        Setting::Layers => "Transformer 层数",
        Setting::Width => "模型宽度（隐藏层维度）",
        Setting::Heads => "注意力头数",
        Setting::KvHeads => "键/值头数",
        Setting::Vocab => "词表大小",
        Setting::HeadDim => "单个注意力头的宽度",
        Setting::Experts => "路由专家数",
        Setting::PerToken => "每个 token 路由到的专家数",
        Setting::ExpertFfn => "单个专家的 MLP 宽度",
        Setting::ExpertFfnAsFfn => "单个专家的 MLP 宽度（`moe_intermediate_size`）",
        Setting::SharedExperts => "共享专家数",
        Setting::DenseLayers => "前置稠密层数",
        Setting::Ffn => "MLP 宽度",
    };
    let at = e.at.map(|(l, c)| format!("{l}:{c}: ")).unwrap_or_default();
    at + &match &e.problem {
        NotJson(why) => format!("不是有效的 JSON：{why}"),
        NotAnObject => "config.json 应是一个写有模型设置的 JSON 对象".into(),
        LatentAttention => {
            "暂不支持多头潜在注意力（DeepSeek-V2/V3 的 `kv_lora_rank`）：其显存与算力只能靠猜，\
                            因此不作估算，以免给出错误结果"
                .into()
        }
        Missing { keys, setting } => {
            let or = keys[1..].iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join("、");
            let or = if or.is_empty() { or } else { format!("（或 {or}）") };
            format!("缺少 `{}`{or}：{}", keys[0], what(setting))
        }
        NotACount { key, value, setting, max } => {
            format!("`{key}` 为 {value}：{}须为 1 到 {max} 之间的整数", what(setting))
        }
        HeadsNotGrouped { heads, kv_heads } => {
            format!("`num_attention_heads`（{heads}）不是 `num_key_value_heads`（{kv_heads}）的整数倍")
        }
        TooManyPerToken { per_token, experts } => {
            format!("`num_experts_per_tok`（{per_token}）超过了专家总数 {experts}")
        }
        TiedNotBool { value } => format!("`tie_word_embeddings` 为 {value}，应为 true 或 false"),
    }
}

/// One of the engine's assumptions (by its stable code) in the page's language. English is the
/// engine's own text.
pub fn assumption(a: &gpuctl_core::Assumption, lang: Lang) -> String {
    use gpuctl_core::{Assumption::*, Method};
    if lang == Lang::En {
        return a.to_string();
    }
    match a {
        FullMixedPrecision => "全量微调，混合精度 Adam：16 位权重（2 B）+ 16 位梯度（2 B）+ FP32 主权重与 Adam m、v（12 B）= 每参数 16 字节".into(),
        FullPure16 => "纯 16 位全量微调：权重 2 B + 梯度 2 B + 16 位 Adam m、v 4 B = 每参数 8 字节".into(),
        Freeze { trainable_layers, layers, trainable_params } => format!(
            "冻结微调：{layers} 层中最后 {trainable_layers} 层可训练（{:.2}B 参数），用混合精度 Adam，其余以 16 位冻结",
            trainable_params / 1e9
        ),
        Adapters { method, lora_rank, adapter_params } => {
            let base = match method {
                Method::Lora => "冻结的 16 位基座（每参数 2 B）",
                Method::Qlora8 => "8 位基座（LLM.int8），嵌入层和 LM head 为 16 位，每次把一层反量化为 16 位",
                _ => "4 位 NF4 基座，双重量化（每参数 4.127 位），嵌入层和 LM head 为 16 位，每次把一层反量化为 16 位",
            };
            format!(
                "{}：{base}；所有线性层上 LoRA 秩 {lora_rank} = {:.1}M 参数，FP32 权重、梯度和 Adam 状态（各 16 B）",
                method_name(*method, lang),
                adapter_params / 1e6
            )
        }
        InferenceMemory { precision, bytes_per_param, seq_len, batch, devices, output_tokens } => {
            let tp = if *devices > 1 { format!("，{devices} 张 GPU 张量并行") } else { String::new() };
            let prefill = if *output_tokens > 0 {
                format!(
                    "；预填充对 {} token 的提示词逐层运行 MLP（此时缓存只有提示词；输出 {output_tokens} token）",
                    seq_len.saturating_sub(*output_tokens)
                )
            } else {
                format!("；预填充对全部 {seq_len} token 逐层运行 MLP（全部按提示词计）")
            };
            format!(
                "推理：{} 权重（每参数 {bytes_per_param} B{}），16 位 KV 缓存，{seq_len} token × 批量 {batch}{tp}{prefill}",
                precision.as_str(),
                if precision.is_quantized() { "；嵌入层和输出层保持 16 位" } else { "" }
            )
        }
        Activations { seq_len, micro_batch, checkpointing } => format!(
            "激活：序列 {seq_len} × 微批量 {micro_batch}，梯度检查点{}，每层 s·b·h·(34 + 5·a·s/h) 字节（Korthikanti 等，2022），另计 FP32 logits 及其梯度",
            if *checkpointing { "开启（保留各层输入，每次重算一层）" } else { "关闭" }
        ),
        FlashAttention => "注意力：GPU 支持时（Ampere 及更新）使用 FlashAttention-2，不占 s² 注意力分数显存".into(),
        NoFlashAttention => "注意力：Ampere 之前的 GPU（T4、V100、P4/P40）没有 FlashAttention-2，须保存 s² 注意力分数".into(),
        Overhead { context_gb, fragmentation_pct } => {
            format!("开销：{context_gb} GB CUDA 上下文/工作区 + {fragmentation_pct:.0} % 显存分配碎片")
        }
        Flops6 => "FLOPs ≈ 6·N·D（每 token 前向 2·N·D + 反向 4·N·D）".into(),
        Flops4 => "LoRA 类训练 FLOPs ≈ 4·N·D（前向 2·N·D + 激活梯度 2·N·D；冻结的权重不需计算权重梯度）".into(),
        AscendMfu => "假定昇腾的 MFU 与 CUDA GPU 相同（未找到公开的微调吞吐数据）".into(),
        ShapeInferred { params, layers, hidden } => format!(
            "模型结构由 {:.2}B 参数推断（类 Llama：{layers} 层，隐藏维度 {hidden}）；选择预设模型可得到准确的激活/KV 显存",
            params / 1e9
        ),
        Moe { experts, experts_per_token, params, active_params } => format!(
            "混合专家模型（{experts} 个专家，每个 token 用 {experts_per_token} 个）：显存按全部 {:.1}B 参数计，耗时按每个 token 实际计算的 {:.1}B 参数计；未建模专家并行，Hugging Face transformers 逐个运行专家，MoE 训练常低于稠密模型的 MFU 区间",
            params / 1e9,
            active_params / 1e9
        ),
        MfuBands => "MFU 区间（占稠密 16 位峰值的比例；catalog-facts §5）：全量微调在单卡或 NVLink 上 35–50 %，仅 PCIe 互联的多卡 20–35 %；LoRA 25–35 %；QLoRA 15–25 %；没有 FlashAttention-2 的 Ampere 之前 GPU 10–25 %（QLoRA 10–20 %）；每个方案的区间见 time.mfu".into(),
        // Per-offer figures the ranking folds into each offer's numbers (`time.mfu`, `fit.zero_stage`,
        // the decode band) and never lists (gpuctl-core's `rank`; `page_lists_no_per_offer_assumption`
        // holds it): the page has no place that shows them, so they carry no Chinese text here.
        Mfu { .. } | DataParallel { .. } | InferenceDecode { .. } => a.to_string(),
        InferenceTime => "推理耗时：解码受显存带宽限制，每步以峰值显存带宽的 30–70 % 读取一遍权重（输出层为 16 位），另加每层固定时间（vLLM、SGLang 等推理服务引擎 30–60 µs，GPTQ/AWQ 权重 60–180 µs；Hugging Face transformers 500–1000 µs，GPTQ/AWQ 500–1400 µs，MoE 层每个专家另加 60–100 µs，与读取权重并行，取两者中较长者）；不计提示词处理".into(),
        TermBilling => "包周期计费按任务跨越的日历时间（工作小时 ÷ 每天使用小时数）计整期；按量和竞价按工作小时计费".into(),
        OneInstancePerOffer => "每个方案一台实例，注明 N 个节点的除外；每种实例规格和计费方式取有实测价格的最便宜地域，没有时取最便宜的估算".into(),
        Clusters { link_low_pct, link_high_pct, rdma_low_pct, rdma_high_pct, sequences_per_step, slow_link_gbps } => format!(
            "N 个节点：同一可用区、同一子网内 N 台同规格实例，按同一方式计费。一个节点放得下时，ZeRO/FSDP 在节点内切分、每个节点一份副本（混合切分）：只有可训练参数的梯度走网络，每个优化步（至少 {sequences_per_step:.0} 条序列，靠梯度累积）一次 all-reduce。放不下时，ZeRO/FSDP 在所有节点的所有 GPU 上切分，阶段 3 时每次前向和反向都经网络 all-gather 权重。目录给出 RDMA 端口速率的规格，节点间按其 {rdma_low_pct:.0}–{rdma_high_pct:.0} % 计，其余按公开的内网带宽的 {link_low_pct:.0}–{link_high_pct:.0} % 计（NCCL 走 TCP）；最快：网络时间全部被计算掩盖，最慢：完全不掩盖。低于 {slow_link_gbps:.0} Gbit/s 的方案会标出"
        ),
        SpotRestarts { reclaims_per_day, checkpoint_every_hours, restart_hours } => format!(
            "竞价实例：每台实例每运行一天被回收 {reclaims_per_day} 次（输入值：各云均未公布回收率），每次损失半个检查点间隔（{checkpoint_every_hours} 小时 ÷ 2）加 {restart_hours} 小时重启；预期重启次数 = 小时数 × 回收率 × 节点数，计入竞价方案的小时数和费用"
        ),
        ValidateShare { pct } => format!("验证阶段用 QLoRA-4、按量计费跑 {pct:.0} % 的 token"),
        ProduceDays { days } => format!("生产阶段每天 24 小时部署 {days} 天，16 位权重；不用竞价实例"),
        BuySameConfig => "用“购买相同配置”（gpuctl clone）把验证过的环境复制到下一阶段".into(),
        CloudPaysUsedHours => "云上按小时计费的方式只为用到的小时付费；包周期方式（包月、包年 1 年、3 年）全年占用 GPU".into(),
        SpotExcludedFromTco => "比较中不含竞价实例：它随时可能被回收".into(),
        SelfBuiltPower => "自建电费 = 服务器台数 × kW × (空闲功率占比 + (1 − 空闲功率占比) × 利用率) × PUE × 电价 × 8,760 小时".into(),
        DefaultCardPrice => "单卡 ¥11万：A100 80 GB PCIe 2023–24 年市场价 ¥9万–13万 区间的中值（catalog-facts §4，估算）".into(),
        DefaultServerPrice => "8 卡服务器（不含 GPU）每台 ¥15万：估算，无公开来源".into(),
        DefaultNetworkStorage => "网络与存储每个集群 ¥20万：估算，无公开来源".into(),
        DefaultDepreciation => "折旧 4 年：介于 3 年（GPU 换代周期）和 5 年（大型云厂商的服务器寿命）之间".into(),
        DefaultServerPower => "每台 8 × A100 服务器满载 3.4 kW（8 × 300 W + 主机），空闲时为其 30 %：NVIDIA 数据手册 + 估算".into(),
        DefaultPue => "PUE 1.4：介于新建枢纽数据中心（1.3）和一般托管机房（1.5）之间（catalog-facts §4）".into(),
        DefaultTariff => "¥0.8/kWh：东部沿海工商业电价 0.6–1.0（估算；西部枢纽 0.35–0.5）".into(),
        DefaultOps => "运维 ¥17.5万/年：0.5 名全成本 ¥35万/年 的 SRE（估算）".into(),
    }
}

/// Why an offer cannot run the job (by its stable code) in the page's language. Amounts follow the
/// language's CNY conventions in both languages; the rest of the English is the engine's own text.
pub fn reason(r: &gpuctl_core::Reason, lang: Lang) -> String {
    use crate::format::cny;
    use gpuctl_core::Reason::*;
    match (r, lang) {
        (OverBudget { cost_high, budget }, Lang::En) => {
            format!("over budget: {} (high estimate) > {}", cny(lang, *cost_high), cny(lang, *budget))
        }
        (_, Lang::En) => r.to_string(),
        (DoesNotFit { need_gb, vram_gb }, Lang::Zh) => {
            verdict(&gpuctl_core::Verdict::DoesNotFit { need_gb: *need_gb, vram_gb: *vram_gb }, lang)
        }
        // The catalog's note on why is English data; the code itself says what it means.
        (UnsuitableForTraining { gpu, .. }, Lang::Zh) => {
            format!("{gpu} 不适合训练：无法高效进行 FP16/混合精度训练")
        }
        (Incompatible { message }, Lang::Zh) => format!("软件不兼容：{message}"),
        (MissesDeadline { wall_hours, deadline_hours }, Lang::Zh) => {
            format!("赶不上截止期限：需 {wall_hours:.0} 小时日历时间（高估）> {deadline_hours:.0} 小时")
        }
        (NoPrice, Lang::Zh) => "所选地域和计费方式下没有已知价格".into(),
        (NoNetworkFigure, Lang::Zh) => "该规格没有公开的内网带宽：多节点耗时只能靠猜".into(),
        (OverBudget { cost_high, budget }, Lang::Zh) => {
            format!("超出预算：{}（高估）> {}", cny(lang, *cost_high), cny(lang, *budget))
        }
    }
}

/// A fit verdict in the page's language.
pub fn verdict(v: &gpuctl_core::Verdict, lang: Lang) -> String {
    use gpuctl_core::Verdict::*;
    match (v, lang) {
        (_, Lang::En) => v.to_string(),
        (Fits { need_gb, vram_gb }, Lang::Zh) => {
            format!(
                "每张 GPU 需要 {need_gb:.1} GB，有 {vram_gb:.0} GB：放得下（剩余 {:.1} GB）",
                vram_gb - need_gb
            )
        }
        (DoesNotFit { need_gb, vram_gb }, Lang::Zh) => {
            format!("每张 GPU 需要 {need_gb:.1} GB，只有 {vram_gb:.0} GB：放不下")
        }
    }
}

/// How old the prices are, in the page's language.
pub fn price_age(p: &gpuctl_core::PriceAge, lang: Lang) -> String {
    use gpuctl_core::PriceAge::*;
    match (p, lang) {
        (_, Lang::En) => p.to_string(),
        (Dated { oldest, newest, newest_days, oldest_days, today, overlaid }, Lang::Zh) => format!(
            "价格日期 {oldest} … {newest}（到 {today} 已有 {newest_days}–{oldest_days} 天）{}",
            if *overlaid { "；已叠加用户的价格文件" } else { "" }
        ),
        (NoPrices, Lang::Zh) => "目录中没有价格".into(),
    }
}

/// How many of the ranked prices are observed vs derived and how old the observed ones are, in the
/// page's language; `catalog refresh` is the way to today's prices.
pub fn evidence_mix(m: &gpuctl_core::EvidenceMix, today: gpuctl_core::Date, lang: Lang) -> String {
    match lang {
        Lang::En => m.line(today),
        Lang::Zh => {
            let observed = match (m.observed_oldest, m.observed_newest) {
                (Some(o), Some(n)) => format!(
                    "{} 个为实测（{o} … {n}，到 {today} 已有 {}–{} 天）",
                    m.observed,
                    today.duration_since(n).as_secs() / 86_400,
                    today.duration_since(o).as_secs() / 86_400
                ),
                _ => "0 个为实测".to_string(),
            };
            format!(
                "所列价格：{observed}，{} 个为推算，{} 个引自需求说明（未核实）；`gpuctl catalog refresh` 向各云取今日价格",
                m.derived, m.brief
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_language_picks_first_spoken() {
        let check = |prefs: &[&str], expected| {
            assert_eq!(Lang::from_browser(prefs.iter().copied()), expected, "{prefs:?}")
        };
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
            FullFineTuneMemory {
                bytes_per_param: 16.0,
                gb: 121.9,
                model: "qwen2.5-7b".into(),
                params: 7.62e9,
            },
            NoOfferFits,
            NoCloudPrice { gpu: "h800".into() },
            EstimatedCloudPrices,
            SlowNodeLink { gbps: 5.0 },
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

    /// Chinese text with no English left but names, units and formulas.
    fn assert_chinese(zh: &str) {
        assert!(zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "{zh}");
        for english in [
            "price",
            "spot",
            "the ",
            " of ",
            "needs",
            "estimate",
            "fit",
            "budget",
            "deadline",
            "days",
            "weights",
            "layers",
            "params",
            "memory",
            " per ",
            "inference",
            "server",
            "unsuitable",
            "training",
            "as of",
        ] {
            assert!(!zh.to_lowercase().contains(english), "{english:?} in {zh}");
        }
    }

    /// Every assumption, reason, verdict and price-age code reads in Chinese in the zh view and in the
    /// engine's own words in the en view (amounts in the en view in its CNY convention).
    /// The per-offer assumptions (MFU band, data parallel stage, decode band) have no Chinese text:
    /// the ranking folds them into each offer's figures and never lists them, and the page shows
    /// only the ranking's, the staged plan's and the TCO's lists. Held here over questions that would
    /// produce each of them (training on one and many GPUs, clusters, inference eager and served).
    #[test]
    fn page_lists_no_per_offer_assumption() {
        use gpuctl_core::{parse_date, preset, rank, stages, Assumption, Job, Method, Question, Runtime};
        let today = parse_date("2026-11-30").unwrap();
        let catalog = gpuctl_core::Catalog::shipped();
        let mut lists: Vec<Vec<Assumption>> = Vec::new();
        for (model, method, runtime) in [
            ("qwen2.5-7b", Method::Full, Runtime::Serving),
            ("qwen2.5-72b", Method::Lora, Runtime::Serving),
            ("qwen3-30b-a3b", Method::Inference, Runtime::Transformers),
            ("qwen2.5-7b", Method::Inference, Runtime::Serving),
        ] {
            let mut job = Job::new(preset(model).unwrap(), method);
            job.tokens = 1e9;
            job.runtime = runtime;
            let q = Question::new(job, today);
            lists.push(rank(catalog, &q).assumption_codes);
            lists.push(stages(catalog, &q).assumption_codes);
        }
        lists.push(gpuctl_core::TcoInput::default_assumption_codes());
        for a in lists.iter().flatten() {
            assert!(
                !matches!(
                    a,
                    Assumption::Mfu { .. }
                        | Assumption::DataParallel { .. }
                        | Assumption::InferenceDecode { .. }
                ),
                "the page would show {a:?} in English"
            );
        }
    }

    #[test]
    fn explanations_in_both_languages() {
        use gpuctl_core::{Assumption::*, Date, Method, Precision, PriceAge, Reason, Verdict};
        let assumptions = [
            FullMixedPrecision,
            FullPure16,
            Freeze { trainable_layers: 2, layers: 32, trainable_params: 0.4e9 },
            Adapters { method: Method::Lora, lora_rank: 8, adapter_params: 20e6 },
            Adapters { method: Method::Qlora8, lora_rank: 8, adapter_params: 20e6 },
            Adapters { method: Method::Qlora4, lora_rank: 8, adapter_params: 20e6 },
            InferenceMemory {
                precision: Precision::Int4,
                bytes_per_param: 0.515875,
                seq_len: 2048,
                batch: 4,
                devices: 2,
                output_tokens: 512,
            },
            Activations { seq_len: 2048, micro_batch: 1, checkpointing: true },
            Activations { seq_len: 2048, micro_batch: 1, checkpointing: false },
            FlashAttention,
            NoFlashAttention,
            Overhead { context_gb: 1.0, fragmentation_pct: 10.0 },
            Flops6,
            Flops4,
            AscendMfu,
            ShapeInferred { params: 7e9, layers: 32, hidden: 4096 },
            Moe { experts: 128, experts_per_token: 8, params: 30.5e9, active_params: 3.3e9 },
            MfuBands,
            InferenceTime,
            TermBilling,
            OneInstancePerOffer,
            Clusters {
                link_low_pct: 40.0,
                link_high_pct: 70.0,
                rdma_low_pct: 70.0,
                rdma_high_pct: 90.0,
                sequences_per_step: 64.0,
                slow_link_gbps: 10.0,
            },
            SpotRestarts { reclaims_per_day: 0.25, checkpoint_every_hours: 1.0, restart_hours: 0.25 },
            ValidateShare { pct: 1.0 },
            ProduceDays { days: 30.0 },
            BuySameConfig,
            CloudPaysUsedHours,
            SpotExcludedFromTco,
            SelfBuiltPower,
            DefaultCardPrice,
            DefaultServerPrice,
            DefaultNetworkStorage,
            DefaultDepreciation,
            DefaultServerPower,
            DefaultPue,
            DefaultTariff,
            DefaultOps,
        ];
        for a in &assumptions {
            assert_eq!(assumption(a, Lang::En), a.to_string());
            assert_chinese(&assumption(a, Lang::Zh));
        }

        let reasons = [
            Reason::DoesNotFit { need_gb: 128.26, vram_gb: 24.0 },
            Reason::UnsuitableForTraining { gpu: "NVIDIA P4".into(), note: "no tensor cores".into() },
            Reason::MissesDeadline { wall_hours: 61.2, deadline_hours: 48.0 },
            Reason::NoPrice,
            Reason::OverBudget { cost_high: 123_456.0, budget: 50_000.0 },
            Reason::NoNetworkFigure,
        ];
        for r in &reasons {
            assert_chinese(&reason(r, Lang::Zh));
        }
        assert_eq!(reason(&reasons[0], Lang::Zh), "每张 GPU 需要 128.3 GB，只有 24 GB：放不下");
        assert_eq!(reason(&reasons[4], Lang::Zh), "超出预算：¥12.35万（高估）> ¥5万");
        assert_eq!(reason(&reasons[4], Lang::En), "over budget: CN¥123,456 (high estimate) > CN¥50,000");
        assert_eq!(reason(&reasons[0], Lang::En), reasons[0].to_string());

        let fits = Verdict::Fits { need_gb: 10.04, vram_gb: 24.0 };
        assert_eq!(verdict(&fits, Lang::Zh), "每张 GPU 需要 10.0 GB，有 24 GB：放得下（剩余 14.0 GB）");
        assert_eq!(verdict(&fits, Lang::En), fits.to_string());

        let age = PriceAge::Dated {
            oldest: Date::constant(2026, 6, 15),
            newest: Date::constant(2026, 11, 20),
            newest_days: 10,
            oldest_days: 168,
            today: Date::constant(2026, 11, 30),
            overlaid: false,
        };
        assert_eq!(
            price_age(&age, Lang::Zh),
            "价格日期 2026-06-15 … 2026-11-20（到 2026-11-30 已有 10–168 天）"
        );
        assert_eq!(price_age(&age, Lang::En), age.to_string());
        assert_chinese(&price_age(&PriceAge::NoPrices, Lang::Zh));
        // The evidence mix (issue 18): both languages carry the same counts and dates.
        let mix = gpuctl_core::EvidenceMix {
            observed: 3,
            brief: 1,
            derived: 9,
            observed_oldest: Some(Date::constant(2019, 1, 1)),
            observed_newest: Some(Date::constant(2026, 9, 24)),
        };
        let today = Date::constant(2026, 11, 30);
        assert_eq!(evidence_mix(&mix, today, Lang::En), mix.line(today));
        let zh = evidence_mix(&mix, today, Lang::Zh);
        assert!(zh.contains("3 个为实测（2019-01-01 … 2026-09-24，到 2026-11-30 已有 67–2890 天）"), "{zh}");
        assert!(zh.contains("9 个为推算") && zh.contains("1 个引自需求说明"), "{zh}");
        assert_chinese(&zh);
    }
}
