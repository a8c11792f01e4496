//! Signing and verification cost per scheme, on requests shaped like gpuctl's real calls
//! (`cargo bench -p gpuctl-sign --bench sign`).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use gpuctl_sign::{sign, verify, Algorithm, Credentials, Secret, SignableRequest, SigningParams};

fn request(alg: Algorithm) -> SignableRequest {
    let body = match alg {
        // A RunInstances-sized JSON body (~1 KiB).
        Algorithm::Tc3 | Algorithm::JdCloud3 | Algorithm::JdCloud2 => {
            let mut b = String::from(
                r#"{"InstanceType":"GN7.2XLARGE32","Placement":{"Zone":"ap-beijing-7"},"Tags":["#,
            );
            for i in 0..24 {
                b.push_str(&format!(r#"{{"Key":"gpuctl-{i}","Value":"deployment-stage2-{i}"}},"#));
            }
            b.push_str(r#"{"Key":"end","Value":"x"}]}"#);
            b.into_bytes()
        }
        _ => Vec::new(),
    };
    // Alibaba RPC-style calls put every parameter in the query.
    let query = (1..=12).map(|i| (format!("DataDisk.{i}.Size"), format!("{}", 100 * i))).collect();
    SignableRequest {
        method: "POST".into(),
        scheme: "https".into(),
        host: "api.example.com".into(),
        path: "/v1/regions/cn-north-1/instances".into(),
        query,
        headers: vec![],
        body,
    }
}

fn params(alg: Algorithm) -> SigningParams {
    SigningParams {
        algorithm: alg,
        time: 1_717_243_200,
        nonce: "ebf8b26d-c3be-402f-9f10-f8b6573fd823".into(),
        region: "cn-north-1".into(),
        service: "vm".into(),
        action: "RunInstances".into(),
        version: "2017-03-12".into(),
    }
}

fn bench(c: &mut Criterion) {
    let creds = Credentials::new("AKIDEXAMPLE", "secret-key-example-0123456789");
    for alg in Algorithm::ALL {
        let req = request(alg);
        let p = params(alg);
        c.bench_function(&format!("sign/{}", alg.name()), |b| {
            b.iter(|| sign(black_box(&req), &creds, &p).unwrap())
        });
        let incoming = sign(&req, &creds, &p).unwrap().to_incoming();
        let lookup = |_: &str| Some(Secret::new("secret-key-example-0123456789"));
        c.bench_function(&format!("verify/{}", alg.name()), |b| {
            b.iter(|| verify(black_box(&incoming), lookup, 1_717_243_200, 300).unwrap())
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
