//! `gpuctl web`: serves the browser calculator (the static files `scripts/build-web` writes to
//! web/dist) over HTTP on loopback, so the page can be used and tested locally. The page needs no
//! server logic: any static host serves it the same way.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use axum::Router;
use tower_http::services::ServeDir;

use super::CliError;

#[derive(clap::Args)]
pub struct WebArgs {
    /// Folder holding the built page (index.html + pkg/); `scripts/build-web` writes web/dist.
    #[arg(long, default_value = "web/dist")]
    pub dir: PathBuf,
    /// Address to listen on; port 0 picks a free one (the chosen address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
}

pub fn run(args: WebArgs) -> Result<ExitCode, CliError> {
    if !args.dir.join("index.html").is_file() {
        return Err(CliError::usage(format!(
            "{} has no index.html: build the page first with `scripts/build-web`, or point --dir at a built copy",
            args.dir.display()
        )));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| CliError::failed(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(serve(args))
}

async fn serve(args: WebArgs) -> Result<ExitCode, CliError> {
    let listener = tokio::net::TcpListener::bind(args.addr).await.map_err(|e| {
        CliError::failed(format!(
            "cannot listen on {}: {e} (is another server using it? try --addr 127.0.0.1:0)",
            args.addr
        ))
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::failed(format!("cannot read the listening address: {e}")))?;
    // Scripts (and the browser tests) read this line to learn the port when --addr asked for 0.
    crate::outln!("serving {} at http://{addr}/ (Ctrl-C stops)", args.dir.display());
    let _ = std::io::stdout().flush();
    let app = Router::new().fallback_service(ServeDir::new(&args.dir));
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| CliError::failed(format!("the web server stopped: {e}")))?;
    Ok(ExitCode::SUCCESS)
}
