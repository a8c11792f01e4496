//! The transport the provider clients share: where each cloud is reached (default host, or an override
//! from `--endpoint` / `GPUCTL_<CLOUD>_ENDPOINT`), the rule that plain http goes only to loopback, and
//! sending a signed request with reqwest (rustls). No cloud's wire format lives here.

use std::net::IpAddr;
use std::time::Duration;

use crate::cloud::CloudError;
use crate::provider::Provider;

/// A base URL: scheme and host (with port when not the scheme's default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub scheme: String,
    pub host: String,
}

impl Endpoint {
    pub fn https(host: impl Into<String>) -> Endpoint {
        Endpoint { scheme: "https".into(), host: host.into() }
    }

    /// Parses `https://host[:port]` or `http://127.0.0.1:port` (plain http only to loopback: a request
    /// signature travels in the clear, and anyone on the path could replay it).
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let (scheme, rest) = url.split_once("://").ok_or_else(|| {
            format!("endpoint `{url}` needs a scheme: https://host or http://127.0.0.1:PORT")
        })?;
        let host = rest.trim_end_matches('/');
        if host.is_empty() || host.contains('/') || host.contains('@') || host.contains('?') {
            return Err(format!("endpoint `{url}` must be a scheme and a host[:port] only, without a path"));
        }
        match scheme {
            "https" => Ok(Endpoint { scheme: scheme.into(), host: host.into() }),
            "http" if is_loopback(host) => Ok(Endpoint { scheme: scheme.into(), host: host.into() }),
            "http" => Err(format!("endpoint `{url}`: plain http is allowed only to loopback (127.0.0.1, [::1], localhost); use https")),
            other => Err(format!("endpoint `{url}`: scheme `{other}` is not supported; use https")),
        }
    }

    pub fn url(&self, path_and_query: &str) -> String {
        format!("{}://{}{}", self.scheme, self.host, path_and_query)
    }
}

fn is_loopback(host_port: &str) -> bool {
    let host = if let Some(rest) = host_port.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        host_port.rsplit_once(':').map_or(host_port, |(h, p)| {
            if p.chars().all(|c| c.is_ascii_digit()) {
                h
            } else {
                host_port
            }
        })
    };
    host.eq_ignore_ascii_case("localhost") || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Where to reach each cloud: overrides from flags (`tencent=URL`) win over the environment
/// (`GPUCTL_TENCENT_ENDPOINT`), which wins over the cloud's own hosts.
pub fn endpoint_override(
    provider: Provider,
    flags: &[String],
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Endpoint>, String> {
    for f in flags {
        let (name, url) = f.split_once('=').ok_or_else(|| {
            format!("--endpoint `{f}` must be PROVIDER=URL, e.g. tencent=http://127.0.0.1:8080")
        })?;
        let p = gpuctl_core::parse_provider(name).map_err(|e| format!("--endpoint `{f}`: {e}"))?;
        if p == provider {
            return Endpoint::parse(url).map(Some);
        }
    }
    let var = format!("GPUCTL_{}_ENDPOINT", provider.as_str().to_ascii_uppercase());
    match env(&var) {
        Some(url) if !url.is_empty() => Endpoint::parse(&url).map(Some).map_err(|e| format!("{var}: {e}")),
        _ => Ok(None),
    }
}

/// One HTTP client per process: connection reuse matters when 64 creates go out at once.
#[derive(Debug, Clone)]
pub struct Http {
    client: reqwest::Client,
}

/// A response as the clients need it.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

impl Http {
    pub fn new(timeout: Duration) -> Result<Http, String> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(10))
            .pool_max_idle_per_host(64)
            .user_agent(concat!("gpuctl/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Http { client })
    }

    /// Sends a signed request. Transport failures (refused, reset, timed out) come back as transient
    /// errors: the engine retries them with the same client token.
    pub async fn send(
        &self,
        provider: Provider,
        action: &str,
        method: &str,
        url: &str,
        headers: &[(String, String)],
        body: Vec<u8>,
    ) -> Result<Response, CloudError> {
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|e| CloudError::transport(provider, action, "http-method", e.to_string()))?;
        let mut rb = self.client.request(method, url);
        for (k, v) in headers {
            // reqwest sets Host from the URL; a second Host header would be a different request.
            if !k.eq_ignore_ascii_case("host") {
                rb = rb.header(k, v);
            }
        }
        let resp = rb.body(body).send().await.map_err(|e| {
            let code = if e.is_timeout() {
                "http-timeout"
            } else if e.is_connect() {
                "http-connect"
            } else {
                "http-transport"
            };
            CloudError::transport(provider, action, code, without_url(&e))
        })?;
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or_default().to_string()))
            .collect();
        let body = resp
            .bytes()
            .await
            .map_err(|e| CloudError::transport(provider, action, "http-body", without_url(&e)))?
            .to_vec();
        Ok(Response { status, headers, body })
    }
}

/// reqwest's messages include the URL, whose query may carry an Alibaba RPC signature: keep it out.
fn without_url(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    if let Some(url) = e.url() {
        s = s.replace(url.as_str(), "<url>");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_to_loopback() {
        for ok in [
            "http://127.0.0.1:8080",
            "http://localhost:1",
            "http://[::1]:9000",
            "https://cvm.tencentcloudapi.com",
            "http://127.0.0.1:8080/",
        ] {
            assert!(Endpoint::parse(ok).is_ok(), "{ok}");
        }
        let e = Endpoint::parse("http://10.0.0.1:8080").unwrap_err();
        assert_eq!(e, "endpoint `http://10.0.0.1:8080`: plain http is allowed only to loopback (127.0.0.1, [::1], localhost); use https");
        assert!(Endpoint::parse("http://127.0.0.1.evil.com").is_err());
        assert!(Endpoint::parse("ftp://x").is_err());
        assert!(Endpoint::parse("https://host/path").is_err());
        assert!(Endpoint::parse("127.0.0.1:80").is_err());
    }

    #[test]
    fn flags_win_over_environment() {
        let env = |k: &str| (k == "GPUCTL_ALIBABA_ENDPOINT").then(|| "http://127.0.0.1:2".to_string());
        let flags = vec!["alibaba=http://127.0.0.1:1".to_string()];
        assert_eq!(endpoint_override(Provider::Alibaba, &flags, env).unwrap().unwrap().host, "127.0.0.1:1");
        assert_eq!(endpoint_override(Provider::Alibaba, &[], env).unwrap().unwrap().host, "127.0.0.1:2");
        assert_eq!(endpoint_override(Provider::Tencent, &flags, env).unwrap(), None);
        assert!(endpoint_override(Provider::Tencent, &["nope".into()], env).is_err());
    }
}
