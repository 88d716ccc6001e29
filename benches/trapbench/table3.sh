#!/bin/bash
# The move-matching experiment of Evans and Turrini (Table 3, first two samples): pairs of
# chess positions, how many of their five most frequent move matches over two plies are
# equally decisive (both end the game or neither), and the top match. Run from the repo root
# after `cargo build --release`; prints a Markdown table. (* marks a move that ends the game.)
set -euo pipefail
F=${FACTOTUM:-./target/release/factotum}
declare -A P
P[Legal]="1.e4 e5 2.Nf3 Nc6 3.Bc4 d6 4.Nc3 Bg4 5.Nxe5"
P[Budapest]="1.d4 Nf6 2.c4 e5 3.d5 Bc5 4.Bg5 Ne4"
P[Kieninger]="1.d4 Nf6 2.c4 e5 3.dxe5 Ng4 4.Bf4 Nc6 5.Nf3 Bb4+ 6.Nbd2 Qe7 7.a3 Ngxe5"
P[CaroKann]="1.e4 c6 2.d3 d5 3.Nd2 dxe4 4.dxe4 Nf6 5.Ngf3 Bg4 6.e5 Nd5 7.h3 Bh5 8.c4 Nb6 9.e6 Na6 10.Ne5"
pair() { # name a b
  out=$($F similar --chess --a "$2" --b "$3" --json)
  python3 -c '
import json,sys
v=json.loads(sys.argv[2]); t=v["match_counts"][:5]
m=lambda c,k: ("*" if c[k+"_ends"] else "")
top=t[0]
sim={s["measure"]:s["similarity"] for s in v["similarities"]}
print("| %s | %d | %s%s, %s%s (x%d) | %.3f |"%(sys.argv[1],v["equally_decisive_in_top"],top["first"],m(top,"first"),top["second"],m(top,"second"),top["count"],sim["structural over continuations d=1"]))
' "$1" "$out"
}
echo "| pair | equally decisive of top 5 | top match | structural |"
echo "|---|---|---|---|"
pair "Légal, Budapest" "${P[Legal]}" "${P[Budapest]}"
pair "Légal, Kieninger" "${P[Legal]}" "${P[Kieninger]}"
pair "Légal, Caro-Kann" "${P[Legal]}" "${P[CaroKann]}"
pair "Budapest, Kieninger" "${P[Budapest]}" "${P[Kieninger]}"
pair "Budapest, Caro-Kann" "${P[Budapest]}" "${P[CaroKann]}"
pair "Caro-Kann, Kieninger" "${P[CaroKann]}" "${P[Kieninger]}"
pair "Budapest, Budapest + 5.b3 a6" "${P[Budapest]}" "${P[Budapest]} 5.b3 a6"
pair "Budapest, Budapest + 5.Bd2 Qh4" "${P[Budapest]}" "${P[Budapest]} 5.Bd2 Qh4"
pair "Légal, Légal + 5...h6 6.a3" "${P[Legal]}" "${P[Legal]} h6 6.a3"
pair "Légal, Légal + 5...h6 6.Nxg4" "${P[Legal]}" "${P[Legal]} h6 6.Nxg4"
pair "Légal, Légal + 5...Nxe5 6.Be2" "${P[Legal]}" "${P[Legal]} Nxe5 6.Be2"
