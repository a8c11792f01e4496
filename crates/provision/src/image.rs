//! Images by name (issue 13): `image = "ubuntu-22.04"` or `image = { os = "ubuntu-22.04", gpu_driver =
//! true }`, resolved per cloud and region through the cloud's public-image listing
//! ([`gpuctl_cloud::Cloud::public_images`]), while an id is used as-is.
//!
//! Which values are names: `<family>-<version>` with a family from [`FAMILIES`] and a version of digits
//! and dots (`ubuntu-22.04`, `rocky-9`, `centos-7.9`). No cloud's image id has that shape — Tencent's
//! are `img-` + 8 characters, Alibaba's public ones `ubuntu_22_04_x64_20G_alibase_….vhd` (underscores)
//! and custom ones `m-…`, JD's UUIDs or `img-…` — and `img` is not a family, so one rule serves every
//! cloud and no id is ever read as a name.
//!
//! Which image a name picks, deterministically: among the region's public images of that family whose
//! version is the one asked for (or a point release of it: `ubuntu-18.04` takes `18.04.1`), with an
//! NVIDIA driver in the image when `gpu_driver = true` and without one otherwise, the newest by the
//! cloud's creation time; equal times fall to the smaller id.

use std::collections::BTreeMap;

#[cfg(test)]
use gpuctl_cloud::cloud::gpu_from_name;
use gpuctl_cloud::cloud::ImageInfo;
use gpuctl_cloud::Provider;

use crate::apply::ApplyError;

/// The families a name may start with, and the cloud `Platform` spellings each matches (lowercase,
/// spaces dropped): Tencent's `Platform` ("TencentOS、CentOS、Ubuntu…", tccli 3.1.189.1
/// `cvm/v20170312/api.json` Image.Platform), Alibaba's (`Aliyun` for Alibaba Cloud Linux,
/// alibabacloud_ecs20140526 7.11.8 `_describe_images_response_body.py` Platform) and JD's
/// (`Ubuntu、CentOS…`, jdcloud_sdk 1.6.354 `services/vm/models/Image.py` platform).
pub const FAMILIES: &[(&str, &[&str])] = &[
    ("ubuntu", &["ubuntu"]),
    ("debian", &["debian"]),
    ("centos", &["centos"]),
    ("rocky", &["rockylinux", "rocky"]),
    ("tencentos", &["tencentos"]),
    ("alinux", &["aliyun", "alibabacloudlinux"]),
];

/// The forms `image` takes, for errors.
pub const FORMS: &str = "an image id as-is (img-…, m-…, ubuntu_22_04_x64_…vhd, a JD image id), a name such as \"ubuntu-22.04\", or { os = \"ubuntu-22.04\", gpu_driver = true }";

/// A name's family and version, or `None` when the value is an id.
pub fn name_parts(value: &str) -> Option<(&'static str, &str)> {
    let (family, version) = value.split_once('-')?;
    let family = FAMILIES.iter().map(|(f, _)| *f).find(|f| *f == family)?;
    let digits_and_dots = !version.is_empty()
        && version.split('.').all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    digits_and_dots.then_some((family, version))
}

/// True when `value` is an image name, not an id.
pub fn is_name(value: &str) -> bool {
    name_parts(value).is_some()
}

/// The image's family, by its platform.
fn family_of(img: &ImageInfo) -> Option<&'static str> {
    let platform = img.platform.to_lowercase().replace(' ', "");
    FAMILIES.iter().find(|(_, spellings)| spellings.contains(&platform.as_str())).map(|(f, _)| *f)
}

/// The image's version: the first digits-and-dots word of its OS text (then of its name) that has a
/// dot or stands alone (so `64bit` is not one).
fn version_of(img: &ImageInfo) -> Option<String> {
    [&img.os, &img.name].into_iter().find_map(|text| {
        text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .map(|w| w.trim_matches('.'))
            .find(|w| !w.is_empty() && w.bytes().any(|b| b.is_ascii_digit()))
            .map(str::to_owned)
    })
}

/// The name an image answers to (`ubuntu-22.04`), when it has a known family and a version.
pub fn name_of(img: &ImageInfo) -> Option<String> {
    Some(format!("{}-{}", family_of(img)?, version_of(img)?))
}

/// One name resolved on one cloud and region: what the plan shows and the create uses.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ResolvedImage {
    /// The spec's value (`ubuntu-22.04`).
    pub given: String,
    pub id: String,
    /// The cloud's name for it (`Ubuntu Server 22.04 LTS 64bit`).
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda: Option<String>,
}

