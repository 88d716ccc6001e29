//! The GGP player over real HTTP: a server bound to `127.0.0.1:0` in-process, spoken to with
//! the raw requests a ggp-base game manager sends (HTTP/1.0 POST, `Content-Type: text/acl`).
//! A referee (our propnet) checks every reply is a legal move in time.

use factotum::agent::{same_move, AgentConfig, Kind};
use factotum::gdl::Game;
use factotum::machine::StateMachine;
use factotum::propnet::{self, Budget, PropnetMachine};
use factotum::protocol::{spawn, ServerConfig, ServerHandle};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

const GAMES: [&str; 5] =
    ["tictactoe.kif", "connect4.kif", "parallel_tictactoe.kif", "joined_tictactoe.kif", "three_to_fifteen.kif"];

fn server(max_matches: usize, margin_s: f64) -> ServerHandle {
    let agent = AgentConfig { kind: Kind::Mcts, margin_s, ..AgentConfig::default() };
    spawn("127.0.0.1:0", ServerConfig { agent, max_matches, max_body: 1 << 20, ..ServerConfig::default() })
        .expect("bind")
}

/// Sends raw bytes, reads the whole reply (HTTP/1.0: the server closes); (status, body).
fn raw(addr: SocketAddr, request: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    // A server may answer (and close) before reading a refused body: ignore write errors.
    let _ = s.write_all(request);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

/// What ggp-base's game manager sends.
fn post(addr: SocketAddr, body: &str) -> (u16, String) {
    let req = format!(
        "POST / HTTP/1.0\r\nAccept: text/delim\r\nHost: {addr}\r\nSender: GAMESERVER\r\nReceiver: factotum\r\n\
         Content-Type: text/acl\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    raw(addr, req.as_bytes())
}

fn ok(addr: SocketAddr, body: &str) -> String {
    let (status, reply) = post(addr, body);
    assert_eq!(status, 200, "{body}: {reply}");
    reply
}

fn rules(file: &str) -> (String, Game) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gdl").join(file);
    let text = std::fs::read_to_string(&p).expect("read game");
    let game = Game::parse(file, &text).expect("parse");
    (text, game)
}

fn referee(game: &Game) -> PropnetMachine {
    propnet::build(game, &Budget::default()).expect("propnet").0
}

/// Plays a whole match with the server in every role (one match id per role, all at once).
fn play_match(addr: SocketAddr, file: &str, play_clock: u64) {
    let (text, game) = rules(file);
    let mut m = referee(&game);
    let roles = m.roles().to_vec();
    let ids: Vec<String> = roles.iter().map(|r| format!("{file}-{r}")).collect();
    for (id, role) in ids.iter().zip(&roles) {
        assert_eq!(ok(addr, &format!("(start {id} {role} ({text}) 2 {play_clock})")), "ready", "{file}");
    }
    let mut state = m.initial_state();
    let mut last: Option<Vec<String>> = None;
    let mut legal = Vec::new();
    let mut steps = 0;
    while !m.is_terminal(&state) {
        let moves = match &last {
            None => "nil".to_string(),
            Some(v) => format!("({})", v.join(" ")),
        };
        let replies: Vec<(String, Duration)> = std::thread::scope(|s| {
            let hs: Vec<_> = ids
                .iter()
                .map(|id| {
                    let msg = format!("(play {id} {moves})");
                    s.spawn(move || {
                        let t = Instant::now();
                        let r = ok(addr, &msg);
                        (r, t.elapsed())
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().expect("client thread")).collect()
        });
        let mut joint = Vec::new();
        let mut texts = Vec::new();
        for (r, (reply, took)) in replies.iter().enumerate() {
            assert!(*took < Duration::from_secs(play_clock), "{file} step {steps}: late reply ({took:?})");
            m.legal_moves(&state, r, &mut legal);
            let mv = legal.iter().copied().find(|&mv| same_move(reply, &m.move_text(mv)));
            let mv = mv.unwrap_or_else(|| panic!("{file} step {steps}: illegal move {reply:?} for {}", roles[r]));
            joint.push(mv);
            texts.push(reply.clone());
        }
        let mut next = state.clone();
        m.next_state(&state, &joint, &mut next);
        state = next;
        last = Some(texts);
        steps += 1;
        assert!(steps < 100, "{file}: no end");
    }
    let moves = format!("({})", last.unwrap_or_default().join(" "));
    for id in &ids {
        assert_eq!(ok(addr, &format!("(stop {id} {moves})")), "done");
    }
}

#[test]
fn whole_matches_of_every_gdl_game_over_http() {
    // Play clock 1 s, margin 0.8 s: 0.2 s of search per move.
    let srv = server(8, 0.8);
    for file in GAMES {
        play_match(srv.addr, file, 1);
    }
    assert_eq!(ok(srv.addr, "(info)"), "((name factotum) (status available))");
}

#[test]
fn malformed_and_out_of_order_messages_get_clean_replies() {
    let srv = server(2, 0.8);
    let a = srv.addr;
    // Unknown matches, play before start, stop and abort with no match: ggp-base says busy.
    assert_eq!(ok(a, "(play nosuch nil)"), "busy");
    assert_eq!(ok(a, "(play nosuch ((mark 1 1) noop))"), "busy");
    assert_eq!(ok(a, "(stop nosuch nil)"), "busy");
    assert_eq!(ok(a, "(abort nosuch)"), "busy");
    // Garbage: a 400 with a message, and the server goes on.
    for bad in
        ["", "hello", "(", ")", "(play)", "(frobnicate 1 2)", "(start m r rules 1 1)", "((((((((", "(info) (info)"]
    {
        let (status, reply) = post(a, bad);
        assert_eq!(status, 400, "{bad:?}: {reply}");
        assert!(reply.starts_with("error:"), "{bad:?}: {reply}");
    }
    let (status, _) = raw(a, b"POST / HTTP/1.0\r\nContent-Length: 4\r\n\r\n\xff\xfe\x00(");
    assert_eq!(status, 400);
    let deep = "(".repeat(200_000);
    assert_eq!(post(a, &deep).0, 400);
    // A body over the limit is refused.
    let huge = format!("(info {})", "x".repeat(2 << 20));
    let (status, _) = post(a, &huge);
    assert!(status == 413 || status == 0, "huge body: {status}");
    // Not HTTP at all.
    let _ = raw(a, b"\x00\x01\x02 not http\r\n\r\n");
    // Rules that do not parse, a role not in the game.
    assert_eq!(ok(a, "(start bad0 x ((role x) (<= )) 10 1)"), "busy");
    assert_eq!(ok(a, "(start bad1 x ((role x) (<= (legal x ?y))) 10 1)"), "busy");
    let (text, _) = rules("tictactoe.kif");
    assert_eq!(ok(a, &format!("(start bad2 nobody ({text}) 10 1)")), "busy");
    // GET with the message in the path, OPTIONS, other methods.
    let (status, reply) = raw(a, b"GET /%28info%29 HTTP/1.0\r\n\r\n");
    assert_eq!((status, reply.as_str()), (200, "((name factotum) (status available))"));
    assert_eq!(raw(a, b"OPTIONS / HTTP/1.0\r\n\r\n"), (200, String::new()));
    assert_eq!(raw(a, b"DELETE / HTTP/1.0\r\n\r\n"), (200, String::new()));
    // A match with an illegal and a malformed move list: the reply is still a legal move.
    assert_eq!(ok(a, &format!("(START m1 o ({text}) 10 1)")), "ready");
    assert_eq!(ok(a, "(start m1 o ((role o)) 10 1)"), "busy", "id in use");
    assert_eq!(ok(a, "(PLAY m1 NIL)"), "noop");
    assert_eq!(ok(a, "(play m1 ((mark 9 9) noop))"), "noop", "illegal moves: o still waits");
    assert_eq!(ok(a, "(play m1 (noop))"), "noop", "too few moves");
    let r = ok(a, "(play m1 ((mark 1 1) noop))");
    assert!(r.starts_with("( mark "), "{r}");
    assert_eq!(ok(a, "(abort m1)"), "aborted");
    assert_eq!(ok(a, "(play m1 nil)"), "busy", "aborted matches are gone");
    assert_eq!(ok(a, "(ping)"), "available");
}

#[test]
fn matches_up_to_the_limit_and_info_while_searching() {
    let srv = server(2, 0.5);
    let a = srv.addr;
    let (text, _) = rules("connect4.kif");
    assert_eq!(ok(a, &format!("(start c1 red ({text}) 2 3)")), "ready");
    assert_eq!(ok(a, &format!("(preview ({text}) 10)")), "ready");
    assert_eq!(ok(a, &format!("(start c2 yellow ({text}) 2 3)")), "ready");
    assert_eq!(ok(a, &format!("(start c3 red ({text}) 2 3)")), "busy", "over the limit");
    assert_eq!(ok(a, "(info)"), "((name factotum) (status busy))");
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            let t = Instant::now();
            let r = ok(a, "(play c1 nil)");
            (r, t.elapsed())
        });
        std::thread::sleep(Duration::from_millis(300));
        let t = Instant::now();
        assert_eq!(ok(a, "(info)"), "((name factotum) (status busy))");
        assert!(t.elapsed() < Duration::from_millis(500), "info waited for the search: {:?}", t.elapsed());
        let (r, took) = h.join().expect("client");
        assert!(r.starts_with("( drop "), "{r}");
        assert!(
            took >= Duration::from_millis(2000) && took < Duration::from_secs(3),
            "searched for the clock less the margin: {took:?}"
        );
    });
    assert_eq!(ok(a, "(stop c1 nil)"), "done");
    assert_eq!(ok(a, "(info)"), "((name factotum) (status available))");
    assert_eq!(ok(a, "(abort c2)"), "aborted");
}

