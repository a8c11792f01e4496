//! Owns loading credentials (the only I/O in this crate): the clouds' own environment variables,
//! then their CLIs' files, then gpuctl's own `credentials.toml`. The signer never reads files; it
//! takes a `Credentials`. Everything here takes an `Env` (variables + home directory) so tests
//! run against temporary homes without touching the process environment.
//!
//! Where each cloud keeps keys:
//! - Tencent: `TENCENTCLOUD_SECRET_ID` / `TENCENTCLOUD_SECRET_KEY` (+ `TENCENTCLOUD_SECURITY_TOKEN`),
//!   tccli's `~/.tccli/<profile>.credential` (JSON `secretId`, `secretKey`, optional `token`).
//! - Alibaba: `ALIBABA_CLOUD_ACCESS_KEY_ID` / `ALIBABA_CLOUD_ACCESS_KEY_SECRET`
//!   (+ `ALIBABA_CLOUD_SECURITY_TOKEN`), the aliyun CLI's `~/.aliyun/config.json` (`current` and
//!   `profiles[]` with `mode` `AK` or `StsToken`); `ALIBABA_CLOUD_PROFILE` picks a profile.
//! - JD Cloud: `JDCLOUD_ACCESS_KEY` / `JDCLOUD_SECRET_KEY` (the names JD's Terraform provider
//!   reads; JD's Python SDK reads none), the jdc CLI's `~/.jdc/config` (INI sections with
//!   `access_key`, `secret_key`) with the profile named in `~/.jdc/current`.
//! - gpuctl: `$XDG_CONFIG_HOME/gpuctl/credentials.toml` (default `~/.config/gpuctl/…`), one
//!   table per profile and cloud: `[default.tencent] access_key_id = "…" access_key_secret = "…"`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::file::{read_string_bounded, ReadError};
use crate::secret::{Credentials, Secret};

/// The clouds are named once, in gpuctl-clouds; credentials are looked up per [`Provider`].
pub use gpuctl_clouds::Provider;

/// (key id, secret, session token) environment variables of a cloud. Token names: Alibaba's from its
/// credentials SDK; Tencent's is the one its Terraform provider reads (the Python SDK reads no token
/// variable); JD has none.
fn env_names(cloud: Provider) -> (&'static str, &'static str, Option<&'static str>) {
    match cloud {
        Provider::Tencent => {
            ("TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY", Some("TENCENTCLOUD_SECURITY_TOKEN"))
        }
        Provider::Alibaba => (
            "ALIBABA_CLOUD_ACCESS_KEY_ID",
            "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
            Some("ALIBABA_CLOUD_SECURITY_TOKEN"),
        ),
        Provider::JdCloud => ("JDCLOUD_ACCESS_KEY", "JDCLOUD_SECRET_KEY", None),
    }
}

/// The environment credentials are looked up in.
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub vars: BTreeMap<String, String>,
    pub home: Option<PathBuf>,
}

impl Env {
    /// The real process environment and `$HOME`.
    pub fn from_process() -> Self {
        let vars: BTreeMap<String, String> = std::env::vars().collect();
        let home = vars.get("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        Self { vars, home }
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }

    fn home_file(&self, rel: &str) -> Option<PathBuf> {
        self.home.as_ref().map(|h| h.join(rel))
    }

    /// gpuctl's own credentials file.
    pub fn gpuctl_credentials_path(&self) -> Option<PathBuf> {
        match self.var("XDG_CONFIG_HOME") {
            Some(x) => Some(Path::new(x).join("gpuctl/credentials.toml")),
            None => self.home_file(".config/gpuctl/credentials.toml"),
        }
    }
}

/// Where the credentials came from (printed by `gpuctl` so users know which key is in use).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    EnvVars { id_var: &'static str, secret_var: &'static str },
    File { path: PathBuf, profile: String },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::EnvVars { id_var, secret_var } => {
                write!(f, "environment variables {id_var}/{secret_var}")
            }
            Source::File { path, profile } => write!(f, "{} (profile {profile:?})", path.display()),
        }
    }
}

/// Credentials plus where they came from, the region the CLI config names (if any), and warnings
/// (such as a secrets file others can read).
#[derive(Clone, Debug)]
pub struct Loaded {
    pub credentials: Credentials,
    pub source: Source,
    pub region: Option<String>,
    pub warnings: Vec<String>,
}

