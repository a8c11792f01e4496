//! The public images the local cloud lists per region (issue 13's images by name): a small, realistic
//! set per cloud — Ubuntu 20.04/22.04/24.04, the cloud's own Linux or CentOS/Rocky, and GPU images
//! with an NVIDIA driver preinstalled. Every region of a cloud lists the same set (the real clouds
//! differ a little per region; the sim needs no such difference to test the resolver).
//!
//! None of the three image APIs has a field for a preinstalled driver (tccli 3.1.189.1
//! `cvm/v20170312/api.json` Image; alibabacloud_ecs20140526 7.11.8 `_describe_images_response_body.py`;
//! jdcloud_sdk 1.6.354 `services/vm/models/Image.py`), so the GPU images say it in their names, as the
//! clouds' own GPU images do (`… GPU Driver <version> CUDA <version>`). The ids and names are the sim's
//! own, in each cloud's id format; `img-pi0ii46r`, `img-487zeit5` and
//! `ubuntu_22_04_x64_20G_alibase_20240926.vhd` are the ids this repository's specs and tests use.

/// One public image, in the words each emulator renders into its own response fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicImage {
    pub id: &'static str,
    /// The display name (Tencent `ImageName`, Alibaba `OSNameEn`, JD `name`).
    pub name: &'static str,
    /// The distribution (Tencent `Platform`, Alibaba `Platform`, JD `platform`).
    pub platform: &'static str,
    /// The OS version alone (JD `osVersion`).
    pub version: &'static str,
    /// Creation time, RFC 3339 UTC.
    pub created: &'static str,
    pub size_gb: u32,
}

const fn image(
    id: &'static str,
    name: &'static str,
    platform: &'static str,
    version: &'static str,
    created: &'static str,
) -> PublicImage {
    PublicImage { id, name, platform, version, created, size_gb: 20 }
}

pub const TENCENT: &[PublicImage] = &[
    image("img-pi0ii46r", "Ubuntu Server 18.04.1 LTS 64bit", "Ubuntu", "18.04.1", "2018-08-15T02:00:00Z"),
    image("img-22trbn9x", "Ubuntu Server 20.04 LTS 64bit", "Ubuntu", "20.04", "2020-05-06T02:00:00Z"),
    image("img-487zeit5", "Ubuntu Server 22.04 LTS 64bit", "Ubuntu", "22.04", "2022-05-16T02:00:00Z"),
    image("img-mmytdhbn", "Ubuntu Server 24.04 LTS 64bit", "Ubuntu", "24.04", "2024-05-20T02:00:00Z"),
    image("img-l8og963d", "CentOS 7.9 64bit", "CentOS", "7.9", "2021-01-05T02:00:00Z"),
    image("img-9qrfy1xt", "TencentOS Server 3.1 (TK4)", "TencentOS", "3.1", "2022-03-01T02:00:00Z"),
    image(
        "img-gpu4704a",
        "Ubuntu Server 20.04 LTS 64bit GPU Driver 470.199.02 CUDA 11.4",
        "Ubuntu",
        "20.04",
        "2023-06-01T02:00:00Z",
    ),
    image(
        "img-gpu5352b",
        "Ubuntu Server 22.04 LTS 64bit GPU Driver 535.161.07 CUDA 12.2",
        "Ubuntu",
        "22.04",
        "2024-03-10T02:00:00Z",
    ),
];

pub const ALIBABA: &[PublicImage] = &[
    image(
        "ubuntu_20_04_x64_20G_alibase_20240819.vhd",
        "Ubuntu  20.04 64 bit",
        "Ubuntu",
        "20.04",
        "2024-08-19T02:00:00Z",
    ),
    image(
        "ubuntu_22_04_x64_20G_alibase_20240130.vhd",
        "Ubuntu  22.04 64 bit",
        "Ubuntu",
        "22.04",
        "2024-01-30T02:00:00Z",
    ),
    image(
        "ubuntu_22_04_x64_20G_alibase_20240926.vhd",
        "Ubuntu  22.04 64 bit",
        "Ubuntu",
        "22.04",
        "2024-09-26T02:00:00Z",
    ),
    image(
        "ubuntu_24_04_x64_20G_alibase_20240812.vhd",
        "Ubuntu  24.04 64 bit",
        "Ubuntu",
        "24.04",
        "2024-08-12T02:00:00Z",
    ),
    image(
        "aliyun_3_x64_20G_alibase_20240819.vhd",
        "Alibaba Cloud Linux  3.2104 LTS 64 bit",
        "Aliyun",
        "3.2104",
        "2024-08-19T02:00:00Z",
    ),
    image(
        "rockylinux_9_4_x64_20G_alibase_20240709.vhd",
        "Rocky Linux 9.4 64 bit",
        "Rocky Linux",
        "9.4",
        "2024-07-09T02:00:00Z",
    ),
    image(
        "ubuntu_22_04_gpu_x64_20G_alibase_20240926.vhd",
        "Ubuntu  22.04 64 bit GPU Driver 535.161.08 CUDA 12.2",
        "Ubuntu",
        "22.04",
        "2024-09-26T03:00:00Z",
    ),
];

pub const JDCLOUD: &[PublicImage] = &[
    image(
        "1b4a3bb0-4f33-4a38-9e3c-1e5c6b2f2004",
        "Ubuntu 20.04 LTS 64位",
        "Ubuntu",
        "20.04",
        "2020-06-01T02:00:00Z",
    ),
    image(
        "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204",
        "Ubuntu 22.04 LTS 64位",
        "Ubuntu",
        "22.04",
        "2022-06-01T02:00:00Z",
    ),
    image(
        "a93f6c21-8d0e-4b71-b5a2-5c9e4f1d2404",
        "Ubuntu 24.04 LTS 64位",
        "Ubuntu",
        "24.04",
        "2024-06-01T02:00:00Z",
    ),
    image("e2d8b7c4-6f19-4a0d-8c3e-3b7a9d5e0709", "CentOS 7.9 64位", "CentOS", "7.9", "2021-02-01T02:00:00Z"),
    image(
        "5f0c9a3e-1d7b-4e26-9b48-7a2e6c4d5352",
        "Ubuntu 22.04 LTS 64位 GPU Driver 535.161.07 CUDA 12.2",
        "Ubuntu",
        "22.04",
        "2024-04-01T02:00:00Z",
    ),
];

/// A case-insensitive substring match: Tencent's `image-name`/`platform` filters ("支持模糊查询") and
/// JD's `imageName` ("根据镜像名称模糊查询") match fuzzily.
pub fn fuzzy(haystack: &str, needle: &str) -> bool {
    haystack.to_lowercase().contains(&needle.to_lowercase())
}
