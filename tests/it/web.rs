//! The web view in a real browser: headless Chromium driven through chromedriver (Debian's
//! `chromium` and `chromium-driver`). The pages of `factotum serve` load; a match played
//! against the server shows on the index and its page updates as it goes; the match's record
//! replays, stepped with the buttons; a person plays a move from the browser against the
//! agent and the record has it.
//!
//! Without chromedriver on the PATH the test says so and passes, unless
//! `FACTOTUM_BROWSER_TESTS=1` (as `.ci/run` sets it after installing the browser), where a
//! missing browser fails it. With `FACTOTUM_SCREENSHOTS=DIR` it saves a screenshot of each
//! page there (the README's pictures in `docs/` come from such a run).

use factotum::agent::{AgentConfig, Kind};
use factotum::protocol::{spawn, ServerConfig};
use factotum::web::WebConfig;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::Value;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// chromedriver on a free port, killed when dropped.
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    fn start() -> Option<Driver> {
        let found = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).any(|d| d.join("chromedriver").is_file()))
            .unwrap_or(false);
        if !found {
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let d = Driver { child, port };
        let t0 = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if t0.elapsed() > Duration::from_secs(20) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(d)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn browser(port: u16) -> Client {
    let mut caps = serde_json::Map::new();
    let mut opts = serde_json::json!({
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,900"]
    });
    if Path::new("/usr/bin/chromium").exists() {
        opts["binary"] = "/usr/bin/chromium".into();
    }
    caps.insert("goog:chromeOptions".into(), opts);
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a Chromium session through chromedriver")
}

/// Saves a screenshot of the page as `DIR/name.png` when `FACTOTUM_SCREENSHOTS=DIR`.
async fn screenshot(c: &Client, name: &str) {
    if let Some(dir) = std::env::var_os("FACTOTUM_SCREENSHOTS") {
        let png = c.screenshot().await.expect("screenshot");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(Path::new(&dir).join(format!("{name}.png")), png).unwrap();
    }
}

/// Runs `script` (given `css` as `arguments[0]`) in the page at once: the pages swap their
/// parts as the match goes, so an element found in one command may be gone by the next.
async fn js(c: &Client, script: &str, css: &str) -> Value {
    c.execute(script, vec![Value::String(css.into())]).await.unwrap_or_else(|e| panic!("{css}: {e}"))
}

/// The text of the element `css` selects.
async fn text(c: &Client, css: &str) -> String {
    let v = js(c, "const e = document.querySelector(arguments[0]); return e ? e.textContent : null;", css).await;
    v.as_str().unwrap_or_else(|| panic!("no {css} on the page")).to_string()
}

/// Waits (at most `secs`) until `ready` holds, polling every 100 ms.
async fn until<F, Fut>(secs: u64, what: &str, mut ready: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let t0 = Instant::now();
    while !ready().await {
        assert!(t0.elapsed() < Duration::from_secs(secs), "waited {secs} s for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("factotum-web-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_web_view_in_a_real_browser() {
    let Some(driver) = Driver::start() else {
        assert!(
            std::env::var("FACTOTUM_BROWSER_TESTS").as_deref() != Ok("1"),
            "FACTOTUM_BROWSER_TESTS=1 but chromedriver cannot be started"
        );
        eprintln!("skipped: no chromedriver on the PATH (install chromium and chromium-driver)");
        return;
    };
    let dir = temp("browser");
    let records = dir.join("records");
    let kiosk = dir.join("kiosk");
    std::fs::create_dir_all(&records).unwrap();
    let agent = AgentConfig { kind: Kind::Mcts, margin_s: 0.5, ..AgentConfig::default() };
    let web = WebConfig {
        records: Some(records.clone()),
        games: Some(root().join("gdl")),
        kiosk_out: Some(kiosk.clone()),
        ..WebConfig::default()
    };
    let srv = spawn("127.0.0.1:0", ServerConfig { agent, web, ..ServerConfig::default() }).expect("bind");
    let base = format!("http://{}", srv.addr);
    let random = dir.join("random.toml");
    std::fs::write(&random, "name = \"random\"\nkind = \"random\"\nmargin_s = 0.5\n").unwrap();
    // A match against the server, played by the game manager in another process.
    let mut manager = Command::new(env!("CARGO_BIN_EXE_factotum"))
        .args(["match", "gdl/tictactoe.kif", "--player", &base, "--player", random.to_str().unwrap()])
        .args(["--startclock", "2", "--playclock", "2", "--id", "web.live", "--out", records.to_str().unwrap()])
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("match.log")).unwrap())
        .spawn()
        .expect("factotum match");

    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let c = browser(driver.port).await;

        // The index lists the live match, and its page follows the match as it goes.
        c.goto(&format!("{base}/")).await.unwrap();
        assert_eq!(c.title().await.unwrap(), "Factotum");
        c.wait()
            .at_most(Duration::from_secs(20))
            .for_element(Locator::Css("#live-table a"))
            .await
            .expect("the live match is listed");
        assert_eq!(text(&c, "#live-table a").await, "web.live");
        screenshot(&c, "web-index").await;
        // Followed in the page (the list is redrawn every second).
        js(&c, "document.querySelector(arguments[0]).click(); return null;", "#live-table a").await;
        c.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css("table.board")).await.expect("a board");
        // The step and the status read together: a match already over when a slow browser
        // first shows its page has no later step to follow (the stop's step is its last).
        let read =
            "return [document.querySelector('#step').textContent, document.querySelector('#status').textContent];";
        let now = js(&c, read, "").await;
        let first: usize = now[0].as_str().expect("#step").parse().unwrap();
        if now[1] == "over" {
            eprintln!("the live match was over at step {first} when its page first showed");
        } else {
            until(30, "the page to show a later step", || async {
                text(&c, "#step").await.parse::<usize>().unwrap() > first
            })
            .await;
        }
        until(30, "the search's root moves", || async { c.find(Locator::Css("#best-table")).await.is_ok() }).await;
        let cells = c.find_all(Locator::Css("table.board td")).await.unwrap();
        assert_eq!(cells.len(), 9, "tic-tac-toe's board");
        screenshot(&c, "web-match").await;

        // Once over, the record replays: the buttons step through it.
        let t0 = Instant::now();
        while manager.try_wait().unwrap().is_none() {
            assert!(t0.elapsed() < Duration::from_secs(60), "the match did not end");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(manager.wait().unwrap().success(), "{}", std::fs::read_to_string(dir.join("match.log")).unwrap());
        c.goto(&format!("{base}/records/")).await.unwrap();
        c.find(Locator::Css("#records a")).await.expect("the record is listed").click().await.unwrap();
        c.wait().for_element(Locator::Css("#next")).await.unwrap();
        assert_eq!(text(&c, "#step").await, "0");
        let next = c.find(Locator::Css("#next")).await.unwrap();
        next.click().await.unwrap();
        next.click().await.unwrap();
        assert_eq!(text(&c, "#step").await, "2");
        let shown = c.find(Locator::Css("section.step:not([hidden])")).await.unwrap();
        assert_eq!(shown.attr("data-step").await.unwrap().as_deref(), Some("2"));
        assert!(shown.text().await.unwrap().contains("Joint move 2"));
        screenshot(&c, "web-replay").await;

        // A person plays x against the agent: picks the game, the role and clocks, then a move.
        c.goto(&format!("{base}/play")).await.unwrap();
        c.find(Locator::Css("#game")).await.unwrap().select_by_value("tictactoe.kif").await.unwrap();
        until(10, "the game's roles", || async { c.find(Locator::Css("#role option")).await.is_ok() }).await;
        c.find(Locator::Css("#role")).await.unwrap().select_by_value("x").await.unwrap();
        for (id, v) in [("#startclock", "2"), ("#playclock", "4")] {
            let input = c.find(Locator::Css(id)).await.unwrap();
            input.clear().await.unwrap();
            input.send_keys(v).await.unwrap();
        }
        c.find(Locator::Css("#start")).await.unwrap().click().await.unwrap();
        c.wait()
            .at_most(Duration::from_secs(20))
            .for_element(Locator::Css("button.move"))
            .await
            .expect("the person's legal moves");
        screenshot(&c, "web-play").await;
        let url = c.current_url().await.unwrap();
        let id = url.path().trim_start_matches("/match/").to_string();
        let clicked = "const b = document.querySelector(arguments[0]); b.click(); return b.dataset.move;";
        let mv = js(&c, clicked, "button.move").await.as_str().expect("a move").to_string();
        until(20, "the agent's reply", || async {
            c.find(Locator::Css("#last")).await.is_ok() && text(&c, "#step").await != "0"
        })
        .await;
        assert!(text(&c, "#last").await.contains(&mv), "the joint move has the person's move");
        c.close().await.unwrap();

        // The record names the person, marks the seat human and has the move.
        let rec_path = kiosk.join(format!("{id}.json"));
        until(10, "the kiosk's record", || async { rec_path.exists() }).await;
        let rec: Value = serde_json::from_str(&std::fs::read_to_string(&rec_path).unwrap()).unwrap();
        assert_eq!(rec["isPlayerHuman"], serde_json::json!([true, false]), "{rec}");
        assert_eq!(rec["playerNamesFromHost"][0], "human");
        assert_eq!(rec["moves"][0][0], Value::String(mv));
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// One HTTP/1.0 request; the status code and the body.
fn http(addr: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(s, "{method} {path} HTTP/1.0\r\nContent-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = out.split_once("\r\n\r\n").map_or(String::new(), |(_, b)| b.to_string());
    (status, body)
}

#[test]
fn factotum_view_serves_recorded_matches_and_plays_no_ggp() {
    use std::io::BufRead;
    let dir = temp("view");
    let random = dir.join("random.toml");
    std::fs::write(&random, "name = \"random\"\nkind = \"random\"\nmargin_s = 0.5\n").unwrap();
    let records = dir.join("t");
    let r = random.to_str().unwrap();
    let played = Command::new(env!("CARGO_BIN_EXE_factotum"))
        .args(["match", "gdl/tictactoe.kif", "--player", r, "--player", r, "--startclock", "1", "--playclock", "1"])
        .args(["--id", "v.1", "--out", records.to_str().unwrap()])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(played.status.success(), "{}", String::from_utf8_lossy(&played.stderr));
    let mut child = Command::new(env!("CARGO_BIN_EXE_factotum"))
        .args(["view", dir.to_str().unwrap(), "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.trim().trim_start_matches("factotum view: open http://").trim_end_matches('/').to_string();
    let (status, index) = http(&addr, "GET", "/", "");
    assert_eq!(status, 200, "{line}");
    assert!(index.contains("<a href=\"/records/t\">t</a>"), "{index}");
    let (_, folder) = http(&addr, "GET", "/records/t", "");
    assert!(folder.contains("<a href=\"/record/t/v.1.json\">v.1</a>"), "{folder}");
    let (status, replay) = http(&addr, "GET", "/record/t/v.1.json", "");
    assert_eq!(status, 200);
    assert!(replay.contains("data-page=\"replay\"") && replay.contains("random as x"), "{replay}");
    // It plays no GGP, and shows nothing outside its folder.
    let (status, reply) = http(&addr, "POST", "/", "( info )");
    assert_eq!(status, 404, "{reply}");
    assert_eq!(http(&addr, "GET", "/raw/t/../../random.toml", "").0, 404);
    assert_eq!(http(&addr, "GET", "/play", "").0, 404, "no kiosk without --games");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A watched match's page sees the search as it goes: while the server searches a 6 s play
/// clock, its root moves' visits grow on the page before the move is sent (an unwatched
/// search shows them only once it is over).
#[test]
fn a_watched_search_shows_its_root_moves_as_it_goes() {
    let agent = AgentConfig { kind: Kind::Mcts, margin_s: 0.5, ..AgentConfig::default() };
    let srv = spawn("127.0.0.1:0", ServerConfig { agent, ..ServerConfig::default() }).expect("bind");
    let addr = srv.addr.to_string();
    // Connect four: not solved in the 5.5 s searched.
    let kif = std::fs::read_to_string(root().join("gdl/connect4.kif")).unwrap();
    let rules = factotum::manager::referee::rules_text(&kif).unwrap();
    let (status, ready) = http(&addr, "POST", "/", &format!("(start w.1 red ({rules}) 1 6)"));
    assert_eq!((status, ready.trim()), (200, "ready"));
    let visits = || -> (usize, u64, bool) {
        let (_, body) = http(&addr, "GET", "/api/match/w.1", "");
        let v: Value = serde_json::from_str(&body).expect("JSON");
        let m = &v["match"];
        let n = m["best"].as_array().unwrap().iter().map(|b| b["visits"].as_u64().unwrap()).sum();
        (m["step"].as_u64().unwrap() as usize, n, m["chosen"].is_null())
    };
    visits(); // the page opens: the match is watched from now on
    let a = addr.clone();
    let play = std::thread::spawn(move || http(&a, "POST", "/", "(play w.1 nil)"));
    std::thread::sleep(Duration::from_millis(1300));
    let (step, early, none_chosen) = visits();
    std::thread::sleep(Duration::from_millis(1100));
    let (_, later, still_none) = visits();
    assert!(!play.is_finished(), "the move is not sent yet");
    assert_eq!(step, 0);
    assert!(none_chosen && still_none, "no move chosen yet");
    assert!(early > 0 && later > early, "visits {early} then {later}");
    let (status, mv) = play.join().unwrap();
    assert_eq!(status, 200);
    assert!(mv.contains("drop"), "{mv}");
}
