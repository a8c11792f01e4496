//! The Rust validator and contract/check.py agree (issue 12): every request of contract/planted.json
//! (the official SDKs' valid requests and the planted wrong ones, decoded as the emulators decode
//! them; written by contract/controls.py, which also checks it is current) gets from
//! `gpuctl_simkit::validate` exactly the lines check.py gave it.

use gpuctl_simkit::validate::{validate, Input, Schema};
use serde_json::Value;

const FIXTURE: &str = include_str!("../../../contract/planted.json");

fn schema(cloud: &str) -> Schema {
    let text = match cloud {
        "tencent" => include_str!("../../../contract/schema/tencent.json"),
        "alibaba" => include_str!("../../../contract/schema/alibaba.json"),
        "jdcloud" => include_str!("../../../contract/schema/jdcloud.json"),
        other => panic!("fixture names an unknown cloud {other}"),
    };
    Schema::parse(text).expect("committed schema parses")
}

#[test]
fn rust_validator_gives_check_py_verdicts() {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("fixture is JSON");
    let cases = fixture["cases"].as_array().expect("cases");
    assert!(cases.len() >= 40, "the fixture lost cases: {}", cases.len());
    let mut planted = 0;
    for case in cases {
        let cloud = case["cloud"].as_str().expect("cloud");
        let action = case["action"].as_str().expect("action");
        let schema = schema(cloud);
        let spec = schema.action(action).unwrap_or_else(|| panic!("{cloud} {action} not in schema"));
        let pairs: Vec<(String, String)> = case["flat"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let input = match case.get("json") {
            Some(tree) => Input::Json(tree),
            None => Input::Flat { pairs: &pairs, base: case["base"].as_u64().expect("base") },
        };
        let mut got: Vec<String> = validate(spec, input).iter().map(|v| v.line(cloud, action)).collect();
        got.sort();
        let want: Vec<&str> = case["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
        assert_eq!(got, want, "case {}", case["name"]);
        planted += usize::from(!want.is_empty());
    }
    assert!(planted >= 15, "planted wrong requests: {planted}");
}
