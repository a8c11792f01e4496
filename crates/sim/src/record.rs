//! Request recording for the wire contract checker (`contract/check.py`, issue 12).
//!
//! With `GPUCTL_SIM_RECORD=<dir>` set, every request a served sim receives is appended as one JSON
//! line to `<dir>/<pid>-<n>.jsonl` (one file per [`serve`](crate::serve) call, so concurrent sims in
//! one process never interleave and no file is shared between processes). Each line holds what the
//! checker needs to tell the cloud, action and version and to read the parameters — method, path,
//! the raw query, the protocol headers, the body — and what the emulator answered (status and the
//! cloud's error code). It never holds a secret: the `Authorization` header and session-token
//! headers are not recorded (only the headers named in [`KEPT_HEADERS`] are), the RPC `Signature`
//! and `SecurityToken` query parameters are dropped, and any parameter whose name says password or
//! secret has its value replaced.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use gpuctl_simkit::{SimRequest, SimResponse};
use serde_json::{json, Value};

/// The environment variable naming the folder recordings go to.
pub const RECORD_ENV: &str = "GPUCTL_SIM_RECORD";

/// The headers that carry protocol facts (action, version, region, body type) or tell who sent the
/// request (`user-agent`: the checker counts only gpuctl's own client traffic). Nothing else is kept.
const KEPT_HEADERS: [&str; 8] = [
    "content-type",
    "user-agent",
    "x-tc-action",
    "x-tc-version",
    "x-tc-region",
    "x-acs-action",
    "x-acs-version",
    "x-gpuctl-purpose",
];

/// Query parameters never written: the RPC signature and session tokens.
const DROPPED_QUERY: [&str; 2] = ["signature", "securitytoken"];

/// The stand-in for a redacted value.
const REDACTED: &str = "******";

static FILES: AtomicU64 = AtomicU64::new(0);

/// An open recording file; `None` from [`Recorder::from_env`] when recording is off.
pub struct Recorder {
    file: Mutex<File>,
    path: PathBuf,
}

impl Recorder {
    /// A new file in `$GPUCTL_SIM_RECORD`, or `None` when the variable is unset or empty. A folder that
    /// cannot be written is reported once and recording stays off: the sim itself still serves.
    pub fn from_env() -> Option<Recorder> {
        let dir = std::env::var_os(RECORD_ENV).filter(|d| !d.is_empty())?;
        let dir = PathBuf::from(dir);
        let n = FILES.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{}-{n}.jsonl", std::process::id()));
        let opened = std::fs::create_dir_all(&dir)
            .and_then(|()| OpenOptions::new().create(true).append(true).open(&path));
        match opened {
            Ok(file) => Some(Recorder { file: Mutex::new(file), path }),
            Err(e) => {
                tracing::warn!("{RECORD_ENV}: cannot record to {}: {e}", path.display());
                None
            }
        }
    }

    /// Appends one request and what was answered (`None`: the connection was dropped by a fault).
    pub fn record(&self, req: &SimRequest, resp: Option<&SimResponse>) {
        let mut line = entry(req, resp).to_string();
        line.push('\n');
        // One write per line on an O_APPEND file: a killed sim leaves whole lines behind.
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = f.write_all(line.as_bytes()) {
            tracing::warn!("{RECORD_ENV}: cannot append to {}: {e}", self.path.display());
        }
    }
}