#[test]
fn stop_abort_and_the_next_play_cancel_a_running_search() {
    // A 60 s play clock: without cancellation each play below would search for 59.5 s.
    let srv = server(4, 0.5);
    let a = srv.addr;
    let (text, _) = rules("connect4.kif");
    for (id, end) in [("s1", "(stop s1 nil)"), ("s2", "(abort s2)")] {
        assert_eq!(ok(a, &format!("(start {id} red ({text}) 2 60)")), "ready");
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                let t = Instant::now();
                (ok(a, &format!("(play {id} nil)")), t.elapsed())
            });
            std::thread::sleep(Duration::from_millis(500));
            let reply = ok(a, end);
            assert!(reply == "done" || reply == "aborted", "{end}: {reply}");
            let (r, took) = h.join().expect("client");
            assert!(r.starts_with("( drop "), "the cancelled search still answers a legal move: {r}");
            assert!(took < Duration::from_secs(5), "{end} did not cancel the search: {took:?}");
        });
    }
    // A manager that gave up on a reply sends the next play: the old search stops, and the
    // new reply is a move of the new state.
    assert_eq!(ok(a, &format!("(start s3 red ({text}) 2 60)")), "ready");
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            let t = Instant::now();
            (ok(a, "(play s3 nil)"), t.elapsed())
        });
        std::thread::sleep(Duration::from_millis(500));
        let h2 = s.spawn(|| ok(a, "(play s3 ((drop 1) noop))"));
        let (_, took) = h.join().expect("client");
        assert!(took < Duration::from_secs(5), "the next play did not cancel the search: {took:?}");
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(ok(a, "(abort s3)"), "aborted");
        assert_eq!(h2.join().expect("client"), "noop", "red has only noop after dropping");
    });
}

