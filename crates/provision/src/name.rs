//! Deployment and pool names: the one rule for what a name may be, and the one way gpuctl makes a
//! name from something else (a clone's deployment from its source). A name goes into the clouds'
//! tags, instance names and client tokens, and into the lock file's name next to the state store, so
//! it is kept to what all three clouds accept in every one of those places and what is safe in a path.

/// The longest deployment name: with a pool name and an index it still fits the instance-name and
/// tag-value limits of the three clouds.
pub const DEPLOYMENT_MAX: usize = 40;
/// The longest pool name.
pub const POOL_MAX: usize = 24;

/// 1–`max` characters of a-z, 0-9 and '-', a letter first and no '-' last.
pub fn is_valid(s: &str, max: usize) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z'))
        && s.len() <= max
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-'))
        && !s.ends_with('-')
}

/// Makes a valid name of at most `max` characters from any text: lower-cased, every other character a
/// '-', `c-` in front when it does not start with a letter, cut to `max` and no '-' at the end.
pub fn normalize(s: &str, max: usize) -> String {
    let mut out: String =
        s.to_ascii_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    if !out.starts_with(|c: char| c.is_ascii_lowercase()) {
        out.insert_str(0, "c-");
    }
    out.truncate(max);
    out.trim_end_matches('-').to_string()
}

/// The deployment a clone's copies go into when none is given: `<source deployment>-clone` for an
/// instance gpuctl recorded, `clone-<instance id>` for one it did not create.
pub fn clone_deployment(source_deployment: Option<&str>, instance_id: &str) -> String {
    match source_deployment {
        Some(d) => normalize(&format!("{d}-clone"), DEPLOYMENT_MAX),
        None => normalize(&format!("clone-{instance_id}"), DEPLOYMENT_MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_spec_names() {
        assert_eq!(normalize("clone-i-ABC_123", 40), "clone-i-abc-123");
        assert_eq!(normalize("9lives", 40), "c-9lives");
        assert_eq!(normalize("stage1-clone", 8), "stage1-c");
    }

    #[test]
    fn made_names_are_valid_names() {
        for s in
            ["clone-i-ABC_123", "9lives", "stage1-clone", "a--", "-x-", "日本", "", "i-0123456789abcdef0"]
        {
            let n = normalize(s, DEPLOYMENT_MAX);
            assert!(is_valid(&n, DEPLOYMENT_MAX), "{s:?} -> {n:?}");
        }
        assert_eq!(clone_deployment(Some("stage1"), "ins-1"), "stage1-clone");
        assert_eq!(clone_deployment(None, "ins-ABC"), "clone-ins-abc");
        let long = "a".repeat(DEPLOYMENT_MAX);
        assert!(is_valid(&clone_deployment(Some(&long), "x"), DEPLOYMENT_MAX));
    }

    #[test]
    fn the_rule() {
        assert!(is_valid("stage1", DEPLOYMENT_MAX));
        assert!(is_valid("a", 1));
        assert!(!is_valid("", DEPLOYMENT_MAX));
        assert!(!is_valid("1a", DEPLOYMENT_MAX));
        assert!(!is_valid("a-", DEPLOYMENT_MAX));
        assert!(!is_valid("A", DEPLOYMENT_MAX));
        assert!(!is_valid("a/b", DEPLOYMENT_MAX));
        assert!(!is_valid("ab", 1));
    }
}
