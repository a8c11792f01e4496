//! Closest valid names for a typo ("did you mean …"), so errors tell people what to type, and the
//! error that carries them ([`UnknownName`]). It lives here, not beside any one kind of name, so the
//! modules that parse names (catalog, model, method) depend on this leaf and not on each other.

use serde::Serialize;

/// A name that matched nothing, with the closest valid names.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[error("unknown {kind} '{given}'{}", did_you_mean(.suggestions))]
pub struct UnknownName {
    pub kind: String,
    pub given: String,
    pub suggestions: Vec<String>,
}

impl UnknownName {
    /// Nothing close among a few names (methods, runtimes, billing modes): all of them are the
    /// suggestions, so the error still says what to type.
    pub fn new<'a>(kind: &str, given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Self {
        let candidates: Vec<&str> = candidates.into_iter().collect();
        let mut suggestions = suggest(given, candidates.iter().copied());
        if suggestions.is_empty() && candidates.len() <= FEW {
            suggestions = candidates.iter().map(|c| c.to_string()).collect();
        }
        UnknownName { kind: kind.to_string(), given: given.to_string(), suggestions }
    }
}

/// At most this many candidates are all listed when none is close.
const FEW: usize = 8;

/// Up to three candidates closest to `given`, best first. Case, `-`, `_`, `.` and spaces are ignored;
/// a candidate that contains the input (or is contained in it) counts as close.
pub fn suggest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let norm = |s: &str| s.to_ascii_lowercase().replace(['-', '_', '.', ' '], "");
    let g = norm(given);
    let mut scored: Vec<(f64, String)> = candidates
        .into_iter()
        .filter_map(|c| {
            let n = norm(c);
            let mut score = strsim::jaro_winkler(&g, &n);
            if !g.is_empty() && (n.contains(&g) || g.contains(&n)) {
                score = score.max(0.9);
            }
            (score >= 0.75).then(|| (score, c.to_string()))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

/// "; did you mean a, b or c?" or "" when there is nothing close.
pub fn did_you_mean(suggestions: &[String]) -> String {
    match suggestions {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        [init @ .., last] => format!("; did you mean {} or {last}?", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(given: &str, candidates: &[&str], expected: &[&str]) {
        assert_eq!(suggest(given, candidates.iter().copied()), expected, "suggest({given})");
    }

    #[test]
    fn typos_find_the_intended_name() {
        let gpus = ["t4", "a10", "a100-sxm4-40g", "a100-sxm4-80g", "v100-sxm2-32g", "h800", "l20"];
        check("a1O", &gpus, &["a10"]);
        check("A100", &gpus, &["a10", "a100-sxm4-40g", "a100-sxm4-80g"]);
        check("h80", &gpus, &["h800"]);
        check("zzz", &gpus, &[]);
        // Nothing close among a few: all of them, so the error says what is allowed.
        let e = UnknownName::new("runtime", "onnx", ["serving", "transformers"]);
        assert_eq!(e.suggestions, ["serving", "transformers"]);
        assert!(UnknownName::new("gpu", "zzz", gpus.iter().copied().chain(["x", "y"]))
            .suggestions
            .is_empty());
        let models = ["qwen2.5-7b", "qwen2.5-14b", "llama-2-7b", "mistral-7b"];
        check("qwen-7b", &models, &["qwen2.5-7b", "qwen2.5-14b"]);
        check("lama2-7b", &models, &["llama-2-7b"]);
    }

    #[test]
    fn did_you_mean_reads_well() {
        assert_eq!(did_you_mean(&[]), "");
        assert_eq!(did_you_mean(&["a".into()]), "; did you mean a?");
        assert_eq!(did_you_mean(&["a".into(), "b".into(), "c".into()]), "; did you mean a, b or c?");
    }
}
