#!/bin/bash
# gpuctl boot environment for pool `train` on jdcloud: rendered by gpuctl, holds no credentials.
# /var/lib/gpuctl/ready (a UTC timestamp) marks success; /var/lib/gpuctl/failed names the step that failed.
set -uo pipefail
export DEBIAN_FRONTEND=noninteractive
gpuctl_state=/var/lib/gpuctl
mkdir -p "$gpuctl_state"
rm -f "$gpuctl_state/ready" "$gpuctl_state/failed"

# Runs one step; the first that fails is named in the failure marker and ends the script.
step() {
    local name=$1
    shift
    echo "gpuctl: step $name"
    if ! "$@"; then
        echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) step=$name" > "$gpuctl_state/failed"
        echo "gpuctl: step $name failed" >&2
        exit 1
    fi
}

install_container() {
    if ! command -v apt-get >/dev/null; then
        echo "gpuctl: container = true needs an apt-based image (Ubuntu or Debian)" >&2
        return 1
    fi
    if command -v docker >/dev/null && command -v nvidia-ctk >/dev/null; then
        return 0
    fi
    # At first boot the image's own unattended upgrades may hold dpkg's lock: wait for it, bounded.
    apt-get -o DPkg::Lock::Timeout=600 update -q || return 1
    command -v docker >/dev/null || apt-get -o DPkg::Lock::Timeout=600 install -y -q docker.io || return 1
    command -v nvidia-ctk >/dev/null \
        || apt-get -o DPkg::Lock::Timeout=600 install -y -q nvidia-container-toolkit || return 1
}

# Writes daemon.json only when the image has none (its own settings win), then registers the NVIDIA runtime.
configure_docker() {
    mkdir -p /etc/docker
    if [ ! -s /etc/docker/daemon.json ]; then
        echo '{"data-root":"/data/docker"}' > /etc/docker/daemon.json
    fi
    nvidia-ctk runtime configure --runtime=docker || return 1
    systemctl restart docker
}

# The first whole disk with nothing mounted from it (the system disk has `/`, swap shows as [SWAP]).
first_data_disk() {
    local d
    for d in $(lsblk -dnpo NAME,TYPE | awk '$2 == "disk" { print $1 }'); do
        if [ -z "$(lsblk -no MOUNTPOINT "$d" | tr -d '[:space:]')" ]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

mount_data() {
    local mnt=$1 dev="" part uuid probe
    if mountpoint -q "$mnt"; then
        return 0
    fi
    # A data disk may attach shortly after boot: wait for it up to two minutes.
    for _ in $(seq 1 60); do
        dev=$(first_data_disk) && break
        sleep 2
    done
    if [ -z "$dev" ]; then
        echo "gpuctl: no data disk to mount on $mnt" >&2
        return 1
    fi
    udevadm settle || true
    probe=0
    blkid -p "$dev" >/dev/null 2>&1 || probe=$?
    if [ "$probe" -eq 2 ]; then
        mkfs.ext4 -q -L gpuctl-data "$dev" || return 1
    else
        # Something is there (a file system, or a partition table from a snapshot): never format it.
        part=$(lsblk -lnpo NAME,FSTYPE "$dev" | awk 'NF == 2 { print $1; exit }')
        if [ -z "$part" ]; then
            echo "gpuctl: $dev holds data but no file system to mount; not formatting it" >&2
            return 1
        fi
        dev=$part
    fi
    uuid=$(blkid -s UUID -o value "$dev")
    if [ -z "$uuid" ]; then
        echo "gpuctl: $dev has no UUID" >&2
        return 1
    fi
    mkdir -p "$mnt"
    grep -q "^UUID=$uuid " /etc/fstab || echo "UUID=$uuid $mnt auto defaults,nofail 0 2" >> /etc/fstab
    mount "$mnt"
}

driver_at_least() {
    local have
    have=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1) || return 1
    echo "gpuctl: NVIDIA driver $have, need $1 or newer"
    printf '%s\n%s\n' "$1" "$have" | sort -V -C
}

run_setup() {
    cd "$1" || return 1
    bash -c "$2"
}

step driver driver_at_least '535.104.05'
step mount mount_data '/data'
step container install_container
step docker configure_docker
step pull docker pull 'pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime'
# shellcheck disable=SC2016
gpuctl_setup='pip install -r /data/requirements.txt'
step setup run_setup '/data' "$gpuctl_setup"

date -u +%Y-%m-%dT%H:%M:%SZ > "$gpuctl_state/ready"
echo "gpuctl: ready"
