//! The game manager's side of GGP over HTTP: one POST per message, with ggp-base's
//! headers (`Content-Type: text/acl`, `Sender: GAMESERVER`), a 5 s connect timeout and an
//! overall deadline for the reply, each message on a connection of its own.
//!
//! HTTP itself is hyper's (through `hyper-util`'s client): status line and headers are
//! parsed leniently as real players send them (header lines ending in a bare LF, as
//! ggp-base's `HttpWriter` writes them on Linux with `println`), and bodies may be sized by
//! Content-Length, chunked, or end when the player closes the connection (HTTP/1.0).
//!
//! The manager's seats are plain threads ([`super::client::Seat`]), so each player owns a
//! current-thread tokio runtime that drives its requests with `block_on`.

use super::client::{Failure, PlayerClient, Request};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{HeaderValue, ACCEPT, CONNECTION, CONTENT_TYPE};
use hyper::{Method, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::error::Error as _;
use std::time::{Duration, Instant};

/// Longest reply body read; a player sending more is broken.
const MAX_REPLY: usize = 1 << 20;
/// ggp-base connects with a 5 s timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A remote GGP player at `http://host[:port][/path]`.
pub struct HttpPlayer {
    url: String,
    uri: Uri,
    rt: tokio::runtime::Runtime,
    client: Client<HttpConnector, Full<Bytes>>,
}

impl HttpPlayer {
    /// Accepts `http://host:port`, `http://host:port/path` (port 80 when absent).
    pub fn new(url: &str) -> Result<HttpPlayer, String> {
        let uri = check_url(url)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("{url}: cannot start an HTTP client: {e}"))?;
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
        connector.set_nodelay(true);
        // One connection per message, as ggp-base's game server does: players commonly close
        // after replying, and a pooled connection they closed would fail the next message.
        let client = Client::builder(TokioExecutor::new()).pool_max_idle_per_host(0).build(connector);
        Ok(HttpPlayer { url: url.to_string(), uri, rt, client })
    }

    /// Sends `body` and returns the reply body (trimmed) if it comes by `deadline`.
    pub fn post(&self, body: &str, deadline: Instant) -> Result<String, Failure> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Failure::Timeout);
        }
        let req = hyper::Request::builder()
            .method(Method::POST)
            .uri(self.uri.clone())
            .header(ACCEPT, "text/delim")
            .header("Sender", "GAMESERVER")
            .header("Receiver", HeaderValue::from_static(""))
            .header(CONTENT_TYPE, "text/acl")
            .header(CONNECTION, "close")
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| Failure::Connection(format!("cannot build the request: {e}")))?;
        let exchange = async {
            let resp = self.client.request(req).await.map_err(|e| failure(&e))?;
            let status = resp.status();
            if status != StatusCode::OK {
                return Err(Failure::Connection(format!("HTTP status `{status}`")));
            }
            let bytes = Limited::new(resp.into_body(), MAX_REPLY).collect().await.map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    Failure::Connection(format!("reply longer than {MAX_REPLY} bytes"))
                } else {
                    Failure::Connection(format!("reply body: {}", chain(e.as_ref())))
                }
            })?;
            Ok(String::from_utf8_lossy(&bytes.to_bytes()).trim().to_string())
        };
        self.rt.block_on(async { tokio::time::timeout(left, exchange).await.unwrap_or(Err(Failure::Timeout)) })
    }
}

/// A player's URL, checked before any match starts: `http://host[:port][/path]`.
pub fn check_url(url: &str) -> Result<Uri, String> {
    let uri: Uri = url.parse().map_err(|e| format!("{url}: not a URL ({e})"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!("{url}: only http:// URLs are supported"));
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(format!("{url}: no host"));
    }
    Ok(uri)
}

/// A client error as the manager records it: a timed-out connect is a timeout (`TO`), every
/// other failure a connection error (`CE`) with the causes spelled out.
fn failure(e: &hyper_util::client::legacy::Error) -> Failure {
    let mut source = e.source();
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::TimedOut {
                return Failure::Timeout;
            }
        }
        source = s.source();
    }
    Failure::Connection(chain(e))
}

/// An error and its sources, joined by `: `.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

impl PlayerClient for HttpPlayer {
    fn name(&self) -> String {
        self.url.clone()
    }
    fn handle(&mut self, req: &Request, deadline: Instant) -> Result<String, Failure> {
        self.post(&req.text(), deadline)
    }
}
