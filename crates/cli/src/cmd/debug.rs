//! `gpuctl debug sign`: for people chasing a signature error. Reads one request as JSON, signs it
//! with gpuctl-sign exactly as gpuctl would send it, and prints every stage plus the full URL and
//! headers, so the output can be compared with a cloud's error message or replayed. The input may
//! carry the secret or leave it to the usual credential lookup; the secret is never printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gpuctl_sign::credentials::{self, Env, Provider};
use gpuctl_sign::file;
use gpuctl_sign::{sign, Algorithm, Credentials, SignableRequest, SigningParams};
use serde::Deserialize;

use super::CliError;

#[derive(clap::Args)]
pub struct DebugArgs {
    #[command(subcommand)]
    pub command: DebugCommand,
}

#[derive(clap::Subcommand)]
pub enum DebugCommand {
    /// Sign one request (JSON) and print canonical request, string to sign, Authorization, URL and headers
    Sign(SignArgs),
}

#[derive(clap::Args)]
pub struct SignArgs {
    /// The request as JSON (`-` for stdin). Fields: provider, method, scheme, host, path, query,
    /// headers, body, timestamp, nonce, region, service, action, version, access_key_id,
    /// access_key_secret. Without access_key_secret the usual credentials are loaded.
    #[arg(long)]
    pub request: PathBuf,
    /// Credentials profile to use when the request has no access_key_secret.
    #[arg(long)]
    pub profile: Option<String>,
}

const PROVIDERS: [&str; 5] = ["tencent", "alibaba", "alibaba-rpc", "jdcloud", "jdcloud2"];

/// The input document (documented in README "gpuctl debug sign").
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    provider: String,
    method: String,
    #[serde(default = "https")]
    scheme: String,
    host: String,
    #[serde(default = "slash")]
    path: String,
    #[serde(default)]
    query: BTreeMap<String, String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: String,
    timestamp: Option<i64>,
    nonce: Option<String>,
    #[serde(default)]
    region: String,
    #[serde(default)]
    service: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    version: String,
    access_key_id: Option<String>,
    access_key_secret: Option<String>,
}

fn https() -> String {
    "https".into()
}
fn slash() -> String {
    "/".into()
}

pub fn run(args: DebugArgs) -> Result<ExitCode, CliError> {
    match args.command {
        DebugCommand::Sign(a) => run_sign(a),
    }
}

/// The most one request to sign may hold (a request's JSON is a few KiB; bodies are what grows).
const MAX_REQUEST_BYTES: u64 = 1 << 20;