#[test]
fn the_start_clock_is_spent_searching_and_abort_cancels_it() {
    let srv = server(2, 0.5);
    let a = srv.addr;
    let (text, _) = rules("connect4.kif");
    let t = Instant::now();
    assert_eq!(ok(a, &format!("(start e1 red ({text}) 3 2)")), "ready");
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(2300) && took < Duration::from_secs(3),
        "ready after the start clock less the margin: {took:?}"
    );
    assert!(ok(a, "(play e1 nil)").starts_with("( drop "));
    assert_eq!(ok(a, "(abort e1)"), "aborted");
    // An abort during the early search ends it: the next start is not kept waiting.
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            let t = Instant::now();
            (ok(a, &format!("(start e2 red ({text}) 60 2)")), t.elapsed())
        });
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(ok(a, "(abort e2)"), "aborted");
        let (r, took) = h.join().expect("client");
        assert_eq!(r, "ready");
        assert!(took < Duration::from_secs(5), "abort did not cancel the early search: {took:?}");
    });
}

#[test]
fn the_player_thinks_between_messages_until_the_next_one() {
    let (text, _) = rules("connect4.kif");
    for ponder in [true, false] {
        let agent = AgentConfig { kind: Kind::Mcts, margin_s: 0.5, ponder, ..AgentConfig::default() };
        let srv =
            spawn("127.0.0.1:0", ServerConfig { agent, max_matches: 2, max_body: 1 << 20, ..ServerConfig::default() })
                .expect("bind");
        let a = srv.addr;
        assert_eq!(ok(a, &format!("(start p1 red ({text}) 2 2)")), "ready");
        // The manager waits before the first play (other players still starting up).
        std::thread::sleep(Duration::from_millis(800));
        let t = Instant::now();
        let first = ok(a, "(play p1 nil)");
        assert!(first.starts_with("( drop "), "{first}");
        let (runs_start, iters_start, interrupted_start) = srv.server.ponder_stats();
        // The opponent thinks; then the next play arrives.
        std::thread::sleep(Duration::from_millis(800));
        let t_next = Instant::now();
        let second = ok(a, &format!("(play p1 ({first} noop))"));
        let took = t_next.elapsed();
        assert_eq!(second, "noop", "yellow is to move");
        assert!(took < Duration::from_millis(1800), "the next play waited on pondering");
        if ponder {
            // Without pondering, a forced move is searched for half the clock (0.75 s).
            assert!(took < Duration::from_millis(400), "a forced move is answered at once: {took:?}");
        }
        assert_eq!(ok(a, "(stop p1 nil)"), "done");
        std::thread::sleep(Duration::from_millis(300));
        let (runs, iters, interrupted) = srv.server.ponder_stats();
        if ponder {
            // Between ready and the first play, between that reply and the next play, and
            // after the noop reply until stop: each ended by the message that came.
            assert_eq!(runs_start, 1, "after ready");
            assert!(iters_start > 100, "{iters_start} iterations between start and play");
            assert_eq!(interrupted_start, 1);
            assert_eq!(runs, 3, "after each reply");
            assert_eq!(interrupted, 3, "each ended by the next message");
            assert!(iters > iters_start + 100, "{iters}");
        } else {
            assert_eq!((runs, iters, interrupted), (0, 0, 0), "ponder = false searches only while asked");
        }
        assert!(t.elapsed() < Duration::from_secs(6));
    }
}

