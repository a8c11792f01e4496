//! Workspace end-to-end tests live in tests/tests/*.rs; this library holds shared helpers.
