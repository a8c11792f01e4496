//! `gpuctl sim`: run the local cloud (Tencent CVM/CBS, Alibaba ECS, JD Cloud VM/Disk/billing) on
//! loopback until interrupted. Prints the address and the accepted test key pairs first, so a
//! script can read the port from the first line when it asked for port 0.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use gpuctl_sim::Sim;
use gpuctl_simkit::SimConfig;

use super::CliError;

#[derive(clap::Args)]
pub struct SimArgs {
    /// Port on 127.0.0.1; 0 picks a free one (printed on the first line).
    #[arg(long, default_value_t = 8090)]
    pub port: u16,
    /// Config file: seed, accepted key pairs, [knobs] (latency, boot time, rate limits, stock-outs, faults).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Seed for ids and probabilistic faults (overrides the config file's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Sim-clock seconds a new instance boots before it runs (overrides the config file's).
    #[arg(long)]
    pub boot_seconds: Option<u64>,
    /// Milliseconds of latency added to every cloud call (overrides the config file's).
    #[arg(long)]
    pub latency_ms: Option<u64>,
    /// Start as an empty account: no default VPC, subnet/vSwitch or security group in any zone of any
    /// cloud (the `no_default_network` knob for every zone), so a create must name a network, or use
    /// `network = "auto"`, which makes one.
    #[arg(long)]
    pub empty_account: bool,
}

pub fn run(args: SimArgs) -> Result<ExitCode, CliError> {
    let mut config = match &args.config {
        Some(path) => SimConfig::load(path).map_err(|e| CliError::usage(e.to_string()))?,
        None => SimConfig::default(),
    };
    if let Some(seed) = args.seed {
        config.seed = seed;
    }
    if let Some(b) = args.boot_seconds {
        config.knobs.boot_seconds = b;
    }
    if let Some(l) = args.latency_ms {
        config.knobs.latency_ms = l;
    }
    if args.empty_account {
        config.knobs.no_default_network = vec![gpuctl_simkit::ZoneRule { provider: None, zone: None }];
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::failed(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
            .await
            .map_err(|e| CliError::failed(format!("cannot listen on 127.0.0.1:{}: {e}", args.port)))?;
        let addr = listener.local_addr().map_err(|e| CliError::failed(e.to_string()))?;
        let sim = Arc::new(Sim::new(config));
        let mut out = std::io::stdout();
        let _ = write!(out, "{}", gpuctl_sim::banner(addr, sim.ctx()));
        let _ = writeln!(
            out,
            "admin: GET /_sim/state, POST /_sim/reset, POST /_sim/clock, GET|PUT /_sim/knobs; Ctrl-C stops"
        );
        let _ = out.flush();
        gpuctl_sim::serve(sim, listener, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
        Ok(ExitCode::SUCCESS)
    })
}