/// Reads from `s` until the server closes it or `wait` passes; (closed, bytes read).
fn read_until_closed(s: &mut TcpStream, wait: Duration) -> (bool, String) {
    s.set_read_timeout(Some(wait)).expect("timeout");
    let mut out = Vec::new();
    let closed = s.read_to_end(&mut out).is_ok();
    (closed, String::from_utf8_lossy(&out).into_owned())
}

#[test]
fn held_connections_are_timed_out_and_capped() {
    let agent = AgentConfig { kind: Kind::Random, ..AgentConfig::default() };
    let cfg = ServerConfig {
        agent,
        max_body: 1 << 20,
        header_timeout: Duration::from_millis(400),
        body_timeout: Duration::from_millis(400),
        max_connections: 3,
        ..ServerConfig::default()
    };
    let srv = spawn("127.0.0.1:0", cfg).expect("bind");
    let a = srv.addr;
    let t0 = Instant::now();
    // Three held connections: silent, headers half sent, a body shorter than its length.
    let mut silent = TcpStream::connect(a).expect("connect");
    let mut half = TcpStream::connect(a).expect("connect");
    half.write_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: text/acl\r\n").expect("write");
    let mut short = TcpStream::connect(a).expect("connect");
    short.write_all(b"POST / HTTP/1.0\r\nContent-Length: 100\r\n\r\n(info").expect("write");
    std::thread::sleep(Duration::from_millis(100));
    // A fourth is over the cap: closed at once, unanswered.
    let (status, _) = raw(a, b"POST / HTTP/1.0\r\nContent-Length: 6\r\n\r\n(info)");
    assert_eq!(status, 0, "a connection over the cap is closed unanswered");
    assert!(t0.elapsed() < Duration::from_millis(380), "refused at once, not after the held ones timed out");
    // The held ones are closed by the server's timers, the short body with a 408.
    for s in [&mut silent, &mut half] {
        let (closed, _) = read_until_closed(s, Duration::from_secs(5));
        assert!(closed, "a silent or half-sent request is disconnected");
    }
    let (closed, text) = read_until_closed(&mut short, Duration::from_secs(5));
    assert!(closed && text.starts_with("HTTP/1.0 408"), "{text}");
    assert!(t0.elapsed() < Duration::from_secs(3), "held for {:?}", t0.elapsed());
    // Then the server answers again; a body announced past the limit is refused at once.
    assert_eq!(ok(a, "(info)"), "((name factotum) (status available))");
    let (status, _) = raw(a, b"POST / HTTP/1.0\r\nContent-Length: 1000000000\r\n\r\n(info)");
    assert_eq!(status, 413);
    // One request per connection: a keep-alive request is answered and the connection closed.
    let mut keep = TcpStream::connect(a).expect("connect");
    keep.write_all(b"POST / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nContent-Length: 6\r\n\r\n(info)")
        .expect("write");
    let t1 = Instant::now();
    let (closed, text) = read_until_closed(&mut keep, Duration::from_secs(5));
    assert!(closed && text.contains("(status available)"), "{text}");
    assert!(t1.elapsed() < Duration::from_millis(300), "closed after the reply, not by the header timer");
}

