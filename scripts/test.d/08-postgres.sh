# A throw-away PostgreSQL for step 10 (issue 17): the store suite, the crash and fault suites and the
# two-machine and dropped-connection tests run against it as well as against SQLite. _REQUIRED makes
# those tests fail, not skip, when the URL is missing. Stopped when scripts/test exits.
# Sourced by scripts/test (set -euo pipefail).
pg_dir=$(mktemp -d /tmp/gpuctl-pg.XXXXXX)
trap 'scripts/pg-tools stop "$pg_dir"' EXIT
GPUCTL_TEST_POSTGRES=$(scripts/pg-tools start "$pg_dir")
export GPUCTL_TEST_POSTGRES
export GPUCTL_TEST_POSTGRES_REQUIRED=1
echo "PostgreSQL for the tests at $GPUCTL_TEST_POSTGRES"