/// Why credentials could not be loaded. Messages name files and fields, never values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialsError {
    #[error("no {cloud} credentials found; looked in: {}. Set {} and {}, or add a [{profile}.{cloud}] table to gpuctl's credentials.toml", looked.join(", "), env_names(*cloud).0, env_names(*cloud).1)]
    NotFound { cloud: Provider, profile: String, looked: Vec<String> },
    #[error("{path}:{line}:{column}: {message}")]
    Parse { path: String, line: usize, column: usize, message: String },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("{path}: cannot read: {message}")]
    Io { path: String, message: String },
}

/// Load `cloud`'s credentials. `profile` = None means: the cloud's own current/default profile,
/// and environment variables first. An explicit profile skips the environment variables (they
/// have no profile) and is looked up in the CLI file, then in gpuctl's file.
pub fn load(cloud: Provider, profile: Option<&str>, env: &Env) -> Result<Loaded, CredentialsError> {
    let mut looked = Vec::new();
    if profile.is_none() {
        let (id_var, secret_var, token_var) = env_names(cloud);
        looked.push(format!("${id_var}/${secret_var}"));
        if let (Some(id), Some(secret)) = (env.var(id_var), env.var(secret_var)) {
            let mut credentials = Credentials::new(id, secret);
            credentials.security_token = token_var.and_then(|t| env.var(t)).map(Secret::from);
            return Ok(Loaded {
                credentials,
                source: Source::EnvVars { id_var, secret_var },
                region: None,
                warnings: vec![],
            });
        }
    }
    let from_cli = match cloud {
        Provider::Tencent => tccli(profile, env, &mut looked)?,
        Provider::Alibaba => aliyun(profile, env, &mut looked)?,
        Provider::JdCloud => jdc(profile, env, &mut looked)?,
    };
    if let Some(found) = from_cli {
        return Ok(found);
    }
    if let Some(found) = gpuctl_file(cloud, profile.unwrap_or("default"), env, &mut looked)? {
        return Ok(found);
    }
    Err(CredentialsError::NotFound { cloud, profile: profile.unwrap_or("default").to_owned(), looked })
}

/// The most a credentials or CLI config file may hold (a handful of profiles is a few KiB); the bound
/// keeps `/dev/zero` or a FIFO given as HOME's file from hanging a command.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

