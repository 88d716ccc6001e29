#!/usr/bin/env python3
"""Iterations per move from `factotum serve --log-json` logs (tournaments/ponder.sh writes
them): for each turn with a choice (more than `noop`), the iterations searched while the
PLAY was pending, and those pondered since the player's previous reply in the same match
(the tree the move is chosen from holds both). Prints a Markdown table per log and game.

    python3 tournaments/ponder_iterations.py matches/ponder/serve-*.log.gz

(Logs may be gzipped, as the committed ones are.)
"""
import gzip
import json
import statistics
import sys
from collections import defaultdict


def game_of(match_id):
    # ponder.GAME.PLAYERS.ROUND
    parts = match_id.split(".")
    return parts[1] if len(parts) > 2 else match_id


def main(paths):
    print("| log | game | turns with a choice | median searched | median pondered before | median available | mean available |")
    print("|---|---|---|---|---|---|---|")
    for path in paths:
        pondered = {}  # match id -> iterations pondered since the last reply
        rows = defaultdict(list)  # game -> [(searched, pondered)]
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            for line in f:
                if not line.startswith("{"):
                    continue
                e = json.loads(line)
                fields = e.get("fields", {})
                spans = e.get("spans") or []
                mid = next((s.get("id") for s in spans if s.get("name") == "match"), None)
                if mid is None:
                    continue
                msg = fields.get("message")
                if msg == "pondered":
                    pondered[mid] = pondered.get(mid, 0) + fields["iterations"]
                elif msg == "move":
                    before = pondered.pop(mid, 0)
                    if fields.get("chosen") != "noop":
                        rows[game_of(mid)].append((fields["iterations"], before))
        for game, xs in sorted(rows.items()):
            searched = [s for s, _ in xs]
            ponder = [p for _, p in xs]
            avail = [s + p for s, p in xs]
            print(
                f"| {path.split('/')[-1]} | {game} | {len(xs)} | {statistics.median(searched):,.0f} | "
                f"{statistics.median(ponder):,.0f} | {statistics.median(avail):,.0f} | {statistics.mean(avail):,.0f} |"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
