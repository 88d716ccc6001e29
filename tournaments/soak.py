#!/usr/bin/env python3
"""Soak test of `factotum serve`: N matches, M at once, run by `factotum match` against
the player under test (A) from a second `factotum serve` (B), an in-process random agent,
and a misbehaving stub player (slow, illegal, garbage, dropped connections). Samples A's
memory and open file descriptors as it goes; reports late (TO), illegal (IL) and
connection (CE) errors of A, peak memory and descriptors, and matches not completed.

    python3 tournaments/soak.py [--matches 1000] [--parallel 8] [--out matches/soak]

Run from the repository root after `cargo build --release`. Exit code 1 if A had any
late or illegal move, or a match did not complete.
"""
import argparse
import concurrent.futures as cf
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time

BIN = os.environ.get("FACTOTUM", "./target/release/factotum")
GAMES = ["gdl/tictactoe.kif", "gdl/connect4.kif", "gdl/three_to_fifteen.kif"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def stub(port, stop):
    """A GGP player that answers START, then misbehaves on PLAY at random."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(64)
    srv.settimeout(0.5)

    def serve(c):
        try:
            c.settimeout(10)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = c.recv(4096)
                if not chunk:
                    return
                data += chunk
            head, body = data.split(b"\r\n\r\n", 1)
            n = 0
            for line in head.decode(errors="replace").split("\r\n"):
                if line.lower().startswith("content-length:"):
                    n = int(line.split(":")[1])
            while len(body) < n:
                chunk = c.recv(65536)
                if not chunk:
                    break
                body += chunk
            msg = body.decode(errors="replace").upper()
            r = random.random()
            if "START" in msg:
                reply = "ready"
            elif "PLAY" in msg:
                if r < 0.1:
                    time.sleep(2.5)  # late
                    reply = "noop"
                elif r < 0.2:
                    c.close()
                    return
                elif r < 0.3:
                    reply = "((( garbage"
                else:
                    reply = random.choice(["noop", "( mark 1 1 )", "( drop 1 )", "( take 1 )"])
            else:
                reply = "done"
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/acl\r\nContent-Length: %d\r\n\r\n%s" % (len(reply), reply.encode()))
        except OSError:
            pass
        finally:
            c.close()

    while not stop.is_set():
        try:
            c, _ = srv.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    srv.close()


def sample(pid, stats, stop):
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        stats["rss_kb"].append(int(line.split()[1]))
            stats["fds"].append(len(os.listdir(f"/proc/{pid}/fd")))
        except OSError:
            pass
        stop.wait(1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--matches", type=int, default=1000)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--out", default="matches/soak")
    ap.add_argument("--agent", default="agents/serve_ponder.toml")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    pa, pb, ps = free_port(), free_port(), free_port()
    log = open(os.path.join(args.out, "serve-a.log"), "w")
    a = subprocess.Popen([BIN, "serve", "--port", str(pa), "--agent", args.agent, "--max-matches", str(args.parallel)],
                         stdout=log, stderr=log, env={**os.environ, "RUST_LOG": "warn"})
    b = subprocess.Popen([BIN, "serve", "--port", str(pb), "--agent", "agents/random.toml", "--max-matches",
                          str(args.parallel)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stop = threading.Event()
    threading.Thread(target=stub, args=(ps, stop), daemon=True).start()
    stats = {"rss_kb": [], "fds": []}
    threading.Thread(target=sample, args=(a.pid, stats, stop), daemon=True).start()
    time.sleep(1)
    opponents = [f"http://127.0.0.1:{pb}", "agents/random.toml", f"http://127.0.0.1:{ps}"]
    a_url = f"http://127.0.0.1:{pa}"

    def one(k):
        game = GAMES[k % len(GAMES)]
        opp = opponents[(k // len(GAMES)) % len(opponents)]
        a_first = k % 2 == 0
        players = [a_url, opp] if a_first else [opp, a_url]
        mid = f"soak.{k}"
        cmd = [BIN, "match", game, "--player", players[0], "--player", players[1], "--startclock", "2",
               "--playclock", "1", "--out", args.out, "--id", mid, "--seed", str(k), "--margin-s", "0.3",
               "--allow-player-errors"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        try:
            rec = json.load(open(os.path.join(args.out, mid + ".json")))
        except (OSError, ValueError):
            return (k, game, opp, None, p.returncode, p.stderr[-300:])
        ra = 0 if a_first else 1
        errs = [row[ra] for row in rec.get("errors", [])[1:]]  # plays only
        return (k, game, opp, {"completed": rec.get("isCompleted"), "to": sum(e == "TO" for e in errs),
                               "il": sum(e.startswith("IL") for e in errs), "ce": sum(e == "CE" for e in errs),
                               "start": rec.get("errors", [[""]])[0][ra], "plays": len(errs)}, p.returncode, "")

    t0 = time.time()
    results = []
    with cf.ThreadPoolExecutor(args.parallel) as ex:
        for i, r in enumerate(ex.map(one, range(args.matches)), 1):
            results.append(r)
            if i % 50 == 0 or i == args.matches:
                el = time.time() - t0
                print(f"[{i}/{args.matches}] {el:.0f} s, ETA {el / i * (args.matches - i):.0f} s, "
                      f"A rss {stats['rss_kb'][-1] // 1024 if stats['rss_kb'] else 0} MB, "
                      f"fds {stats['fds'][-1] if stats['fds'] else 0}", file=sys.stderr, flush=True)
    stop.set()
    a.terminate()
    b.terminate()
    a.wait()
    b.wait()
    ok = [r for r in results if r[3] is not None]
    missing = [r for r in results if r[3] is None]
    tot = lambda key: sum(r[3][key] for r in ok)
    incomplete = [r for r in ok if not r[3]["completed"]]
    plays = tot("plays")
    print(f"# Soak: {args.matches} matches, {args.parallel} at once, {time.time() - t0:.0f} s\n")
    print("| opponent | matches | A's plays | A late (TO) | A illegal (IL) | A connection (CE) | START not ready |")
    print("|---|---|---|---|---|---|---|")
    for opp in opponents:
        rs = [r for r in ok if r[2] == opp]
        s = lambda key: sum(r[3][key] for r in rs)
        print(f"| {opp} | {len(rs)} | {s('plays')} | {s('to')} | {s('il')} | {s('ce')} | "
              f"{sum(1 for r in rs if r[3]['start'])} |")
    rss = stats["rss_kb"] or [0]
    fds = stats["fds"] or [0]
    print(f"\nA's memory (resident, sampled each second): peak {max(rss) // 1024} MB, median "
          f"{sorted(rss)[len(rss) // 2] // 1024} MB, last {rss[-1] // 1024} MB; "
          f"open descriptors: peak {max(fds)}, last {fds[-1]}.")
    print(f"Matches without a record: {len(missing)}; not completed: {len(incomplete)}; A's plays: {plays}.")
    for r in missing[:5]:
        print(f"- {r[0]} {r[1]} vs {r[2]}: exit {r[4]} {r[5]}")
    bad = tot("to") + tot("il") + len(missing) + len(incomplete)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
