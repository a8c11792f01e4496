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
    SUBTITLE: "Which GPU instance, billed how, for how long, at what cost — Tencent Cloud, Alibaba Cloud, JD Cloud.",
        "选哪种 GPU 实例、怎么计费、要多久、花多少钱 —— 腾讯云、阿里云、京东云。";
    LANGUAGE: "Language", "语言";
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
}