/// The JSON line for one request.
fn entry(req: &SimRequest, resp: Option<&SimResponse>) -> Value {
    let headers: serde_json::Map<String, Value> = req
        .headers
        .iter()
        .filter(|(k, _)| KEPT_HEADERS.contains(&k.to_ascii_lowercase().as_str()))
        .map(|(k, v)| (k.to_ascii_lowercase(), Value::String(v.clone())))
        .collect();
    let query: Vec<&str> = req
        .raw_query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter(|pair| {
            let name = pair.split('=').next().unwrap_or_default().to_ascii_lowercase();
            !DROPPED_QUERY.contains(&name.as_str())
        })
        .map(|pair| if is_secret_name(pair.split('=').next().unwrap_or_default()) { "" } else { pair })
        .filter(|pair| !pair.is_empty())
        .collect();
    let body = String::from_utf8_lossy(&req.body);
    let lower = body.to_ascii_lowercase();
    let body = match serde_json::from_str::<Value>(&body) {
        // A body kept as sent unless it may name a secret (then re-serialised with the value replaced).
        Ok(_) if !lower.contains("password") && !lower.contains("secret") => body.into_owned(),
        Ok(mut v) => {
            redact(&mut v);
            v.to_string()
        }
        // Not JSON (a form body): pairs named like a secret are left out, as in the query.
        Err(_) => body
            .split('&')
            .filter(|pair| !is_secret_name(pair.split('=').next().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join("&"),
    };
    let answer = match resp {
        Some(r) => json!({ "status": r.status, "error": error_code(&r.body) }),
        None => json!({ "status": null, "error": "connection dropped" }),
    };
    json!({
        "method": req.method,
        "path": req.path,
        "query": query.join("&"),
        "headers": headers,
        "body": body,
        "answer": answer,
    })
}

/// A parameter whose value must not be written: passwords and secrets by name, in any cloud's case
/// (`Password`, `LoginSettings.Password`, `password`, `SecretKey`). `ClientToken` is not a secret.
fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("password") || n.contains("secret")
}

fn redact(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if is_secret_name(k) {
                    *x = Value::String(REDACTED.into());
                } else {
                    redact(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact),
        _ => {}
    }
}

/// The error code in any of the three clouds' error bodies: Tencent `Response.Error.Code` (HTTP 200),
/// Alibaba `Code`, JD `error.status`; `null` for a success.
fn error_code(body: &[u8]) -> Value {
    let Ok(v) = serde_json::from_slice::<Value>(body) else { return Value::Null };
    let code =
        v["Response"]["Error"]["Code"].as_str().or(v["Code"].as_str()).or(v["error"]["status"].as_str());
    code.map_or(Value::Null, |c| Value::String(c.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_line_keeps_the_protocol_and_drops_secrets() {
        let req = SimRequest::new(
            "POST",
            "/?Action=RunInstances&Signature=abc%3D&Password=hunter2&RegionId=cn-hangzhou",
        )
        .with_header("Authorization", "ACS3-HMAC-SHA256 Credential=AK,Signature=ff")
        .with_header("x-acs-action", "RunInstances")
        .with_header("x-acs-security-token", "tok")
        .with_body(r#"{"LoginSettings":{"Password":"hunter2","KeyIds":["k"]}}"#);
        let resp = SimResponse::json(400, &json!({"Code": "MissingParameter", "RequestId": "r"}));
        let e = entry(&req, Some(&resp));
        let text = e.to_string();
        assert!(!text.contains("hunter2") && !text.contains("abc") && !text.contains("tok"), "{text}");
        assert!(!text.to_ascii_lowercase().contains("authorization"), "{text}");
        assert_eq!(e["query"], "Action=RunInstances&RegionId=cn-hangzhou");
        assert_eq!(e["headers"]["x-acs-action"], "RunInstances");
        assert_eq!(e["answer"]["status"], 400);
        assert_eq!(e["answer"]["error"], "MissingParameter");
        let body: Value = serde_json::from_str(e["body"].as_str().unwrap()).unwrap();
        assert_eq!(body["LoginSettings"]["KeyIds"][0], "k");
    }

    #[test]
    fn error_codes_of_each_cloud() {
        assert_eq!(error_code(br#"{"Response":{"Error":{"Code":"MissingParameter"}}}"#), "MissingParameter");
        assert_eq!(error_code(br#"{"error":{"code":400,"status":"INVALID_ARGUMENT"}}"#), "INVALID_ARGUMENT");
        assert_eq!(error_code(br#"{"Response":{"RequestId":"x"}}"#), Value::Null);
    }
}