fn run_sign(args: SignArgs) -> Result<ExitCode, CliError> {
    let (name, text) = if args.request.as_os_str() == "-" {
        // Bounded like a file: `< /dev/zero` must end in an error, not in memory exhaustion.
        let stdin = Path::new("stdin");
        let s = file::read_all_bounded(std::io::stdin(), stdin, MAX_REQUEST_BYTES)
            .and_then(|bytes| file::into_text(bytes, stdin))
            .map_err(|e| CliError::usage(format!("stdin: {}", e.reason())))?;
        ("<stdin>".to_owned(), s)
    } else {
        let name = args.request.display().to_string();
        let s = file::read_string_bounded(&args.request, MAX_REQUEST_BYTES)
            .map_err(|e| CliError::usage(format!("{name}: {}", e.reason())))?;
        (name, s)
    };
    // serde_json's messages name fields and positions; a wrong-typed value ("invalid type: integer
    // `123`") is quoted, and it may be the secret, so it is dropped.
    let input: Input = serde_json::from_str(&text).map_err(|e| {
        let msg = e.to_string();
        let msg = credentials::without_value(strip_position(&msg));
        let msg = msg.as_str();
        CliError::usage(format!("{name}:{}:{}: {msg}{}", e.line(), e.column(), suggestion(msg)))
    })?;

    let (algorithm, cloud) = match input.provider.as_str() {
        "tencent" => (Algorithm::Tc3, Provider::Tencent),
        "alibaba" => (Algorithm::Acs3, Provider::Alibaba),
        "alibaba-rpc" => (Algorithm::AlibabaRpcV2, Provider::Alibaba),
        "jdcloud" => (Algorithm::JdCloud3, Provider::JdCloud),
        "jdcloud2" => (Algorithm::JdCloud2, Provider::JdCloud),
        other => {
            let closest = PROVIDERS
                .iter()
                .max_by(|a, b| strsim::jaro_winkler(other, a).total_cmp(&strsim::jaro_winkler(other, b)));
            return Err(CliError::usage(format!(
                "{name}: unknown provider {other:?}; did you mean {:?}? (one of {})",
                closest.unwrap_or(&"tencent"),
                PROVIDERS.join(", ")
            )));
        }
    };

    let mut warnings = Vec::new();
    let creds = match input.access_key_secret {
        Some(secret) => {
            let id = input.access_key_id.ok_or_else(|| {
                CliError::usage(format!("{name}: access_key_secret is given but access_key_id is not"))
            })?;
            Credentials::new(id, secret)
        }
        None => {
            let loaded = credentials::load(cloud, args.profile.as_deref(), &Env::from_process())
                .map_err(|e| CliError::usage(e.to_string()))?;
            warnings = loaded.warnings;
            let mut c = loaded.credentials;
            if let Some(id) = input.access_key_id {
                c.access_key_id = id;
            }
            c
        }
    };

    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let req = SignableRequest {
        method: input.method,
        scheme: input.scheme,
        host: input.host,
        path: input.path,
        query: input.query.into_iter().collect(),
        headers: input.headers.into_iter().collect(),
        body: input.body.into_bytes(),
    };
    let params = SigningParams {
        algorithm,
        time: input.timestamp.unwrap_or(now),
        nonce: input.nonce.unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
        region: input.region,
        service: input.service,
        action: input.action,
        version: input.version,
    };
    let mut signed = sign(&req, &creds, &params).map_err(|e| CliError::usage(format!("{name}: {e}")))?;
    // A session token is a secret too: it travels in a header (or the RPC query), so hide it.
    if let Some(token) = &creds.security_token {
        signed = signed.redacted(token);
    }
    for w in warnings {
        eprintln!("{w}");
    }
    let headers: serde_json::Map<String, serde_json::Value> =
        signed.headers.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect();
    let out = serde_json::json!({
        "algorithm": signed.algorithm.name(),
        "canonical_request": signed.canonical_request,
        "string_to_sign": signed.string_to_sign,
        "signature": signed.signature,
        "authorization": signed.authorization,
        "url": signed.url,
        "headers": headers,
    });
    crate::outln!("{}", serde_json::to_string_pretty(&out).expect("JSON values always serialise"));
    Ok(ExitCode::SUCCESS)
}

const FIELDS: [&str; 16] = [
    "provider",
    "method",
    "scheme",
    "host",
    "path",
    "query",
    "headers",
    "body",
    "timestamp",
    "nonce",
    "region",
    "service",
    "action",
    "version",
    "access_key_id",
    "access_key_secret",
];

/// "; did you mean `method`?" for serde's "unknown field `methd`, …".
fn suggestion(msg: &str) -> String {
    let Some(rest) = msg.strip_prefix("unknown field `") else { return String::new() };
    let typo = rest.split('`').next().unwrap_or_default();
    FIELDS
        .iter()
        .map(|f| (strsim::jaro_winkler(typo, f), f))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, f)| format!("; did you mean `{f}`?"))
        .unwrap_or_default()
}

/// serde_json appends " at line L column C"; we print the position as file:line:column instead.
fn strip_position(msg: &str) -> &str {
    msg.rsplit_once(" at line ").map_or(msg, |(m, _)| m)
}
