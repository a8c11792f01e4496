# Emulator conformance (issue 4): the clouds' official Python SDKs against a real `gpuctl sim` process.
# Tencent (tencentcloud-sdk-python-cvm/cbs, TC3), Alibaba (alibabacloud-ecs20140526, ACS3 and RPC v2),
# JD Cloud (jdcloud_sdk 1.6.354 JDCLOUD3 in .venv, 1.6.93 JDCLOUD2 in .venv-jd2).
# Each pytest session starts its own `gpuctl sim --port 0` (tests/conformance/conftest.py) and stops it
# at the end, so a session that advanced the sim clock cannot skew the next one.
# Sourced by scripts/test (set -euo pipefail).

cargo build -p gpuctl --locked 2>&1 | tail -n 3
scripts/pyenv
export GPUCTL_BIN=$PWD/target/debug/gpuctl
timeout 600 .venv/bin/python -m pytest -q tests/conformance --ignore=tests/conformance/test_jdcloud2.py
timeout 300 .venv-jd2/bin/python -m pytest -q tests/conformance/test_jdcloud2.py
