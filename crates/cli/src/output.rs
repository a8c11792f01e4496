//! Output shared by every command: tables (comfy-table), `--json`, money and number formatting,
//! and the two inputs every engine call needs from the outside world — the catalog (shipped data
//! plus the user's price overlay file) and today's date (the engine reads no clock).

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use gpuctl_core::{Catalog, Date};
use serde::Serialize;

use crate::cmd::CliError;

/// Environment variable naming a price overlay file (same as `--overlay`).
pub const OVERLAY_ENV: &str = "GPUCTL_PRICE_OVERLAY";
/// Environment variable pinning "today" (YYYY-MM-DD) for reproducible output in scripts and tests.
pub const TODAY_ENV: &str = "GPUCTL_TODAY";

/// The first error writing stdout, if any: set by [`write_out`], read by `main` at exit.
static STDOUT_ERROR: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Writes to stdout for [`outln!`] and [`out!`] — never panics, as `println!` does when stdout is
/// gone. A reader that went away (`gpuctl catalog models | head`) is no reason to stop a command
/// half way: a provision or destroy that was printing its progress goes on to the end, and records
/// what it did; nothing more is printed after the first failed write. Any other failure (a full
/// disk under `> out.json`) makes the command exit non-zero once its work is done ([`stdout_error`]).
pub fn write_out(args: std::fmt::Arguments<'_>) {
    let mut failed = STDOUT_ERROR.lock().unwrap_or_else(|e| e.into_inner());
    if failed.is_some() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        *failed = Some(e);
    }
}

/// Why stdout could not be written, unless it was only that its reader closed the pipe early
/// (the usual `| head`: not an error, as with any Unix tool).
pub fn stdout_error() -> Option<String> {
    let failed = STDOUT_ERROR.lock().unwrap_or_else(|e| e.into_inner());
    failed
        .as_ref()
        .filter(|e| e.kind() != std::io::ErrorKind::BrokenPipe)
        .map(|e| format!("writing the output: {e}"))
}

/// `println!` for command output, through [`write_out`].
#[macro_export]
macro_rules! outln {
    () => { $crate::output::write_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` for command output, through [`write_out`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write_out(format_args!($($arg)*)) };
}

/// A table with the project's look; columns wrap to the terminal.
pub fn table<I, S>(header: I) -> Table
where
    I: IntoIterator<Item = S>,
    S: Into<comfy_table::Cell>,
{
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header);
    t
}

/// Print `value` as pretty JSON on stdout.
/// Writes a file the user asked for, whole or not at all: a sibling temporary file renamed into
/// place, and an existing file is never replaced unless `overwrite` (so a typo cannot lose a spec).
pub fn write_new_file(path: &std::path::Path, text: &str, overwrite: bool) -> Result<(), CliError> {
    if !overwrite && std::fs::symlink_metadata(path).is_ok() {
        return Err(CliError::usage(format!(
            "{} exists; choose another file or pass --overwrite",
            path.display()
        )));
    }
    let name =
        path.file_name().ok_or_else(|| CliError::usage(format!("{} is not a file name", path.display())))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::options().write(true).create_new(true).open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if overwrite {
            std::fs::rename(&tmp, path)
        } else {
            // A hard link fails if `path` appeared meanwhile, where a rename would replace it.
            std::fs::hard_link(&tmp, path)?;
            std::fs::remove_file(&tmp)
        }
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        CliError::failed(format!("cannot write {}: {e}", path.display()))
    })
}

pub fn print_json<T: Serialize>(value: &T) -> Result<(), CliError> {
    let s = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::failed(format!("could not write JSON: {e}")))?;
    crate::outln!("{s}");
    Ok(())
}

/// ¥ for people: "¥9.74" below 100, "¥12,346" above.
pub fn cny(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    format!("¥{}", gpuctl_core::money(v))
}

/// A low–high range, collapsing equal ends: "12–15" or "12".
pub fn range(lo: f64, hi: f64, fmt: impl Fn(f64) -> String) -> String {
    let (a, b) = (fmt(lo), fmt(hi));
    if a == b {
        a
    } else {
        format!("{a}–{b}")
    }
}

/// Hours for people: "45 min", "12.5 h", "3.2 d".
pub fn hours(h: f64) -> String {
    if h < 1.0 {
        format!("{:.0} min", h * 60.0)
    } else if h < 72.0 {
        format!("{h:.1} h")
    } else {
        format!("{:.1} d", h / 24.0)
    }
}

/// Today's date: `GPUCTL_TODAY` if set, else the local calendar date.
pub fn today() -> Result<Date, CliError> {
    match std::env::var(TODAY_ENV) {
        Ok(s) => gpuctl_core::parse_date(&s).map_err(|e| CliError::usage(format!("{TODAY_ENV}: {e}"))),
        Err(_) => Ok(jiff::Zoned::now().date()),
    }
}

/// Where the price overlay lives when no `--overlay` is given: `GPUCTL_PRICE_OVERLAY`, else
/// `$XDG_CONFIG_HOME/gpuctl/prices.toml` (`~/.config/gpuctl/prices.toml`), where
/// `gpuctl catalog refresh` writes by default.
pub fn overlay_path() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    var(OVERLAY_ENV).or_else(|| {
        var("XDG_CONFIG_HOME")
            .or_else(|| var("HOME").map(|h| h.join(".config")))
            .map(|d| d.join("gpuctl/prices.toml"))
    })
}

/// The most a price overlay may hold. The shipped catalog's data is ~60 KiB; 16 MiB leaves room for
/// any overlay `refresh` or a person writes and keeps `/dev/zero` from being read forever.
pub const MAX_OVERLAY_BYTES: u64 = 16 << 20;

/// The catalog, with the overlay from `--overlay` or `GPUCTL_PRICE_OVERLAY` applied when given, else
/// the default overlay file when it exists. Without an overlay it is the shipped catalog itself,
/// borrowed rather than copied (a command's start-up, issue 11).
pub fn load_catalog(overlay: Option<&Path>) -> Result<Cow<'static, Catalog>, CliError> {
    let explicit = overlay
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os(OVERLAY_ENV).filter(|v| !v.is_empty()).map(PathBuf::from));
    let path = match explicit {
        Some(p) => p,
        None => match overlay_path().filter(|p| p.is_file()) {
            Some(p) => p,
            None => return Ok(Cow::Borrowed(Catalog::shipped())),
        },
    };
    let text = gpuctl_sign::file::read_string_bounded(&path, MAX_OVERLAY_BYTES).map_err(|e| {
        CliError::usage(format!("cannot read price overlay {}: {}", path.display(), e.reason()))
    })?;
    Catalog::shipped()
        .with_overlay(&path.display().to_string(), &text)
        .map(Cow::Owned)
        .map_err(|e| CliError::usage(e.to_string()))
}

/// A person-facing error for an unknown name (closest names included).
pub fn unknown(e: gpuctl_core::UnknownName) -> CliError {
    CliError::usage(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        assert_eq!(cny(9.74), "¥9.74");
        assert_eq!(cny(4675.66), "¥4,676");
        assert_eq!(cny(1_230_000.0), "¥1,230,000");
        assert_eq!(cny(-1234.0), "¥-1,234");
        assert_eq!(range(1.0, 1.0, |v| format!("{v:.0}")), "1");
        assert_eq!(range(1.0, 2.0, |v| format!("{v:.0}")), "1–2");
        assert_eq!(hours(0.5), "30 min");
        assert_eq!(hours(100.0), "4.2 d");
    }
}
