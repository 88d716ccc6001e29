//! The game manager's side of GGP over HTTP: one blocking HTTP/1.0 POST per message, as
//! ggp-base's `HttpRequest`/`HttpWriter` send them (`Content-Type: text/acl`, `Sender:
//! GAMESERVER`), with a connect timeout and an overall deadline for the reply.

use super::client::{Failure, PlayerClient, Request};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Longest reply body read; a player sending more is broken.
const MAX_REPLY: usize = 1 << 20;
/// ggp-base connects with a 5 s timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A remote GGP player at `http://host:port[/path]`.
pub struct HttpPlayer {
    url: String,
    host: String,
    path: String,
}

impl HttpPlayer {
    /// Accepts `http://host:port`, `http://host:port/path` (port 80 when absent).
    pub fn new(url: &str) -> Result<HttpPlayer, String> {
        let rest = url.strip_prefix("http://").ok_or_else(|| format!("{url}: only http:// URLs are supported"))?;
        let (host, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if host.is_empty() {
            return Err(format!("{url}: no host"));
        }
        let host = if host.contains(':') { host.to_string() } else { format!("{host}:80") };
        Ok(HttpPlayer { url: url.to_string(), host, path: path.to_string() })
    }

    fn addr(&self) -> Result<SocketAddr, Failure> {
        self.host
            .to_socket_addrs()
            .map_err(|e| Failure::Connection(format!("{}: {e}", self.host)))?
            .next()
            .ok_or_else(|| Failure::Connection(format!("{}: no address", self.host)))
    }

    /// Sends `body` and returns the reply body (trimmed) if it comes by `deadline`.
    pub fn post(&self, body: &str, deadline: Instant) -> Result<String, Failure> {
        let addr = self.addr()?;
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Failure::Timeout);
        }
        let mut s = TcpStream::connect_timeout(&addr, left.min(CONNECT_TIMEOUT)).map_err(io_failure)?;
        let _ = s.set_nodelay(true);
        let head = format!(
            "POST {} HTTP/1.0\r\nAccept: text/delim\r\nHost: {}\r\nSender: GAMESERVER\r\nReceiver: \r\n\
             Content-Type: text/acl\r\nContent-Length: {}\r\n\r\n",
            self.path,
            self.host,
            body.len()
        );
        s.set_write_timeout(Some(remaining(deadline)?)).map_err(io_failure)?;
        s.write_all(head.as_bytes()).and_then(|_| s.write_all(body.as_bytes())).map_err(io_failure)?;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        let mut header_end = None;
        let mut content_length = None;
        loop {
            if let (Some(h), Some(n)) = (header_end, content_length) {
                if buf.len() >= h + n {
                    buf.truncate(h + n);
                    break;
                }
            }
            s.set_read_timeout(Some(remaining(deadline)?)).map_err(io_failure)?;
            match s.read(&mut chunk) {
                Ok(0) => break,
                Ok(k) => buf.extend_from_slice(&chunk[..k]),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_failure(e)),
            }
            if buf.len() > MAX_REPLY {
                return Err(Failure::Connection(format!("reply longer than {MAX_REPLY} bytes")));
            }
            if header_end.is_none() {
                if let Some(i) = find(&buf, b"\r\n\r\n") {
                    header_end = Some(i + 4);
                    content_length = header_value(&buf[..i], "content-length").and_then(|v| v.parse::<usize>().ok());
                }
            }
        }
        let Some(h) = header_end else {
            return Err(Failure::Connection("connection closed before a complete HTTP reply".into()));
        };
        let status_line = String::from_utf8_lossy(&buf[..h]).lines().next().unwrap_or("").to_string();
        let status = status_line.split_whitespace().nth(1).unwrap_or("");
        if status != "200" {
            return Err(Failure::Connection(format!("HTTP status `{}`", status_line.trim())));
        }
        if let Some(n) = content_length {
            if buf.len() < h + n {
                return Err(Failure::Connection("connection closed inside the reply body".into()));
            }
        }
        Ok(String::from_utf8_lossy(&buf[h..]).trim().to_string())
    }
}

fn remaining(deadline: Instant) -> Result<Duration, Failure> {
    let d = deadline.saturating_duration_since(Instant::now());
    if d.is_zero() {
        Err(Failure::Timeout)
    } else {
        Ok(d)
    }
}

fn io_failure(e: std::io::Error) -> Failure {
    match e.kind() {
        ErrorKind::TimedOut | ErrorKind::WouldBlock => Failure::Timeout,
        _ => Failure::Connection(e.to_string()),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn header_value(head: &[u8], name: &str) -> Option<String> {
    String::from_utf8_lossy(head).lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_string())
    })
}

impl PlayerClient for HttpPlayer {
    fn name(&self) -> String {
        self.url.clone()
    }
    fn handle(&mut self, req: &Request, deadline: Instant) -> Result<String, Failure> {
        self.post(&req.text(), deadline)
    }
}
