//! `gpuctl debug sign` through the real binary: its output matches the committed SDK vectors of
//! gpuctl-sign for every provider, the secret never appears, and bad input gets a clear error.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sign/vectors")
}

fn run(input: &str) -> Output {
    run_with_env(input, &[])
}

fn run_with_env(input: &str, vars: &[(&str, &str)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpuctl"))
        .args(["debug", "sign", "--request", "-"])
        .env("HOME", "/nonexistent-gpuctl-test-home")
        .env_remove("ALIBABA_CLOUD_ACCESS_KEY_ID")
        .envs(vars.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The debug-sign input for one vector folder (pairs become JSON objects: these vectors have no
/// repeated keys, and their canonical forms do not depend on the order of an object).
fn input_from_vector(case: &str, provider: &str) -> Value {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(vectors().join(case).join("request.json")).unwrap())
            .unwrap();
    let obj = |pairs: &Value| -> Value {
        Value::Object(
            pairs
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_str().unwrap().to_owned(), p[1].clone()))
                .collect(),
        )
    };
    let r = &v["request"];
    let p = &v["params"];
    json!({
        "provider": provider,
        "method": r["method"], "scheme": r["scheme"], "host": r["host"], "path": r["path"],
        "query": obj(&r["query"]), "headers": obj(&r["headers"]), "body": r["body"],
        "timestamp": p["time"], "nonce": p["nonce"], "region": p["region"], "service": p["service"],
        "action": p["action"], "version": p["version"],
        "access_key_id": v["credentials"]["access_key_id"], "access_key_secret": v["credentials"]["secret"],
    })
}

fn check(case: &str, provider: &str) {
    let input = input_from_vector(case, provider);
    let secret = input["access_key_secret"].as_str().unwrap().to_owned();
    let out = run(&input.to_string());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{case}: {stderr}");
    assert!(!stdout.contains(&secret) && !stderr.contains(&secret), "{case}: the secret was printed");
    let got: Value = serde_json::from_str(&stdout).unwrap();
    let file = |n: &str| std::fs::read_to_string(vectors().join(case).join(n)).unwrap();
    assert_eq!(got["canonical_request"], file("canonical_request.txt"), "{case}");
    assert_eq!(got["string_to_sign"], file("string_to_sign.txt"), "{case}");
    if provider == "alibaba-rpc" {
        assert_eq!(got["signature"], file("signature.txt"), "{case}");
        assert_eq!(got["authorization"], Value::Null, "{case}");
        assert!(got["url"].as_str().unwrap().contains("&Signature="), "{case}");
    } else {
        assert_eq!(got["authorization"], file("authorization.txt"), "{case}");
        assert_eq!(got["headers"]["Authorization"], file("authorization.txt"), "{case}");
    }
    let url = got["url"].as_str().unwrap();
    let host = input["host"].as_str().unwrap();
    assert!(url.starts_with(&format!("{}://{host}/", input["scheme"].as_str().unwrap())), "{case}: {url}");
    let headers = got["headers"].as_object().unwrap();
    assert!(headers.keys().any(|k| k.eq_ignore_ascii_case("host")), "{case}: no Host in {headers:?}");
}

#[test]
fn matches_the_sdk_vectors_for_every_provider() {
    check("tc3-post-json-describe-instances", "tencent");
    check("tc3-post-loopback-port", "tencent");
    check("acs3-published-runinstances-example", "alibaba");
    check("acs3-post-form-body-loopback", "alibaba");
    check("rpc-published-describeregions-example", "alibaba-rpc");
    check("jd3-post-json-disk", "jdcloud");
    check("jd3-get-filters", "jdcloud");
    check("jd2-get-filters", "jdcloud2");
    check("jd2-post-action-loopback", "jdcloud2");
}

#[test]
fn bad_input_is_explained() {
    let cases = [
        (r#"{"provider":"tencnet","method":"GET","host":"h"}"#, "did you mean \"tencent\""),
        ("{\"provider\":\"tencent\",\n\"methd\":\"GET\"}", "<stdin>:2:7: unknown field `methd`"),
        ("{\"provider\":\"tencent\",\n\"methd\":\"GET\"}", "did you mean `method`?"),
        ("{\"provider\": 1}", "<stdin>:1:14:"),
        (
            r#"{"provider":"jdcloud","method":"GET","host":"h","access_key_id":"a","access_key_secret":"TOPSECRET"}"#,
            "region must not be empty",
        ),
        (
            r#"{"provider":"alibaba","method":"GET","host":"h","timestamp":1,"nonce":"n","action":"A","version":"v"}"#,
            "no alibaba credentials found",
        ),
    ];
    for (input, want) in cases {
        let out = run(input);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{input}: {stderr}");
        assert!(stderr.contains(want), "{input}: expected {want:?} in {stderr:?}");
        assert!(!stderr.contains("TOPSECRET"));
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn credentials_from_the_environment_and_the_token_stays_hidden() {
    let input = r#"{"provider":"alibaba-rpc","method":"GET","host":"ecs.aliyuncs.com","timestamp":1456231584,
                    "nonce":"n1","action":"DescribeRegions","version":"2014-05-26"}"#;
    let out = run_with_env(
        input,
        &[
            ("ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAIenv"),
            ("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ENV-SECRET-VALUE"),
            ("ALIBABA_CLOUD_SECURITY_TOKEN", "STS+TOKEN/VALUE="),
        ],
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Value = serde_json::from_str(&stdout).unwrap();
    assert!(got["url"].as_str().unwrap().contains("AccessKeyId=LTAIenv"));
    assert!(got["url"].as_str().unwrap().contains("SecurityToken=******"));
    for secret in ["ENV-SECRET-VALUE", "STS+TOKEN", "STS%2BTOKEN", "TOKEN"] {
        assert!(!stdout.contains(secret), "{secret} printed: {stdout}");
    }
}
