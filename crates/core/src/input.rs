//! The bounds of a job question's numbers, checked once for everyone who asks: the CLI's `estimate`
//! flags and the browser calculator's fields both call these, so a value one refuses the other refuses
//! too, for the same reason. Each refusal is an [`InputError`], a stable code with its parameters
//! (`docs/json.md`, "Input error codes") whose `Display` is the English text; the page words the code
//! in Chinese. Parsing text into a number (`50M`, `3d`) stays with `units`; this module judges the
//! number.

use std::fmt;

use serde::Serialize;

/// The shortest and longest sequence length (tokens) the engine's memory model is meant for.
pub const SEQ_LEN_MIN: u32 = 16;
pub const SEQ_LEN_MAX: u32 = 1 << 20;
/// The most GPUs one instance has in the catalog's world (8 is common, 16 the largest sold).
pub const GPUS_MAX: u32 = 16;
/// The most epochs a question may ask for.
pub const EPOCHS_MAX: f64 = 1000.0;
/// The longest use a question may price: three years, the longest term sold.
pub const DAYS_MAX: f64 = 3.0 * 365.0;
/// The smallest model the engine estimates (below this the fixed overheads are all there is).
pub const PARAMS_MIN: f64 = 1e6;

/// Why a number of a job question is refused. Codes are added, never renamed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum InputError {
    /// Sequence length outside `min..=max` or not whole.
    SeqLenOutOfRange { min: u32, max: u32 },
    /// GPUs per instance outside `1..=max` or not whole.
    GpusOutOfRange { max: u32 },
    /// Epochs not in `(0, max]`.
    EpochsOutOfRange { max: f64 },
    /// Hours per day not in `(0, 24]`.
    HoursPerDayOutOfRange,
    /// Days of use not in `(0, max_days]`.
    DaysOutOfRange { max_days: f64 },
    /// Tokens negative or not finite.
    TokensNegative,
    /// A deadline of 0 (or less, or not finite).
    DeadlineNotPositive,
    /// A budget of ¥0 (or less, or not finite).
    BudgetNotPositive,
    /// Fewer parameters than a model has.
    ParamsTooFew { min: f64 },
    /// Inference output tokens more than the sequence length they are part of.
    OutputTokensOverSeqLen { seq_len: u32 },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::SeqLenOutOfRange { min, max } => {
                write!(f, "sequence length must be a whole number from {min} to {}", count(f64::from(*max)))
            }
            InputError::GpusOutOfRange { max } => {
                write!(f, "GPUs per instance must be a whole number from 1 to {max}")
            }
            InputError::EpochsOutOfRange { max } => write!(f, "epochs must be more than 0 and at most {max}"),
            InputError::HoursPerDayOutOfRange => {
                write!(f, "hours per day must be more than 0 and at most 24")
            }
            InputError::DaysOutOfRange { max_days } => {
                write!(f, "days must be more than 0 and at most {}", years(*max_days))
            }
            InputError::TokensNegative => write!(f, "tokens must be 0 or more"),
            InputError::DeadlineNotPositive => write!(f, "the deadline must be more than 0 days"),
            InputError::BudgetNotPositive => write!(f, "the budget must be a positive amount of ¥"),
            InputError::ParamsTooFew { min } => {
                write!(f, "a model has at least {} parameters (write 7b for 7 billion)", count(*min))
            }
            InputError::OutputTokensOverSeqLen { seq_len } => write!(
                f,
                "output tokens are the last part of the sequence: a whole number from 0 to the sequence length, {seq_len}"
            ),
        }
    }
}

impl std::error::Error for InputError {}

/// A count as a person writes it: `1M` for 2^20 or 10^6 (the page's inputs take both), else digits.
fn count(v: f64) -> String {
    if v == f64::from(SEQ_LEN_MAX) {
        "1M".to_string()
    } else if v >= 1e6 && v % 1e6 == 0.0 {
        format!("{}M", v / 1e6)
    } else {
        format!("{v}")
    }
}

fn years(days: f64) -> String {
    let y = days / 365.0;
    if y.fract() == 0.0 {
        format!("{y} years")
    } else {
        format!("{days} days")
    }
}

fn whole_in(v: f64, min: f64, max: f64) -> bool {
    (min..=max).contains(&v) && v.fract() == 0.0
}

/// Tokens per sequence: a whole number from `SEQ_LEN_MIN` to `SEQ_LEN_MAX`.
pub fn seq_len(v: f64) -> Result<u32, InputError> {
    if whole_in(v, f64::from(SEQ_LEN_MIN), f64::from(SEQ_LEN_MAX)) {
        Ok(v as u32)
    } else {
        Err(InputError::SeqLenOutOfRange { min: SEQ_LEN_MIN, max: SEQ_LEN_MAX })
    }
}

/// Inference output tokens per sequence: a whole number from 0 to the sequence length (prompt +
/// output), of which they are the last part.
pub fn output_tokens(v: f64, seq_len: u32) -> Result<u32, InputError> {
    if whole_in(v, 0.0, f64::from(seq_len)) {
        Ok(v as u32)
    } else {
        Err(InputError::OutputTokensOverSeqLen { seq_len })
    }
}

