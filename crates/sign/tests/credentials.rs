//! Credential loading against temporary home directories (never the real environment).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use gpuctl_sign::credentials::{load, CredentialsError, Env, Provider, Source};

fn env(home: &Path, vars: &[(&str, &str)]) -> Env {
    Env {
        vars: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>(),
        home: Some(home.to_path_buf()),
    }
}

fn write(home: &Path, rel: &str, text: &str, mode: u32) {
    let p = home.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
    }
    #[cfg(not(unix))]
    let _ = mode;
}

#[test]
fn environment_variables_come_first() {
    let home = tempfile::tempdir().unwrap();
    write(home.path(), ".tccli/default.credential", r#"{"secretId":"FILEID","secretKey":"FILEKEY"}"#, 0o600);
    let e = env(
        home.path(),
        &[
            ("TENCENTCLOUD_SECRET_ID", "ENVID"),
            ("TENCENTCLOUD_SECRET_KEY", "ENVKEY"),
            ("TENCENTCLOUD_SECURITY_TOKEN", "TOK"),
        ],
    );
    let l = load(Provider::Tencent, None, &e).unwrap();
    assert_eq!(l.credentials.access_key_id, "ENVID");
    assert_eq!(l.credentials.secret.expose(), "ENVKEY");
    assert_eq!(l.credentials.security_token.as_ref().unwrap().expose(), "TOK");
    assert!(matches!(l.source, Source::EnvVars { id_var: "TENCENTCLOUD_SECRET_ID", .. }));

    // An explicit profile skips the environment.
    let l = load(Provider::Tencent, Some("default"), &e).unwrap();
    assert_eq!(l.credentials.access_key_id, "FILEID");

    for (cloud, id, secret) in [
        (Provider::Alibaba, "ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET"),
        (Provider::JdCloud, "JDCLOUD_ACCESS_KEY", "JDCLOUD_SECRET_KEY"),
    ] {
        let l = load(cloud, None, &env(home.path(), &[(id, "I"), (secret, "S")])).unwrap();
        assert_eq!(
            (l.credentials.access_key_id.as_str(), l.credentials.secret.expose()),
            ("I", "S"),
            "{cloud}"
        );
    }
}

#[test]
fn tccli_file_with_region_and_permission_warning() {
    let home = tempfile::tempdir().unwrap();
    write(
        home.path(),
        ".tccli/work.credential",
        r#"{"secretId":"AKIDW","secretKey":"KEYW","token":""}"#,
        0o644,
    );
    write(home.path(), ".tccli/work.configure", r#"{"region":"ap-shanghai","output":"json"}"#, 0o644);
    let l = load(Provider::Tencent, Some("work"), &env(home.path(), &[])).unwrap();
    assert_eq!(l.credentials.access_key_id, "AKIDW");
    assert_eq!(l.region.as_deref(), Some("ap-shanghai"));
    assert!(l.credentials.security_token.is_none());
    #[cfg(unix)]
    {
        assert_eq!(l.warnings.len(), 1, "{:?}", l.warnings);
        assert!(l.warnings[0].contains("chmod 600"), "{}", l.warnings[0]);
        write(home.path(), ".tccli/work.credential", r#"{"secretId":"AKIDW","secretKey":"KEYW"}"#, 0o600);
        assert!(load(Provider::Tencent, Some("work"), &env(home.path(), &[])).unwrap().warnings.is_empty());
    }
}

const ALIYUN: &str = r#"{
  "current": "prod",
  "profiles": [
    {"name": "default", "mode": "AK", "access_key_id": "LTAIdef", "access_key_secret": "secdef", "region_id": "cn-hangzhou"},
    {"name": "prod", "mode": "StsToken", "access_key_id": "STS.prod", "access_key_secret": "secprod", "sts_token": "tokprod", "region_id": "cn-beijing"},
    {"name": "role", "mode": "RamRoleArn", "access_key_id": "LTAIr", "access_key_secret": "secrole", "ram_role_arn": "acs:ram::1:role/x"}
  ]
}"#;

#[test]
fn aliyun_profiles() {
    let home = tempfile::tempdir().unwrap();
    write(home.path(), ".aliyun/config.json", ALIYUN, 0o600);
    let l = load(Provider::Alibaba, None, &env(home.path(), &[])).unwrap();
    assert_eq!(l.credentials.access_key_id, "STS.prod");
    assert_eq!(l.credentials.security_token.unwrap().expose(), "tokprod");
    assert_eq!(l.region.as_deref(), Some("cn-beijing"));

    let l =
        load(Provider::Alibaba, None, &env(home.path(), &[("ALIBABA_CLOUD_PROFILE", "default")])).unwrap();
    assert_eq!(l.credentials.access_key_id, "LTAIdef");

    let err = load(Provider::Alibaba, Some("role"), &env(home.path(), &[])).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("RamRoleArn"), "{text}");
    assert!(!text.contains("secrole"), "{text}");
}

#[test]
fn jdc_config_and_current() {
    let home = tempfile::tempdir().unwrap();
    write(
        home.path(),
        ".jdc/config",
        "[default]\naccess_key = AKdef\nsecret_key = SKdef\nregion_id = cn-north-1\n\n[east]\naccess_key = AKeast\nsecret_key = SKeast\nregion_id = cn-east-2\nendpoint = www.jdcloud-api.com\n",
        0o600,
    );
    let e = env(home.path(), &[]);
    assert_eq!(load(Provider::JdCloud, None, &e).unwrap().credentials.access_key_id, "AKdef");
    write(home.path(), ".jdc/current", "east\n", 0o644);
    let l = load(Provider::JdCloud, None, &e).unwrap();
    assert_eq!(l.credentials.access_key_id, "AKeast");
    assert_eq!(l.region.as_deref(), Some("cn-east-2"));
}

#[test]
fn gpuctl_file_is_the_fallback() {
    let home = tempfile::tempdir().unwrap();
    write(
        home.path(),
        ".config/gpuctl/credentials.toml",
        "[default.jdcloud]\naccess_key_id = \"AKg\"\naccess_key_secret = \"SKg\"\n\n[lab.tencent]\naccess_key_id = \"AKIDlab\"\naccess_key_secret = \"SKlab\"\nregion = \"ap-beijing\"\n",
        0o600,
    );
    let e = env(home.path(), &[]);
    assert_eq!(load(Provider::JdCloud, None, &e).unwrap().credentials.access_key_id, "AKg");
    let l = load(Provider::Tencent, Some("lab"), &e).unwrap();
    assert_eq!(l.credentials.access_key_id, "AKIDlab");
    assert_eq!(l.region.as_deref(), Some("ap-beijing"));

    // XDG_CONFIG_HOME moves it.
    let xdg = tempfile::tempdir().unwrap();
    let e2 = env(home.path(), &[("XDG_CONFIG_HOME", xdg.path().to_str().unwrap())]);
    assert!(matches!(load(Provider::JdCloud, None, &e2), Err(CredentialsError::NotFound { .. })));
}

#[test]
fn not_found_lists_where_it_looked() {
    let home = tempfile::tempdir().unwrap();
    let err = load(Provider::Alibaba, None, &env(home.path(), &[])).unwrap_err();
    let text = err.to_string();
    for needle in [
        "$ALIBABA_CLOUD_ACCESS_KEY_ID",
        ".aliyun/config.json",
        "gpuctl/credentials.toml",
        "[default.alibaba]",
    ] {
        assert!(text.contains(needle), "{needle} missing from: {text}");
    }
}

#[test]
fn parse_errors_give_a_position_and_never_the_secret() {
    let home = tempfile::tempdir().unwrap();
    write(
        home.path(),
        ".config/gpuctl/credentials.toml",
        "[default.tencent]\naccess_key_id = \"AKID\"\naccess_key_secret = \"TOPSECRET-123\n",
        0o600,
    );
    let err = load(Provider::Tencent, None, &env(home.path(), &[])).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, CredentialsError::Parse { line: 3, .. }), "{text}");
    assert!(!text.contains("TOPSECRET"), "{text}");
    assert!(!format!("{err:?}").contains("TOPSECRET"));

    write(
        home.path(),
        ".tccli/default.credential",
        "{\"secretId\": \"A\",\n \"secretKey\": \"TOPSECRET-9\" oops}",
        0o600,
    );
    let err = load(Provider::Tencent, None, &env(home.path(), &[])).unwrap_err();
    assert!(matches!(err, CredentialsError::Parse { line: 2, .. }), "{err}");
    assert!(!err.to_string().contains("TOPSECRET"));

    write(home.path(), ".jdc/config", "[default]\naccess_key AKX TOPSECRET\n", 0o600);
    let err = load(Provider::JdCloud, None, &env(home.path(), &[])).unwrap_err();
    assert!(matches!(err, CredentialsError::Parse { line: 2, .. }), "{err}");
    assert!(!err.to_string().contains("TOPSECRET"));
}

#[test]
fn a_secret_of_the_wrong_type_is_not_quoted_back() {
    let home = tempfile::tempdir().unwrap();
    write(
        home.path(),
        ".config/gpuctl/credentials.toml",
        "[default.tencent]\naccess_key_id = \"AKID\"\naccess_key_secret = 73509824611\n",
        0o600,
    );
    let err = load(Provider::Tencent, None, &env(home.path(), &[])).unwrap_err();
    let text = err.to_string();
    assert!(text.ends_with("[default.tencent]: invalid type: integer, expected a string"), "{text}");
    assert!(!text.contains("73509824611") && !format!("{err:?}").contains("73509824611"), "{text}");
}
