//! The socket side: an HTTP/1.1 server on hyper that turns each request into a [`SimRequest`],
//! asks [`Sim::call`] what to do, and does it — including the faults a framework would not let us
//! express: closing a connection with a TCP reset, holding it open without an answer, or dropping
//! it after the operation took effect. (That is why this is hyper directly and not axum::serve.)

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use gpuctl_simkit::{SimConfig, SimRequest};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use crate::record::Recorder;
use crate::{Outcome, Sim};

/// Serve `sim` on `listener` until `shutdown` resolves. With `GPUCTL_SIM_RECORD` set, every request
/// is recorded (see [`crate::record`]).
pub async fn serve(sim: Arc<Sim>, listener: TcpListener, shutdown: impl std::future::Future<Output = ()>) {
    let recorder = Recorder::from_env().map(Arc::new);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok(x) => x,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    continue;
                }
            },
        };
        let sim = sim.clone();
        let recorder = recorder.clone();
        tokio::spawn(async move {
            let reset = Arc::new(AtomicBool::new(false));
            let io = TokioIo::new(Conn { stream, reset: reset.clone() });
            let service =
                service_fn(move |req| answer(sim.clone(), req, peer, reset.clone(), recorder.clone()));
            // An Err here is either the client going away or an injected drop: both end the connection.
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(io, service)
                .await;
        });
    }
}

/// The error a service returns to make hyper close the connection without a response.
#[derive(Debug)]
struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped by an injected fault")
    }
}

impl std::error::Error for Dropped {}

async fn answer(
    sim: Arc<Sim>,
    req: Request<Incoming>,
    peer: SocketAddr,
    reset: Arc<AtomicBool>,
    recorder: Option<Arc<Recorder>>,
) -> Result<Response<Full<Bytes>>, Dropped> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await.map_err(|_| Dropped)?.to_bytes();
    let sim_req = SimRequest {
        method: parts.method.as_str().to_string(),
        path: parts.uri.path().to_string(),
        raw_query: parts.uri.query().unwrap_or("").to_string(),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect(),
        body,
        peer: Some(peer),
    };
    // The emulators are synchronous and quick; running them inline keeps ordering simple.
    let call = sim.call(&sim_req);
    if let Some(rec) = &recorder {
        if !sim_req.path.starts_with("/_sim") {
            let resp = match &call.outcome {
                Outcome::Respond(r) => Some(r),
                Outcome::Drop { .. } => None,
            };
            rec.record(&sim_req, resp);
        }
    }
    if !call.latency.is_zero() {
        tokio::time::sleep(call.latency).await;
    }
    match call.outcome {
        Outcome::Respond(r) => {
            let mut resp = Response::builder().status(r.status);
            for (k, v) in &r.headers {
                resp = resp.header(k, v);
            }
            Ok(resp
                .body(Full::new(r.body))
                .unwrap_or_else(|_| Response::new(Full::new(Bytes::from_static(b"bad response headers")))))
        }
        Outcome::Drop { reset: with_reset, after } => {
            if !after.is_zero() {
                tokio::time::sleep(after).await;
            }
            reset.store(with_reset, Ordering::SeqCst);
            Err(Dropped)
        }
    }
}

/// A TCP connection that, when the sim asked for a reset, closes with RST (SO_LINGER 0) instead of FIN.
struct Conn {
    stream: TcpStream,
    reset: Arc<AtomicBool>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        if self.reset.load(Ordering::SeqCst) {
            let _ = socket2::SockRef::from(&self.stream).set_linger(Some(Duration::ZERO));
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// An in-process local cloud on its own thread and runtime, for tests and `gpuctl provision --sim`.
/// Dropping it stops the server.
pub struct BackgroundSim {
    addr: SocketAddr,
    sim: Arc<Sim>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BackgroundSim {
    /// Start the three clouds on 127.0.0.1 and a free port.
    pub fn start(config: SimConfig) -> io::Result<Self> {
        Self::start_with(Sim::new(config))
    }

    pub fn start_with(sim: Sim) -> io::Result<Self> {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let sim = Arc::new(sim);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
        let served = sim.clone();
        let thread = std::thread::Builder::new().name("gpuctl-sim".into()).spawn(move || {
            runtime.block_on(async move {
                match TcpListener::from_std(std_listener) {
                    Ok(listener) => {
                        serve(served, listener, async {
                            let _ = stopped.await;
                        })
                        .await
                    }
                    Err(e) => tracing::error!("sim listener: {e}"),
                }
            });
        })?;
        Ok(Self { addr, sim, stop: Some(stop), thread: Some(thread) })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn sim(&self) -> &Sim {
        &self.sim
    }
}

impl Drop for BackgroundSim {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
