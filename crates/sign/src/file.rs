//! Reading a file a user named, with a bound (issue 13).
//!
//! Every file gpuctl reads from a user-given path — specs, `user_data_file`, price overlays,
//! credentials files, sim configs, `debug sign` requests — goes through [`read_bounded`] or
//! [`read_string_bounded`]. A size taken from metadata is not a bound: `/dev/zero` and `/proc` files
//! report 0 bytes and read forever, a FIFO with no writer blocks in open(2) itself, and a file can
//! grow between the check and the read. So:
//!
//! - the path's metadata must say "regular file" before it is opened (nothing else is opened at
//!   all: opening a device can have side effects);
//! - it is opened with `O_NONBLOCK`, so a FIFO swapped in after that check cannot block the open,
//!   and the opened file's own metadata is checked again (the check that cannot race);
//! - at most `limit + 1` bytes are read (`Read::take`): one byte more than the limit is a refusal
//!   that names the path and the limit, however the file lied about its size.
//!
//! It lives in gpuctl-sign because the credentials loader (here), the sim config (simkit), the
//! engine's spec parser (provision) and the CLI all need it, and sign is the lowest crate all of them
//! may depend on (ARCHITECTURE.md's crate graph).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Why a bounded read gave nothing. `Display` names the path; [`ReadError::reason`] is the same
/// without it, for callers whose message already names the file.
#[derive(Debug)]
pub enum ReadError {
    /// The path names something that is not a regular file (a FIFO, a device, a directory, a socket).
    NotRegular { path: PathBuf, what: &'static str },
    /// More than `limit` bytes. `len` is the size metadata gave when that alone was over the limit;
    /// `None` when the file only showed it while being read (a size metadata did not tell).
    TooLarge { path: PathBuf, len: Option<u64>, limit: u64 },
    /// Not UTF-8 (only from [`read_string_bounded`]); the first bad byte is at `valid_up_to`.
    NotUtf8 { path: PathBuf, valid_up_to: usize },
    /// The operating system's refusal (missing, no permission, …).
    Io { path: PathBuf, source: io::Error },
}

impl ReadError {
    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ReadError::NotRegular { path, .. }
            | ReadError::TooLarge { path, .. }
            | ReadError::NotUtf8 { path, .. }
            | ReadError::Io { path, .. } => path,
        }
    }

    /// True when the file does not exist (callers that treat a missing file as "not configured").
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    /// The message without the path.
    pub fn reason(&self) -> String {
        match self {
            ReadError::NotRegular { what, .. } => format!("it is {what}, not a regular file"),
            ReadError::TooLarge { len, limit, .. } => {
                format!("it is {} bytes; at most {limit} are accepted", size_words(*len, *limit))
            }
            ReadError::NotUtf8 { valid_up_to, .. } => {
                format!("it is not valid UTF-8 (the first bad byte is at offset {valid_up_to})")
            }
            ReadError::Io { source, .. } => source.to_string(),
        }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path().display(), self.reason())
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A too-large file's size for "… bytes" messages: what metadata said, or "more than <limit>" when the
/// file only showed it while being read ([`ReadError::TooLarge`]'s `len`).
pub fn size_words(len: Option<u64>, limit: u64) -> String {
    len.map_or_else(|| format!("more than {limit}"), |n| n.to_string())
}

/// The kind of a non-regular file, in words, for the refusal.
fn what(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// The bytes of the regular file at `path`, at most `limit` of them; anything else is refused.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let io_err = |source| ReadError::Io { path: path.to_path_buf(), source };
    let refuse = |meta: &std::fs::Metadata| -> Result<(), ReadError> {
        if !meta.file_type().is_file() {
            return Err(ReadError::NotRegular { path: path.to_path_buf(), what: what(meta.file_type()) });
        }
        if meta.len() > limit {
            return Err(ReadError::TooLarge { path: path.to_path_buf(), len: Some(meta.len()), limit });
        }
        Ok(())
    };
    // Before opening: a FIFO would block in open(2), a device may act on being opened.
    refuse(&std::fs::metadata(path).map_err(io_err)?)?;
    let file = open_nonblocking(path).map_err(io_err)?;
    // The opened file itself: the path may have been replaced since the check above.
    refuse(&file.metadata().map_err(io_err)?)?;
    read_all_bounded(file, path, limit)
}