/// GPUs per instance: a whole number from 1 to `GPUS_MAX`.
pub fn gpus(v: f64) -> Result<u32, InputError> {
    if whole_in(v, 1.0, f64::from(GPUS_MAX)) {
        Ok(v as u32)
    } else {
        Err(InputError::GpusOutOfRange { max: GPUS_MAX })
    }
}

/// Passes over the data: more than 0, at most `EPOCHS_MAX`.
pub fn epochs(v: f64) -> Result<f64, InputError> {
    if v > 0.0 && v <= EPOCHS_MAX {
        Ok(v)
    } else {
        Err(InputError::EpochsOutOfRange { max: EPOCHS_MAX })
    }
}

/// Hours of GPU use per calendar day: more than 0, at most 24.
pub fn hours_per_day(v: f64) -> Result<f64, InputError> {
    if v > 0.0 && v <= 24.0 {
        Ok(v)
    } else {
        Err(InputError::HoursPerDayOutOfRange)
    }
}

/// Calendar days of use: more than 0, at most `DAYS_MAX`.
pub fn days(v: f64) -> Result<f64, InputError> {
    if v > 0.0 && v <= DAYS_MAX {
        Ok(v)
    } else {
        Err(InputError::DaysOutOfRange { max_days: DAYS_MAX })
    }
}

/// Training tokens per epoch: 0 (no training data: inference, or "not said") or more.
pub fn tokens(v: f64) -> Result<f64, InputError> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(InputError::TokensNegative)
    }
}

/// A deadline (in any unit; the caller's): more than 0.
pub fn deadline(v: f64) -> Result<f64, InputError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(InputError::DeadlineNotPositive)
    }
}

/// A budget in ¥: more than 0.
pub fn budget_cny(v: f64) -> Result<f64, InputError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(InputError::BudgetNotPositive)
    }
}

/// A model's parameter count: at least `PARAMS_MIN`.
pub fn params(v: f64) -> Result<f64, InputError> {
    if v.is_finite() && v >= PARAMS_MIN {
        Ok(v)
    } else {
        Err(InputError::ParamsTooFew { min: PARAMS_MIN })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        assert_eq!(seq_len(2048.0), Ok(2048));
        assert_eq!(seq_len(16.0), Ok(16));
        assert_eq!(seq_len(1_048_576.0), Ok(1 << 20));
        for bad in [8.0, 15.0, 2048.5, 1_048_577.0, f64::NAN, f64::INFINITY] {
            assert!(seq_len(bad).is_err(), "{bad}");
        }
        assert_eq!(gpus(8.0), Ok(8));
        for bad in [0.0, 1.5, 17.0, -1.0, f64::NAN] {
            assert!(gpus(bad).is_err(), "{bad}");
        }
        assert!(epochs(0.5).is_ok() && epochs(1000.0).is_ok());
        for bad in [0.0, -1.0, 1000.5, f64::NAN, f64::INFINITY] {
            assert!(epochs(bad).is_err(), "{bad}");
        }
        assert!(hours_per_day(24.0).is_ok() && hours_per_day(0.5).is_ok());
        assert!(
            hours_per_day(0.0).is_err() && hours_per_day(25.0).is_err() && hours_per_day(f64::NAN).is_err()
        );
        assert!(
            days(1095.0).is_ok() && days(1096.0).is_err() && days(0.0).is_err() && days(f64::NAN).is_err()
        );
        assert!(tokens(0.0).is_ok() && tokens(-1.0).is_err() && tokens(f64::INFINITY).is_err());
        assert!(deadline(0.1).is_ok() && deadline(0.0).is_err() && deadline(f64::INFINITY).is_err());
        assert!(budget_cny(1.0).is_ok() && budget_cny(0.0).is_err() && budget_cny(f64::NAN).is_err());
        assert!(params(7e9).is_ok() && params(7.0).is_err());
    }

    /// The English texts are what the page showed before the rules moved here.
    #[test]
    fn english_texts() {
        let text = |r: Result<f64, InputError>| r.unwrap_err().to_string();
        assert_eq!(
            seq_len(8.0).unwrap_err().to_string(),
            "sequence length must be a whole number from 16 to 1M"
        );
        assert_eq!(
            gpus(1.5).unwrap_err().to_string(),
            "GPUs per instance must be a whole number from 1 to 16"
        );
        assert_eq!(text(epochs(0.0)), "epochs must be more than 0 and at most 1000");
        assert_eq!(text(hours_per_day(25.0)), "hours per day must be more than 0 and at most 24");
        assert_eq!(text(days(0.0)), "days must be more than 0 and at most 3 years");
        assert_eq!(text(deadline(0.0)), "the deadline must be more than 0 days");
        assert_eq!(text(params(7.0)), "a model has at least 1M parameters (write 7b for 7 billion)");
        assert_eq!(text(budget_cny(0.0)), "the budget must be a positive amount of ¥");
    }

    #[test]
    fn codes_carry_their_parameters() {
        let j = serde_json::to_value(seq_len(1.0).unwrap_err()).unwrap();
        assert_eq!(j, serde_json::json!({ "code": "seq-len-out-of-range", "min": 16, "max": 1_048_576 }));
        let j = serde_json::to_value(days(0.0).unwrap_err()).unwrap();
        assert_eq!(j, serde_json::json!({ "code": "days-out-of-range", "max_days": 1095.0 }));
    }
}
