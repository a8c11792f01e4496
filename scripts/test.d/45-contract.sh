# Wire contract (issue 12): gpuctl's requests held against the clouds' own API definitions.
# 1. Regenerate the schema from the pinned packages (.venv-contract: tccli, alibabacloud-ecs20140526,
#    jdcloud_sdk) into a scratch folder and diff it with the committed contract/schema: no diff.
# 2. Negative controls: the SDKs' own requests pass, planted wrong ones fail with the expected line.
# 3. Response side: every response field a client reads exists in the SDK's response model.
# 4. The traffic step 10 recorded (GPUCTL_SIM_RECORD=target/contract-traffic, every e2e suite's sims):
#    check.py's problem lines must be exactly contract/known-violations.txt. The step fails on a
#    violation not in that file AND on a listed line that no longer occurs: the fixes come in the next
#    phase, so the list may only shrink, and each fix must delete its line. It also fails when a client
#    action never appeared in the traffic, and when there is no traffic (run step 10 first).
#    The e2e suites rent hourly instances only, so what a new user's first run sends in the other
#    modes is recorded here too: `gpuctl provision SPEC --sim --yes` (in-process local cloud, recorded)
#    for each of contract/specs/*.toml (one billing mode or option each) and infra/*.toml. Their exit
#    status is not judged (a refused create is still traffic to check).
# Sourced by scripts/test (set -euo pipefail).

scripts/pyenv
contract_scratch=$(mktemp -d)
.venv-contract/bin/python contract/gen.py "$contract_scratch/schema" >/dev/null
if ! diff -ru contract/schema "$contract_scratch/schema"; then
    echo "contract/schema differs from what contract/gen.py derives from the pinned packages: run" >&2
    echo "  .venv-contract/bin/python contract/gen.py   and commit the result" >&2
    exit 1
fi
.venv-contract/bin/python contract/controls.py
python3 contract/check.py --responses
contract_traffic=${GPUCTL_CONTRACT_TRAFFIC:-$PWD/target/contract-traffic}
if ! ls "$contract_traffic"/*.jsonl >/dev/null 2>&1; then
    echo "45-contract: no recorded e2e traffic in $contract_traffic; step 10 records it (GPUCTL_TEST_ONLY=10 scripts/test first, or set GPUCTL_CONTRACT_TRAFFIC)" >&2
    exit 1
fi
cargo build -p gpuctl --locked 2>&1 | tail -n 3
contract_first_run=$PWD/target/contract-traffic-first-run
rm -rf "$contract_first_run"
mkdir -p "$contract_first_run"
for contract_spec in contract/specs/*.toml infra/*.toml; do
    GPUCTL_TODAY=2026-11-30 GPUCTL_SIM_RECORD=$contract_first_run timeout 300 target/debug/gpuctl \
        provision "$contract_spec" --sim --yes > "$contract_scratch/provision.out" 2>&1 \
        || echo "45-contract: provision $contract_spec --sim: exit $? ($(grep -m1 'error:' "$contract_scratch/provision.out" | cut -c1-160))"
done
contract_rc=0
python3 contract/check.py "$contract_traffic" "$contract_first_run" > "$contract_scratch/report.txt" || contract_rc=$?
# Prefixed: the report's last line counts requests with known violations, not failed tests.
sed "s/^/contract: /" "$contract_scratch/report.txt"
if [ "$contract_rc" -eq 2 ] || [ ! -s "$contract_scratch/report.txt" ]; then
    echo "45-contract: no recorded gpuctl traffic in $contract_traffic; step 10 records it (or set GPUCTL_CONTRACT_TRAFFIC)" >&2
    exit 1
fi
if ! grep -qx 'client actions never sent: none' "$contract_scratch/report.txt"; then
    echo "45-contract: some client action never appeared in the e2e traffic (see above)" >&2
    exit 1
fi
# Problem lines are everything before the first empty line.
sed '/^$/,$d' "$contract_scratch/report.txt" | sort > "$contract_scratch/found.txt"
# sed, not `grep -v`: with every violation fixed the list holds only comments, and grep's "no line"
# status would fail the step under pipefail.
sed '/^#/d; /^$/d' contract/known-violations.txt | sort > "$contract_scratch/known.txt"
contract_new=$(comm -23 "$contract_scratch/found.txt" "$contract_scratch/known.txt")
contract_gone=$(comm -13 "$contract_scratch/found.txt" "$contract_scratch/known.txt")
if [ -n "$contract_new" ]; then
    printf '45-contract: violations not in contract/known-violations.txt:\n%s\n' "$contract_new" >&2
fi
if [ -n "$contract_gone" ]; then
    printf '45-contract: contract/known-violations.txt lists lines that no longer occur (delete them):\n%s\n' "$contract_gone" >&2
fi
[ -z "$contract_new" ] && [ -z "$contract_gone" ]
echo "45-contract: $(wc -l < "$contract_scratch/known.txt") known violations, all still present, none new"
rm -rf "$contract_scratch"
