#!/usr/bin/env python3
"""Every game of a folder once, with the player under test served over HTTP: one
`factotum serve` (the agent under test) plays one role of each game (the role rotates with
the game's index), in-process random agents play the others, each match run by
`factotum match`. A match still running after --cap seconds is stopped with SIGINT, as a
person would stop it: the manager sends ABORT and saves the record as aborted. Reports,
per game, the steps played, whether the match ended, the agent's late (TO), illegal (IL)
and connection (CE) errors and its goal; and the server's memory after each match.

    python3 tournaments/corpus_sweep.py [--games ../shared/games] [--out matches/corpus_sweep]
        [--agent agents/mcts.toml] [--startclock 5] [--playclock 1] [--margin 0.4]
        [--cap 120] [--only GAME ...]

Run from the repository root after `cargo build --release`. Writes OUT/sweep.md (a table)
and OUT/sweep.jsonl (a line per game); a game whose line is already in sweep.jsonl is not
played again (resumable). Exit code 1 if the agent made any late or illegal move or had a
connection error, if a match failed to run or left no record, or if the server died.
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

from soak import free_port  # noqa: E402 (tournaments/soak.py, beside this script)

BIN = os.environ.get("FACTOTUM", "./target/release/factotum")


def roles_of(game):
    out = subprocess.run([BIN, "check", game], capture_output=True, text=True, timeout=120)
    for line in out.stdout.splitlines():
        if line.startswith("roles:"):
            return line.split()[1:]
    return None


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def agent_with_margin(path, margin):
    text = open(path).read()
    line = f"margin_s = {margin}"
    if re.search(r"(?m)^margin_s\s*=.*$", text):
        text = re.sub(r"(?m)^margin_s\s*=.*$", line, text)
    else:
        text += "\n" + line + "\n"
    f = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    f.write(text)
    f.close()
    return f.name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", default="../shared/games")
    ap.add_argument("--out", default="matches/corpus_sweep")
    ap.add_argument("--agent", default="agents/mcts.toml")
    ap.add_argument("--startclock", type=int, default=5)
    ap.add_argument("--playclock", type=int, default=1)
    ap.add_argument("--margin", type=float, default=0.4)
    ap.add_argument("--cap", type=float, default=120.0)
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()

    os.makedirs(a.out, exist_ok=True)
    games = sorted(g for g in os.listdir(a.games) if g.endswith(".kif"))
    if a.only:
        games = [g for g in games if g[:-4] in a.only or g in a.only]
    done = {}
    jl = os.path.join(a.out, "sweep.jsonl")
    if os.path.exists(jl):
        for line in open(jl):
            r = json.loads(line)
            done[r["game"]] = r

    agent = agent_with_margin(a.agent, a.margin)
    port = free_port()
    srv_log = open(os.path.join(a.out, "serve.log"), "a")
    srv = subprocess.Popen(
        [BIN, "serve", "--host", "127.0.0.1", "--port", str(port), "--agent", agent,
         "--trap-log", os.path.join(a.out, "traps.jsonl")],
        stdout=srv_log, stderr=srv_log)
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)

    failed = False
    t_all = time.time()
    for i, g in enumerate(games):
        name = g[:-4]
        if name in done:
            continue
        path = os.path.join(a.games, g)
        roles = roles_of(path)
        row = {"game": name, "roles": len(roles) if roles else 0}
        if not roles:
            row.update(result="invalid game (no roles)")
            print(json.dumps(row), file=open(jl, "a"))
            continue
        me = i % len(roles)
        players = []
        for k in range(len(roles)):
            players += ["--player", url if k == me else "agents/random.toml"]
        mid = f"sweep.{name}"
        rec = os.path.join(a.out, mid + ".json")
        if os.path.exists(rec):
            os.remove(rec)
        t0 = time.time()
        p = subprocess.Popen(
            [BIN, "match", path, *players, "--startclock", str(a.startclock),
             "--playclock", str(a.playclock), "--out", a.out, "--id", mid, "--seed", str(i + 1),
             "--allow-player-errors"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        capped = False
        try:
            out, err = p.communicate(timeout=a.startclock + a.cap)
        except subprocess.TimeoutExpired:
            capped = True
            p.send_signal(signal.SIGINT)
            try:
                out, err = p.communicate(timeout=a.playclock * 3 + 30)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
        secs = time.time() - t0
        row.update(role=roles[me], secs=round(secs, 1), exit=p.returncode, capped=capped)
        if not os.path.exists(rec):
            row.update(result="no record", stderr=err[-400:])
            failed = True
        else:
            d = json.load(open(rec))
            errs = [step[me] for step in d.get("errors", []) if step[me]]
            row.update(
                steps=len(d.get("moves", [])),
                completed=d.get("isCompleted", False),
                aborted=d.get("isAborted", False),
                errors=errs,
                goal=(d.get("goalValues") or [None] * len(roles))[me],
            )
            if errs:
                failed = True
            if not capped and not d.get("isCompleted", False):
                failed = True
            row["result"] = "errors" if errs else ("ok" if d.get("isCompleted") else
                                                     ("capped" if capped else "not completed"))
            if p.returncode not in (0, 130) and not capped:
                row["stderr"] = err[-400:]
        row["server_rss_mib"] = rss_mib(srv.pid)
        if srv.poll() is not None:
            row["result"] = "server died"
            failed = True
        print(json.dumps(row), file=open(jl, "a"), flush=True)
        print(f"[{i + 1}/{len(games)}] {name}: {row['result']} "
              f"({row.get('steps')} steps, {row['secs']} s, errors {row.get('errors')})", flush=True)
        done[name] = row
        if srv.poll() is not None:
            break

    srv.send_signal(signal.SIGINT)
    try:
        srv.wait(timeout=10)
    except subprocess.TimeoutExpired:
        srv.kill()
    os.unlink(agent)

    rows = [done[g[:-4]] for g in games if g[:-4] in done]
    with open(os.path.join(a.out, "sweep.md"), "w") as f:
        n = len(rows)
        count = lambda r: sum(1 for x in rows if x.get("result") == r)
        f.write(f"# Corpus sweep: {a.agent} over HTTP, one match per game\n\n")
        f.write(f"Start clock {a.startclock} s, play clock {a.playclock} s, margin {a.margin} s, "
                f"cap {a.cap} s per match. {n} games: {count('ok')} completed without an error "
                f"of the agent, {count('capped')} stopped at the cap (aborted), "
                f"{count('errors')} with errors of the agent, "
                f"{n - count('ok') - count('capped') - count('errors')} other.\n\n")
        f.write("| game | roles | agent's role | steps | result | goal | errors | s | server MiB |\n")
        f.write("|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            rss = r.get("server_rss_mib")
            f.write(f"| {r['game']} | {r['roles']} | {r.get('role', '')} | {r.get('steps', '')} | "
                    f"{r['result']} | {r.get('goal', '')} | {' '.join(r.get('errors', []))} | "
                    f"{r.get('secs', '')} | {'' if rss is None else round(rss)} |\n")
    print(f"{len(rows)} games in {time.time() - t_all:.0f} s; see {a.out}/sweep.md")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