/// A readable file, or None when it does not exist. Adds a warning when group/others can read it.
fn read_secret_file(
    path: &Path,
    looked: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Result<Option<String>, CredentialsError> {
    looked.push(path.display().to_string());
    match read_string_bounded(path, MAX_FILE_BYTES) {
        Ok(text) => {
            if let Some(w) = permission_warning(path) {
                warnings.push(w);
            }
            Ok(Some(text))
        }
        Err(e) if e.is_not_found() => Ok(None),
        // Only the error's kind: an OS message is harmless, but the reason never quotes content.
        Err(ReadError::Io { source, .. }) => {
            Err(CredentialsError::Io { path: path.display().to_string(), message: source.kind().to_string() })
        }
        Err(e) => Err(CredentialsError::Io { path: path.display().to_string(), message: e.reason() }),
    }
}

/// A side file (a region, a current-profile name): its absence or any trouble reading it is "not set".
fn read_side_file(path: &Path) -> Option<String> {
    read_string_bounded(path, MAX_FILE_BYTES).ok()
}

/// "…is readable by others" when a file holding secrets has any group/other permission bits.
pub fn permission_warning(path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Some(format!(
                "warning: {} holds secrets but is readable by group/others (mode {mode:03o}); run: chmod 600 {}",
                path.display(),
                path.display()
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    None
}

fn json_error(path: &Path, e: &serde_json::Error) -> CredentialsError {
    // serde_json's message names the problem and position, never the offending text.
    let message = match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "not valid JSON",
        serde_json::error::Category::Data => "JSON has the wrong shape",
        serde_json::error::Category::Io => "could not be read",
    };
    CredentialsError::Parse {
        path: path.display().to_string(),
        line: e.line(),
        column: e.column(),
        message: message.into(),
    }
}

fn tccli(
    profile: Option<&str>,
    env: &Env,
    looked: &mut Vec<String>,
) -> Result<Option<Loaded>, CredentialsError> {
    #[derive(Deserialize)]
    struct File {
        #[serde(rename = "secretId")]
        secret_id: Option<String>,
        #[serde(rename = "secretKey")]
        secret_key: Option<String>,
        token: Option<String>,
    }
    #[derive(Deserialize)]
    struct Configure {
        region: Option<String>,
    }
    let name = profile.unwrap_or("default");
    let Some(path) = env.home_file(&format!(".tccli/{name}.credential")) else { return Ok(None) };
    let mut warnings = Vec::new();
    let Some(text) = read_secret_file(&path, looked, &mut warnings)? else { return Ok(None) };
    let f: File = serde_json::from_str(&text).map_err(|e| json_error(&path, &e))?;
    let (Some(id), Some(key)) =
        (f.secret_id.filter(|s| !s.is_empty()), f.secret_key.filter(|s| !s.is_empty()))
    else {
        return Err(CredentialsError::Invalid {
            path: path.display().to_string(),
            message: "needs secretId and secretKey".into(),
        });
    };
    let region = env
        .home_file(&format!(".tccli/{name}.configure"))
        .and_then(|p| read_side_file(&p))
        .and_then(|t| serde_json::from_str::<Configure>(&t).ok())
        .and_then(|c| c.region);
    let mut credentials = Credentials::new(id, key);
    credentials.security_token = f.token.filter(|t| !t.is_empty()).map(Secret::from);
    Ok(Some(Loaded {
        credentials,
        source: Source::File { path, profile: name.to_owned() },
        region,
        warnings,
    }))
}

fn aliyun(
    profile: Option<&str>,
    env: &Env,
    looked: &mut Vec<String>,
) -> Result<Option<Loaded>, CredentialsError> {
    #[derive(Deserialize)]
    struct File {
        current: Option<String>,
        #[serde(default)]
        profiles: Vec<Profile>,
    }
    #[derive(Deserialize)]
    struct Profile {
        name: String,
        #[serde(default)]
        mode: String,
        access_key_id: Option<String>,
        access_key_secret: Option<String>,
        sts_token: Option<String>,
        region_id: Option<String>,
    }
    let Some(path) = env.home_file(".aliyun/config.json") else { return Ok(None) };
    let mut warnings = Vec::new();
    let Some(text) = read_secret_file(&path, looked, &mut warnings)? else { return Ok(None) };
    let f: File = serde_json::from_str(&text).map_err(|e| json_error(&path, &e))?;
    let invalid = |message: String| CredentialsError::Invalid { path: path.display().to_string(), message };
    let name = profile
        .map(str::to_owned)
        .or_else(|| env.var("ALIBABA_CLOUD_PROFILE").map(str::to_owned))
        .or(f.current.clone())
        .unwrap_or_else(|| "default".to_owned());
    let Some(p) = f.profiles.into_iter().find(|p| p.name == name) else {
        // An explicitly chosen profile may live in gpuctl's own file instead.
        return Ok(None);
    };
    if !matches!(p.mode.as_str(), "AK" | "StsToken" | "") {
        return Err(invalid(format!(
            "profile {name:?} uses mode {:?}; gpuctl supports AK and StsToken profiles (or set ALIBABA_CLOUD_ACCESS_KEY_ID/SECRET)",
            p.mode
        )));
    }
    let (Some(id), Some(secret)) =
        (p.access_key_id.filter(|s| !s.is_empty()), p.access_key_secret.filter(|s| !s.is_empty()))
    else {
        return Err(invalid(format!("profile {name:?} needs access_key_id and access_key_secret")));
    };
    let mut credentials = Credentials::new(id, secret);
    if p.mode == "StsToken" {
        credentials.security_token = p.sts_token.filter(|t| !t.is_empty()).map(Secret::from);
    }
    Ok(Some(Loaded {
        credentials,
        source: Source::File { path, profile: name },
        region: p.region_id.filter(|r| !r.is_empty()),
        warnings,
    }))
}

fn jdc(
    profile: Option<&str>,
    env: &Env,
    looked: &mut Vec<String>,
) -> Result<Option<Loaded>, CredentialsError> {
    let Some(path) = env.home_file(".jdc/config") else { return Ok(None) };
    let mut warnings = Vec::new();
    let Some(text) = read_secret_file(&path, looked, &mut warnings)? else { return Ok(None) };
    let name = match profile {
        Some(p) => p.to_owned(),
        None => env
            .home_file(".jdc/current")
            .and_then(|p| read_side_file(&p))
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "default".to_owned()),
    };
    let sections = parse_ini(&text).map_err(|(line, message)| CredentialsError::Parse {
        path: path.display().to_string(),
        line,
        column: 1,
        message,
    })?;
    let Some(section) = sections.get(&name) else { return Ok(None) };
    let get = |k: &str| section.get(k).filter(|v| !v.is_empty()).cloned();
    let (Some(ak), Some(sk)) = (get("access_key"), get("secret_key")) else {
        return Err(CredentialsError::Invalid {
            path: path.display().to_string(),
            message: format!("profile [{name}] needs access_key and secret_key"),
        });
    };
    Ok(Some(Loaded {
        credentials: Credentials::new(ak, sk),
        source: Source::File { path, profile: name },
        region: get("region_id"),
        warnings,
    }))
}

/// Minimal INI as the jdc CLI writes it (Python configparser): `[section]`, `key = value`,
/// `#`/`;` comments. Err((line, message)) without echoing the line (it may hold a secret).
fn parse_ini(text: &str) -> Result<BTreeMap<String, BTreeMap<String, String>>, (usize, String)> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(name.trim().to_owned());
            out.entry(name.trim().to_owned()).or_default();
            continue;
        }
        let Some((k, v)) = line.split_once('=').or_else(|| line.split_once(':')) else {
            return Err((i + 1, "expected `key = value` or `[profile]`".into()));
        };
        let Some(section) = &current else {
            return Err((i + 1, "key outside of any [profile] section".into()));
        };
        out.get_mut(section)
            .expect("section was inserted")
            .insert(k.trim().to_lowercase(), v.trim().to_owned());
    }
    Ok(out)
}