/// Picks the image `given` names from a region's public images (the rule is in the module doc), or
/// says why not with the closest names the region has and the forms `image` takes.
pub fn choose(
    provider: Provider,
    region: &str,
    given: &str,
    gpu_driver: bool,
    images: &[ImageInfo],
) -> Result<ResolvedImage, String> {
    let Some((family, version)) = name_parts(given) else {
        return Err(format!("`{given}` is not an image name; image takes {FORMS}"));
    };
    let version_fits =
        |v: &str| v == version || v.strip_prefix(version).is_some_and(|rest| rest.starts_with('.'));
    let best = images
        .iter()
        .filter(|i| family_of(i) == Some(family))
        .filter(|i| version_of(i).is_some_and(|v| version_fits(&v)))
        .filter(|i| i.driver.is_some() == gpu_driver)
        .max_by(|a, b| a.created.cmp(&b.created).then_with(|| b.id.cmp(&a.id)));
    if let Some(i) = best {
        return Ok(ResolvedImage {
            given: given.to_owned(),
            id: i.id.clone(),
            name: i.name.clone(),
            driver: i.driver.clone(),
            cuda: i.cuda.clone(),
        });
    }
    let mut names: Vec<String> =
        images.iter().filter(|i| i.driver.is_some() == gpu_driver).filter_map(name_of).collect();
    names.sort();
    names.dedup();
    let close = gpuctl_core::suggest::suggest(given, names.iter().map(String::as_str));
    let hint = if close.is_empty() { String::new() } else { format!("closest: {}; ", close.join(", ")) };
    let kind = if gpu_driver { "public image with an NVIDIA driver" } else { "public image" };
    Err(format!(
        "no {kind} named `{given}` on {provider} in {region} ({hint}this region has: {}); image takes {FORMS}",
        if names.is_empty() { "none".to_owned() } else { names.join(", ") }
    ))
}

/// The clouds a spec's pools may land on whose image there is a name: the clouds `plan` must ask.
pub fn providers_by_name(spec: &crate::spec::Spec, catalog: &gpuctl_core::Catalog) -> Vec<Provider> {
    crate::plan::providers(spec, catalog)
        .into_iter()
        .filter(|p| spec.pools.iter().any(|pool| pool.image.for_provider(*p).is_some_and(|v| is_name(v))))
        .collect()
}

impl crate::apply::Engine {
    /// Resolves every image *name* in the plan on the cloud and region of each choice (one listing per
    /// cloud and region), so the plan shows the id and name each instance will boot and apply creates
    /// with that id. Choices whose image is an id are left as they are; a pool whose name matches
    /// nowhere fails the plan with the names the region has. Also checks the pool's `env.cuda`/
    /// `env.driver` against what a resolved image says of its driver and CUDA.
    pub async fn resolve_images(&self, plan: &mut crate::plan::Plan) -> Result<(), ApplyError> {
        let mut listed: BTreeMap<(Provider, String), Vec<ImageInfo>> = BTreeMap::new();
        let mut errors = Vec::new();
        for pool in &mut plan.pools {
            let mut checked = false;
            for c in &mut pool.choices {
                let Some(given) = pool.pool.image.for_provider(c.provider).filter(|v| is_name(v)) else {
                    continue;
                };
                let key = (c.provider, c.region.clone());
                if !listed.contains_key(&key) {
                    let cloud = self.cloud(c.provider)?;
                    let region = c.region.clone();
                    let images = self
                        .call(c.provider, "public_images", &region, || cloud.public_images(&region))
                        .await?;
                    listed.insert(key.clone(), images);
                }
                match choose(c.provider, &c.region, given, pool.pool.image_gpu_driver, &listed[&key]) {
                    Ok(r) => {
                        if let Some(env) = &pool.pool.env {
                            plan.warnings.extend(env_against_image(&pool.name, env, c.provider, &r));
                            checked = true;
                        }
                        c.image = Some(r);
                    }
                    Err(e) => errors.push(format!("pool `{}`: {e}", pool.name)),
                }
            }
            if checked {
                // The image is known now: the plan's "not checked against the image" no longer holds.
                let unchecked = format!("pool `{}`: env ", pool.name);
                plan.warnings
                    .retain(|w| !(w.starts_with(&unchecked) && w.contains("not checked against the image")));
            }
        }
        plan.warnings.dedup();
        if errors.is_empty() {
            Ok(())
        } else {
            errors.dedup();
            Err(ApplyError::Other(errors.join("\n")))
        }
    }
}

