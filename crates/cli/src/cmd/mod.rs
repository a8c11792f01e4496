//! One module per command. `CliError` is the one error type commands return; it maps to exit codes.

use std::process::ExitCode;

pub mod catalog;
pub mod debug;
pub mod estimate;
pub mod sim;
pub mod storage;
pub mod tco;
pub mod web;
// provisioning (issue 5)
pub mod clone;
// the bill against the estimate, and monthly budgets (issue 15)
pub mod cost;
pub mod destroy;
pub mod plan;
pub mod provision;
pub mod provisioning;
// spot reclaims replaced (issue 15)
pub mod recover;
pub mod refresh;
pub mod release;
pub mod snapshot;
pub mod state;
pub mod status;
// finding leaks without state (issue 7)
pub mod sweep;
// reaching the instances over the system OpenSSH client (issue 13)
pub mod remote;
pub mod ssh;
// a cluster's Kubernetes engine: k3s, the NVIDIA device plugin, Kubeflow Trainer (issue 14)
pub mod k8s;

/// An error for people: what went wrong and what to do. Never holds a secret.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: u8,
}

impl CliError {
    /// Bad input from the user (flags, files): exit code 2.
    pub fn usage(message: impl Into<String>) -> Self {
        Self { message: message.into(), code: 2 }
    }
    /// The request was understood but failed: exit code 1.
    pub fn failed(message: impl Into<String>) -> Self {
        Self { message: message.into(), code: 1 }
    }
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.code)
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
