//! Fuzz the local cloud's request handling, two ways in one target:
//!
//! - **Signed calls** (most inputs): a fuzzed action, region, parameters and body for each cloud,
//!   signed with the sim's documented test keys through gpuctl-sign — TC3 for Tencent, ACS3 or the
//!   RPC `Signature` for Alibaba, JDCLOUD3 for JD — so the bytes pass verification and reach each
//!   emulator's parameter readers (simkit `Params<E>`, Alibaba's `params.rs`, each `ops/` file).
//!   Words come from the emulators' own string literals (build.rs), dotted paths become nested JSON.
//! - **Raw requests**: arbitrary method/path/query/headers/body as any client could send, which
//!   exercise routing, the signature checks' refusals and the `/_sim/...` admin API.
//!
//! One input is a short session (up to 6 calls, with sim-clock moves between them) against a reset
//! sim, so a describe can see what a run created and a time move can release it. Property:
//! `Sim::call` never panics and always answers (a response or a deliberate drop), whatever the bytes.
#![no_main]

use std::cell::{Cell, RefCell};

use gpuctl_sign::{Algorithm, Credentials, SignableRequest, SigningParams};
use gpuctl_sim::Sim;
use gpuctl_simkit::creds::TEST_KEY_PAIRS;
use gpuctl_simkit::request::SimRequest;
use gpuctl_simkit::SimConfig;
use jiff::SignedDuration;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

mod words {
    include!(concat!(env!("OUT_DIR"), "/words.rs"));
}
use words::{ACTIONS, SEGMENTS, WORDS};

/// A name: one the emulators' sources spell (most of the time), or any string.
#[derive(Arbitrary, Debug)]
enum Word {
    Known(u16),
    Any(String),
}

impl Word {
    fn get(&self) -> String {
        self.from(WORDS)
    }

    /// Picked from a narrower list (the routers' actions, JD's path segments) when known.
    fn from(&self, list: &[&str]) -> String {
        match self {
            Word::Known(i) => list[*i as usize % list.len()].to_string(),
            Word::Any(s) => s.clone(),
        }
    }
}

/// A scalar parameter value, with the shapes the emulators parse: ids and enum words, numbers, and
/// times near the sim clock in the formats the clouds use (RFC 3339 `Z`, and Tencent's/JD's own).
#[derive(Arbitrary, Debug)]
enum Scalar {
    Word(Word),
    Int(i64),
    Small(u8),
    Float(f64),
    Bool(bool),
    /// Minutes from the sim clock's now, `2026-12-01T10:00:00Z`.
    TimeZ(i32),
    /// Minutes from now, `2026-12-01 10:00:00`.
    TimeSpace(i32),
    /// Minutes from now, `2026-12-01T10:00:00+08:00`.
    TimeOffset(i32),
}

impl Scalar {
    fn text(&self, now: jiff::Timestamp) -> String {
        let at = |m: &i32, fmt: &str, tz: jiff::tz::TimeZone| {
            let t = now.checked_add(SignedDuration::from_mins(i64::from(*m))).unwrap_or(now);
            t.to_zoned(tz).strftime(fmt).to_string()
        };
        match self {
            Scalar::Word(w) => w.get(),
            Scalar::Int(n) => n.to_string(),
            Scalar::Small(n) => n.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::TimeZ(m) => at(m, "%Y-%m-%dT%H:%M:%SZ", jiff::tz::TimeZone::UTC),
            Scalar::TimeSpace(m) => {
                at(m, "%Y-%m-%d %H:%M:%S", jiff::tz::TimeZone::fixed(jiff::tz::offset(8)))
            }
            Scalar::TimeOffset(m) => {
                at(m, "%Y-%m-%dT%H:%M:%S%:z", jiff::tz::TimeZone::fixed(jiff::tz::offset(8)))
            }
        }
    }

    fn json(&self, now: jiff::Timestamp) -> Value {
        match self {
            Scalar::Int(n) => Value::from(*n),
            Scalar::Small(n) => Value::from(*n),
            Scalar::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Scalar::Bool(b) => Value::Bool(*b),
            other => Value::String(other.text(now)),
        }
    }
}

/// A JSON value; depth is capped when rendered so the harness itself cannot recurse too deep.
#[derive(Arbitrary, Debug)]
enum Json {
    Null,
    Scalar(Scalar),
    List(Vec<Json>),
    Object(Vec<(Word, Json)>),
}