/// `env.cuda`/`env.driver` against a resolved image, by gpuctl-core's rules: the image's driver must be
/// at least the one asked for and at least the one the CUDA asked for needs
/// (`compat::min_driver_for`); the image's CUDA at least the one asked for. An image that does not
/// say its driver (a plain OS image) cannot break them here: the boot script checks the host.
fn env_against_image(
    pool: &str,
    env: &crate::spec::Env,
    provider: Provider,
    img: &ResolvedImage,
) -> Vec<String> {
    let mut out = Vec::new();
    let older = |have: &str, want: &str| version_key(have) < version_key(want);
    let at = format!("pool `{pool}`: env on {provider} image {} ({})", img.id, img.name);
    if let Some(have) = &img.driver {
        if let Some(want) = &env.driver {
            if older(have, &want.value) {
                out.push(format!(
                    "{at}: the image's NVIDIA driver {have} is older than driver = \"{}\"",
                    want.value
                ));
            }
        }
        if let Some(min) = env.cuda.as_ref().and_then(|c| gpuctl_core::compat::min_driver_for(&c.value)) {
            if older(have, min) {
                let cuda = env.cuda.as_ref().map(|c| c.value.as_str()).unwrap_or_default();
                out.push(format!("{at}: CUDA {cuda} needs NVIDIA driver ≥ {min}; the image ships {have}"));
            }
        }
    }
    if let (Some(have), Some(want)) = (&img.cuda, &env.cuda) {
        if older(have, &want.value) {
            out.push(format!("{at}: the image's CUDA {have} is older than cuda = \"{}\"", want.value));
        }
    }
    out
}

/// A dotted version as numbers, so `535.161` sorts above `470.199` and `12.10` above `12.2`.
fn version_key(v: &str) -> Vec<u64> {
    v.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn img(id: &str, name: &str, platform: &str, os: &str, created: &str) -> ImageInfo {
        let (driver, cuda) = gpu_from_name(name);
        ImageInfo {
            id: id.into(),
            name: name.into(),
            platform: platform.into(),
            os: os.into(),
            created: Some(created.into()),
            driver,
            cuda,
        }
    }

    #[test]
    fn names_and_ids_never_overlap() {
        for name in ["ubuntu-22.04", "rocky-9", "centos-7.9", "alinux-3", "tencentos-3.1", "debian-12"] {
            assert!(is_name(name), "{name}");
        }
        for id in [
            "img-pi0ii46r",
            "img-12345678",
            "img-1",
            "m-bp1abc",
            "ubuntu_22_04_x64_20G_alibase_20240926.vhd",
            "img-ubuntu2204",
            "8b8cbd18-c1f6-4b3c-9a5c-0e7c0f9b1f3a",
            "ubuntu-",
            "ubuntu-22.",
            "ubuntu-latest",
            "windows-2022",
        ] {
            assert!(!is_name(id), "{id}");
        }
    }

    #[test]
    fn the_newest_matching_image_wins_and_gpu_images_only_when_asked() {
        let images = [
            img(
                "img-old",
                "Ubuntu Server 22.04 LTS 64bit",
                "Ubuntu",
                "Ubuntu Server 22.04 LTS 64bit",
                "2023-01-01T00:00:00Z",
            ),
            img(
                "img-new",
                "Ubuntu Server 22.04 LTS 64bit",
                "Ubuntu",
                "Ubuntu Server 22.04 LTS 64bit",
                "2024-06-01T00:00:00Z",
            ),
            img(
                "img-gpu",
                "Ubuntu Server 22.04 LTS 64bit GPU Driver 535.161.07 CUDA 12.2",
                "Ubuntu",
                "Ubuntu Server 22.04 LTS 64bit",
                "2025-01-01T00:00:00Z",
            ),
            img(
                "img-1804",
                "Ubuntu Server 18.04.1 LTS 64bit",
                "Ubuntu",
                "Ubuntu Server 18.04.1 LTS 64bit",
                "2020-01-01T00:00:00Z",
            ),
        ];
        let r = choose(Provider::Tencent, "ap-guangzhou", "ubuntu-22.04", false, &images).unwrap();
        assert_eq!((r.id.as_str(), r.driver), ("img-new", None));
        let r = choose(Provider::Tencent, "ap-guangzhou", "ubuntu-22.04", true, &images).unwrap();
        assert_eq!(
            (r.id.as_str(), r.driver.as_deref(), r.cuda.as_deref()),
            ("img-gpu", Some("535.161.07"), Some("12.2"))
        );
        assert_eq!(choose(Provider::Tencent, "r", "ubuntu-18.04", false, &images).unwrap().id, "img-1804");
        let e = choose(Provider::Tencent, "ap-guangzhou", "ubuntu-22.10", false, &images).unwrap_err();
        assert!(e.contains("closest: ubuntu-22.04") && e.contains("gpu_driver = true"), "{e}");
        let e = choose(Provider::Tencent, "ap-guangzhou", "ubuntu-18.04", true, &images).unwrap_err();
        assert!(e.contains("NVIDIA driver") && e.contains("ubuntu-22.04"), "{e}");
    }

    #[test]
    fn driver_and_cuda_come_from_the_name() {
        assert_eq!(
            gpu_from_name("Ubuntu 22.04 GPU Driver 550.54.15 CUDA 12.4"),
            (Some("550.54.15".into()), Some("12.4".into()))
        );
        assert_eq!(gpu_from_name("Ubuntu Server 22.04 LTS 64bit"), (None, None));
        assert_eq!(gpu_from_name("driver cuda"), (None, None));
    }
}