/// At most `limit` bytes from a stream that is already open (a file checked above, or stdin), read
/// as `limit + 1` so that one byte more is a refusal; `name` is what errors call it.
pub fn read_all_bounded(reader: impl Read, name: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| ReadError::Io { path: name.to_path_buf(), source })?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { path: name.to_path_buf(), len: None, limit });
    }
    Ok(bytes)
}

/// Bytes read by the functions above, as UTF-8 text.
pub fn into_text(bytes: Vec<u8>, name: &Path) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|e| ReadError::NotUtf8 {
        path: name.to_path_buf(),
        valid_up_to: e.utf8_error().valid_up_to(),
    })
}

/// [`read_bounded`], as UTF-8 text.
pub fn read_string_bounded(path: &Path, limit: u64) -> Result<String, ReadError> {
    into_text(read_bounded(path, limit)?, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_small_regular_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "hello").unwrap();
        assert_eq!(read_bounded(&p, 5).unwrap(), b"hello");
        assert_eq!(read_string_bounded(&p, 100).unwrap(), "hello");
        std::fs::write(&p, "").unwrap();
        assert_eq!(read_bounded(&p, 0).unwrap(), b"");
    }

    #[test]
    fn one_byte_over_the_limit_is_refused_with_the_path_and_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.toml");
        std::fs::write(&p, "123456").unwrap();
        let e = read_bounded(&p, 5).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge { len: Some(6), limit: 5, .. }), "{e:?}");
        let shown = e.to_string();
        assert!(shown.contains("big.toml") && shown.contains("6 bytes; at most 5"), "{shown}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_whose_metadata_says_nothing_is_still_bounded() {
        // /proc files report a length of 0 and then produce bytes: only the read's bound holds.
        let e = read_bounded(Path::new("/proc/self/maps"), 8).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge { len: None, limit: 8, .. }), "{e:?}");
        assert!(e.to_string().contains("more than 8 bytes"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_refused_without_reading() {
        let start = Instant::now();
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(matches!(e, ReadError::NotRegular { what: "a character device", .. }), "{e:?}");
        assert!(e.to_string().starts_with("/dev/zero: it is a character device"), "{e}");
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_with_no_writer_is_refused_promptly() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pipe");
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let start = Instant::now();
        let e = read_bounded(&p, 100).unwrap_err();
        assert!(matches!(e, ReadError::NotRegular { what: "a FIFO (named pipe)", .. }), "{e:?}");
        assert!(start.elapsed() < Duration::from_secs(5));
        // Opened directly, O_NONBLOCK keeps the open itself from waiting for a writer.
        let f = open_nonblocking(&p).unwrap();
        assert!(!f.metadata().unwrap().file_type().is_file());
    }

    #[test]
    fn a_directory_a_missing_file_and_bad_utf8_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_bounded(dir.path(), 10).unwrap_err();
        assert!(e.reason() == "it is a directory, not a regular file", "{e}");
        let missing = dir.path().join("nope");
        let e = read_bounded(&missing, 10).unwrap_err();
        assert!(e.is_not_found() && e.to_string().contains("nope"), "{e}");
        let bad = dir.path().join("bad");
        std::fs::write(&bad, b"ok\xff").unwrap();
        let e = read_string_bounded(&bad, 10).unwrap_err();
        assert!(matches!(e, ReadError::NotUtf8 { valid_up_to: 2, .. }), "{e:?}");
        assert!(!e.is_not_found());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_to_a_regular_file_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t");
        std::fs::write(&target, "x").unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(read_bounded(&link, 1).unwrap(), b"x");
        let dev = dir.path().join("d");
        std::os::unix::fs::symlink("/dev/zero", &dev).unwrap();
        assert!(matches!(read_bounded(&dev, 1).unwrap_err(), ReadError::NotRegular { .. }));
    }
}