impl Json {
    fn render(&self, now: jiff::Timestamp, depth: u8) -> Value {
        if depth > 6 {
            return Value::Null;
        }
        match self {
            Json::Null => Value::Null,
            Json::Scalar(s) => s.json(now),
            Json::List(items) => Value::Array(items.iter().map(|j| j.render(now, depth + 1)).collect()),
            Json::Object(fields) => object(fields, now, depth + 1),
        }
    }
}

/// Fields into an object; a dotted name (`Placement.Zone`, as the readers address nested fields)
/// becomes nested objects, merged with what is already there.
fn object(fields: &[(Word, Json)], now: jiff::Timestamp, depth: u8) -> Value {
    let mut root = Map::new();
    for (name, value) in fields {
        let name = name.get();
        let mut parts: Vec<&str> = name.split('.').collect();
        let last = parts.pop().unwrap_or_default();
        let mut at = &mut root;
        for part in parts {
            let slot = at.entry(part.to_string()).or_insert_with(|| Value::Object(Map::new()));
            if !slot.is_object() {
                *slot = Value::Object(Map::new());
            }
            let Value::Object(inner) = slot else { unreachable!("made an object just above") };
            at = inner;
        }
        at.insert(last.to_string(), value.render(now, depth));
    }
    Value::Object(root)
}

/// A request body: parameters as a JSON object (what the clouds' SDKs send), or any bytes.
#[derive(Arbitrary, Debug)]
enum Body {
    Fields(Vec<(Word, Json)>),
    Bytes(Vec<u8>),
}

