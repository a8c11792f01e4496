//! Fuzz the spec parser on arbitrary text (and, through the seed corpus, on TOML that is almost a spec).
//! Properties: never panics; every error has a line and column inside the text (1-based; line 0 only
//! for whole-file problems); the number of messages is bounded by `max_errors` + the summary line;
//! no message is longer than a few hundred bytes more than the text asked for (no echo of huge input).
#![no_main]

use gpuctl_provision::spec::{parse, Limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let limits = Limits::default();
    if let Err(errors) = parse("f.toml", text, None, &limits) {
        assert!(errors.0.len() <= limits.max_errors + 1, "{} errors", errors.0.len());
        let lines = text.split('\n').count().max(1);
        for e in &errors.0 {
            assert!(e.line >= 1 && e.line <= lines, "line {} of {lines}: {}", e.line, e.message);
            assert!(e.column >= 1, "column 0: {}", e.message);
            assert!(e.message.len() < 4096, "a {}-byte message", e.message.len());
        }
    }
});