fn gpuctl_file(
    cloud: Provider,
    profile: &str,
    env: &Env,
    looked: &mut Vec<String>,
) -> Result<Option<Loaded>, CredentialsError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        access_key_id: String,
        access_key_secret: String,
        security_token: Option<String>,
        region: Option<String>,
    }
    let Some(path) = env.gpuctl_credentials_path() else { return Ok(None) };
    let mut warnings = Vec::new();
    let Some(text) = read_secret_file(&path, looked, &mut warnings)? else { return Ok(None) };
    let doc: toml::Table = toml::from_str(&text).map_err(|e| toml_error(&path, &text, &e))?;
    let Some(entry) = doc.get(profile).and_then(|p| p.get(cloud.as_str())) else { return Ok(None) };
    let entry: Entry = entry.clone().try_into().map_err(|e: toml::de::Error| CredentialsError::Invalid {
        path: path.display().to_string(),
        message: format!("[{profile}.{cloud}]: {}", without_value(e.message())),
    })?;
    let mut credentials = Credentials::new(entry.access_key_id, entry.access_key_secret);
    credentials.security_token = entry.security_token.filter(|t| !t.is_empty()).map(Secret::from);
    Ok(Some(Loaded {
        credentials,
        source: Source::File { path, profile: profile.to_owned() },
        region: entry.region,
        warnings,
    }))
}

/// serde's "invalid type: integer `123`, expected a string" quotes the value it got, which in a
/// credentials file is likely the secret itself: keep the kind ("integer"), drop the value.
pub fn without_value(message: &str) -> String {
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some((got, expected)) =
            message.strip_prefix(prefix).and_then(|rest| rest.split_once(", expected"))
        {
            let kind = got.split(['`', '"']).next().unwrap_or_default().trim();
            return format!("{prefix}{kind}, expected{expected}");
        }
    }
    message.to_owned()
}

/// toml's own Display quotes the offending line, which may hold a secret: report the position
/// and the message only.
fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> CredentialsError {
    let (line, column) = match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            (line, column)
        }
        None => (0, 0),
    };
    CredentialsError::Parse {
        path: path.display().to_string(),
        line,
        column,
        message: e.message().to_owned(),
    }
}