impl Body {
    fn bytes(&self, now: jiff::Timestamp) -> Vec<u8> {
        match self {
            Body::Fields(f) => object(f, now, 0).to_string().into_bytes(),
            Body::Bytes(b) => b.clone(),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Step {
    /// Tencent CVM (`cbs` false) or CBS, TC3-signed JSON POST.
    Tencent { cbs: bool, action: Word, region: u8, body: Body },
    /// Alibaba ECS: flat parameters (`Tag.1.Key=…`) in the query, ACS3 header or RPC `Signature`.
    Alibaba { rpc: bool, action: Word, region: u8, params: Vec<(Word, Scalar)> },
    /// JD Cloud: method + `/v1/regions/{region}/{first}[/{id}]` with query and JSON body, JDCLOUD3.
    Jd {
        method: u8,
        service: u8,
        region: u8,
        first: Word,
        id: Option<Word>,
        query: Vec<(Word, Scalar)>,
        body: Body,
    },
    /// Any request at all, unsigned or badly signed.
    Raw { method: String, path: String, raw_query: String, headers: Vec<(String, String)>, body: Vec<u8> },
    /// Move the sim clock forward by up to a day (boots finish, release times pass).
    Advance(u16),
}

#[derive(Arbitrary, Debug)]
struct Input {
    steps: Vec<Step>,
}

struct Harness {
    sim: Sim,
    regions: [Vec<String>; 3],
}

impl Harness {
    fn new() -> Self {
        let sim = Sim::new(SimConfig::default());
        let regions = gpuctl_simkit::Provider::ALL.map(|p| sim.ctx().regions(p));
        Self { sim, regions }
    }

    fn region(&self, cloud: usize, pick: u8) -> String {
        let r = &self.regions[cloud];
        if r.is_empty() {
            return String::new();
        }
        // One value in 16 is a region the cloud does not have.
        if pick % 16 == 15 {
            return "xx-nowhere-1".into();
        }
        r[pick as usize % r.len()].clone()
    }
}

thread_local! {
    static HARNESS: RefCell<Harness> = RefCell::new(Harness::new());
    static NONCE: Cell<u64> = const { Cell::new(0) };
}

/// A nonce never used before in this process: replay refusals stay the exception, not the rule.
fn nonce() -> String {
    NONCE.with(|n| {
        n.set(n.get() + 1);
        format!("gpuctl-fuzz-{}", n.get())
    })
}

/// Sign with the documented test pair of `cloud` (0 Tencent, 1 Alibaba, 2 JD) at the sim's now.
fn signed(
    cloud: usize,
    req: SignableRequest,
    mut params: SigningParams,
    now: jiff::Timestamp,
) -> Option<SimRequest> {
    let (_, ak, sk) = TEST_KEY_PAIRS[cloud];
    params.time = now.as_second();
    // Signing refuses only incomplete parameters (say an empty action); such a call is not sent.
    let s = gpuctl_sign::sign(&req, &Credentials::new(ak, sk), &params).ok()?;
    let mut out = SimRequest::new(&s.method, &s.path).with_body(s.body.clone());
    out.raw_query = s.raw_query.clone();
    out.headers = s.headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone())).collect();
    Some(out)
}

fn request(h: &Harness, step: &Step) -> Option<SimRequest> {
    let now = h.sim.ctx().now();
    let host = "127.0.0.1:8090".to_string();
    let params = |algorithm, region: String, service: &str, action: String, version: &str| SigningParams {
        algorithm,
        time: 0,
        nonce: nonce(),
        region,
        service: service.into(),
        action,
        version: version.into(),
    };
    match step {
        Step::Tencent { cbs, action, region, body } => {
            let req = SignableRequest {
                method: "POST".into(),
                scheme: "http".into(),
                host,
                path: "/".into(),
                headers: vec![("Content-Type".into(), "application/json".into())],
                body: body.bytes(now),
                ..Default::default()
            };
            let service = if *cbs { "cbs" } else { "cvm" };
            signed(
                0,
                req,
                params(Algorithm::Tc3, h.region(0, *region), service, action.from(ACTIONS), "2017-03-12"),
                now,
            )
        }
        Step::Alibaba { rpc, action, region, params: fields } => {
            let mut query = vec![("RegionId".to_string(), h.region(1, *region))];
            query.extend(fields.iter().map(|(k, v)| (k.get(), v.text(now))));
            let (method, algorithm) =
                if *rpc { ("GET", Algorithm::AlibabaRpcV2) } else { ("POST", Algorithm::Acs3) };
            let req = SignableRequest {
                method: method.into(),
                scheme: "http".into(),
                host,
                path: "/".into(),
                query,
                ..Default::default()
            };
            signed(1, req, params(algorithm, String::new(), "", action.from(ACTIONS), "2014-05-26"), now)
        }
        Step::Jd { method, service, region, first, id, query, body } => {
            let method = ["GET", "POST", "DELETE", "PATCH"][*method as usize % 4];
            let region = h.region(2, *region);
            // A route segment, and maybe an id after it (`instances/{id}`; any string, or a word).
            let mut tail = vec![first.from(SEGMENTS)];
            tail.extend(id.as_ref().map(Word::get));
            let req = SignableRequest {
                method: method.into(),
                scheme: "http".into(),
                host,
                path: format!("/v1/regions/{region}/{}", tail.join("/")),
                query: query.iter().map(|(k, v)| (k.get(), v.text(now))).collect(),
                headers: vec![("Content-Type".into(), "application/json".into())],
                body: if method == "GET" || method == "DELETE" { Vec::new() } else { body.bytes(now) },
            };
            let service = ["vm", "disk", "billing"][*service as usize % 3];
            signed(2, req, params(Algorithm::JdCloud3, region, service, String::new(), ""), now)
        }
        Step::Raw { method, path, raw_query, headers, body } => Some(SimRequest {
            method: method.clone(),
            path: path.clone(),
            raw_query: raw_query.clone(),
            headers: headers.clone(),
            body: bytes::Bytes::from(body.clone()),
            peer: None,
        }),
        Step::Advance(_) => None,
    }
}

fuzz_target!(|input: Input| {
    HARNESS.with(|cell| {
        // The clock only runs forward; past a month of moves, start a fresh sim so times stay sane.
        if cell.borrow().sim.ctx().clock().offset() > SignedDuration::from_hours(24 * 30) {
            *cell.borrow_mut() = Harness::new();
        }
        let h = cell.borrow();
        // Each input is its own session: a crash replays from its input alone.
        h.sim.reset();
        for step in input.steps.iter().take(6) {
            if let Step::Advance(minutes) = step {
                h.sim.ctx().clock().advance(SignedDuration::from_mins(i64::from(*minutes % 1440)));
                continue;
            }
            if let Some(req) = request(&h, step) {
                let c = h.sim.call(&req);
                // GPUCTL_FUZZ_TRACE=1 when replaying a corpus: what each call was answered, to see
                // which parsers the inputs reach (a refusal at auth or routing means they do not).
                if std::env::var_os("GPUCTL_FUZZ_TRACE").is_some() {
                    if let gpuctl_sim::Outcome::Respond(r) = &c.outcome {
                        eprintln!(
                            "{} {} -> {}",
                            req.method,
                            req.path,
                            String::from_utf8_lossy(&r.body).chars().take(300).collect::<String>()
                        );
                    }
                }
            }
        }
    });
});