#[test]
fn abandoned_matches_expire_and_free_their_slot() {
    let agent = AgentConfig { kind: Kind::Random, ..AgentConfig::default() };
    let cfg =
        ServerConfig { agent, max_matches: 1, match_expiry: Duration::from_millis(300), ..ServerConfig::default() };
    let srv = spawn("127.0.0.1:0", cfg).expect("bind");
    let a = srv.addr;
    let (text, _) = rules("tictactoe.kif");
    assert_eq!(ok(a, &format!("(start gone x ({text}) 1 1)")), "ready");
    assert_eq!(ok(a, &format!("(start next x ({text}) 1 1)")), "busy", "one match at a time");
    // The first match's manager is gone: after 1 + 1 + 0.3 s without a message it expires.
    std::thread::sleep(Duration::from_millis(2900));
    assert_eq!(ok(a, &format!("(start next x ({text}) 1 1)")), "ready", "the abandoned match freed its slot");
    assert_eq!(ok(a, "(play gone nil)"), "busy", "the expired match is gone");
    // A match that gets its messages is kept, past the expiry counted from its start.
    std::thread::sleep(Duration::from_millis(1800));
    assert_ne!(ok(a, "(play next nil)"), "busy");
    std::thread::sleep(Duration::from_millis(1800));
    assert_ne!(ok(a, "(play next nil)"), "busy", "each message restarts the expiry");
    assert_eq!(ok(a, "(abort next)"), "aborted");
}
