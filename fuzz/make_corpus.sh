#!/usr/bin/env bash
# Regenerates the seed corpus in fuzz/corpus/<harness>/ from `pipeproof generate` outputs (small P and M, every
# family, all three formats), the conformance files and the malformed inputs of the tests. The corpus is
# committed (a few hundred KB); run this after a format changes. Needs build/pipeproof.
#   fuzz/make_corpus.sh [path/to/pipeproof]
set -euo pipefail
cd "$(dirname "$0")/.."
pp="${1:-build/pipeproof}"
out=fuzz/corpus
rm -rf "$out"
mkdir -p "$out"/{fuzz_native,fuzz_csv,fuzz_json,fuzz_costs,fuzz_claim,fuzz_chunk,fuzz_round_trip,fuzz_certificate}

# seed HARNESS NAME BYTE TEXT: the harness's selector byte (hex), then TEXT with printf's \n escapes.
seed() { { printf "\\x$3"; printf '%b' "$4"; } > "$out/$1/$2"; }

# Generated schedules. CSV seeds start with the harness's option byte (0: current letters, no -P/-M/--stages).
gen() {  # family P M [V]
  local name="$1-P$2-M$3${4:+-V$4}" v=()
  [ -n "${4:-}" ] && v=(-V "$4")
  "$pp" generate "$1" -P "$2" -M "$3" "${v[@]}" -o "$out/fuzz_native/$name.txt" 2>/dev/null || return 0
  "$pp" generate "$1" -P "$2" -M "$3" "${v[@]}" --format json -o "$out/fuzz_json/$name.json"
  if "$pp" generate "$1" -P "$2" -M "$3" "${v[@]}" --format torch-csv --csv-line-end lf -o /tmp/pp_seed.csv 2>/dev/null; then
    { printf '\0'; cat /tmp/pp_seed.csv; } > "$out/fuzz_csv/$name.csv"
  fi
}
for f in gpipe 1f1b zb-h1 zb-h2 zbv dualpipev; do gen "$f" 2 4; gen "$f" 3 6; done
for f in interleaved-1f1b looped-bfs zb1p; do gen "$f" 2 4 2; done
gen dualpipe 2 4; gen dualpipe 4 8; gen chimera 2 4
# Multi-pipeline and costed native files.
"$pp" convert "$out/fuzz_native/dualpipe-P2-M4.txt" -o "$out/fuzz_native/bidirectional.txt"
cat > "$out/fuzz_native/readme-example.txt" <<'TXT'
# DualPipe-style example: 2 ranks, two directions, one micro-batch each
ranks 2
microbatches 2              # total, split in two halves by 'placement bidirectional'
placement bidirectional
costs F=1 I=1 W=1 FB=2.5 comm=0
memory-limit 3
rank 0: 1F0@1 (0F0;1B0@1) 0B0
rank 1: 0F0@1 (1F0;0B0@1) 1B0
TXT
cat > "$out/fuzz_native/pipelines.txt" <<'TXT'
ranks 2
pipeline 0 microbatches 2 ranks 0 1 blocks 0 1
pipeline 1 microbatches 2 ranks 1 0 blocks 1 0
stage-costs 1 F=2 I=2 W=1
rank 0: 0F0 0F1 . 1F0@1 0I0 0W0
rank 1: 1F0 1B0 0F0@1 1F1 1B1 1B0@1
TXT
# Conformance files (PyTorch's own artifacts), both letter eras.
for f in tests/conformance/torchtitan/*.csv tests/conformance/pytorch/dualpipev_4rank_10mb.csv; do
  { printf '\0'; cat "$f"; } > "$out/fuzz_csv/$(basename "$f")"
done
for f in tests/conformance/pytorch/zb1p_*.csv; do { printf '\1'; cat "$f"; } > "$out/fuzz_csv/$(basename "$f")"; done
# Malformed inputs from the tests (tests/test_input_hardening.cpp, test_native_format.cpp, test_torch_csv.cpp).
printf 'ranks 1\nmicrobatches 1\ncosts # x\nrank 0: 0F0 0B0\n' > "$out/fuzz_native/bare-costs.txt"
printf 'ranks 1000000\nmicrobatches 1000000\nrank 0: 0F0\n' > "$out/fuzz_native/huge-header.txt"
printf 'ranks 2\nmicrobatches 2\nrank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F0 1F1 1B0 1B1\n' > "$out/fuzz_native/deadlock.txt"
printf 'ranks 2\nmicrobatches 2\nmemory-limit 1\nrank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1\n' > "$out/fuzz_native/over-memory.txt"
seed fuzz_csv tiny-huge.csv 00 '0F0,9999W9999'
# From the adversarial run of 2026-12-02: half a character quoted alone, a glued colon after an overlong
# UTF-8 comment, a pair with its backward first, blanks padding a row.
printf 'ranks 1\nmicrobatches 1\nrank 0: 0F0 \xc3\xa9 0B0\n' > "$out/fuzz_native/utf8-half-character.txt"
printf 'ranks 1\nmicrobatches 2\n# x\xc0\x80y\nrank 0:0F0 (0B0;0F1) 0B1\n' > "$out/fuzz_native/glued-colon-overlong.txt"
seed fuzz_csv tabs.csv 00 '0F0,\t\t\t\t0B0\n'
seed fuzz_csv big-cell.csv 00 '999999F999999\n'
seed fuzz_csv comms-swap.csv 00 '0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n1RECV_F1,1RECV_F0,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n'
seed fuzz_csv bad-cells.csv 00 '(0F7;7B3)OVERLAP_F_B,1BW0,0F1xyz\n'
printf '{"ranks": 1e400}' > "$out/fuzz_json/inf.json"
printf '{"format":"pipeproof-schedule","version":1,"ranks":1,"pipelines":[{"microbatches":1,"stage_ranks":[0]}],"costs":{"F":18446744073709551615},"schedule":[{"rank":0,"ops":[{"kind":"F","stage":0,"microbatch":0},{"overlap":[{"kind":"F","stage":0,"microbatch":0},{"kind":"B","stage":0,"microbatch":0}]}]}]}' > "$out/fuzz_json/wrap.json"
# Costs (first byte: 0 parse_costs, 1 parse_rational, 2 --costs + newline + --stage-costs, 3 --activation-sizes,
# 4 --layout).
seed fuzz_costs costs.txt 00 'F=1,I=1.5,W=0.5,B=2,FB=2,comm=0'
seed fuzz_costs zb-costs.txt 00 'F=18522 I=18086 W=9337 comm=601'
seed fuzz_costs fraction.txt 01 '7/4'
seed fuzz_costs decimal.txt 01 '0.000000001'
seed fuzz_costs stage-costs.txt 02 'F=1,I=1,W=1,comm=1/1000037\n3:F=2,I=2,W=1'
seed fuzz_costs activations.txt 03 'F=2,I=1'
seed fuzz_costs layout.txt 04 'Et*3|(tt|)*29,m|L'
seed fuzz_costs layout-empty.txt 04 'E||(t*2|)*3,tL'
# Claims (first byte: 0 parse_claim, 1 parse_constraints, 2 parse_cost_grid).
seed fuzz_claim dualpipe.txt 00 'bubble == (P/2-1)*(FB+B-3*W)'
seed fuzz_claim calls.txt 00 'bubble(M+2) > bubble(M) || !(idle(0, M) <= 2*F) && peak(1) != P+1'
seed fuzz_claim assume.txt 01 'FB >= B && I == F && W <= 2*F - comm'
seed fuzz_claim grid.txt 02 'F=1,I=1..2@0.5,W=0.5|1,FB=2..3@0.5,comm=0'
# Chunk claims (first byte 3: parse_chunk_claim); the chunk claim parser once overflowed its stack on 10^5 '-'.
seed fuzz_claim chunk-claim.txt 03 'exposed_comm <= 1/2 * network_comm || !(pair_exposed > 0) && attn_f*2 != -mlp_w'
seed fuzz_claim chunk-deep.txt 03 "$(printf -- '-%.0s' {1..150})1 == 1"
# MoE chunk costs and patterns (first byte: 0 parse_chunk_costs, 1 parse_pattern, 2 pattern + newline + costs, derived).
case_a='attn_f=2,dispatch_f=1,mlp_f=3,combine_f=1,combine_b=1,mlp_i=3,mlp_w=2,dispatch_b=4,attn_i=2,attn_w=1'
custom='compute: attn_f0 mlp_f0 mlp_i0 mlp_w0 attn_i0 attn_w0 / network: dispatch_f0 combine_f0 combine_b0 dispatch_b0'
seed fuzz_chunk costs.txt 00 "$case_a"
seed fuzz_chunk layers.txt 00 "layers=2,$case_a,shared_f=1,shared_i=1,shared_w=1,slowdown=1/4,pp=1,mlp_f@1=5"
seed fuzz_chunk named.txt 01 'megatron'
seed fuzz_chunk custom.txt 01 "$custom"
seed fuzz_chunk derive-deepseek.txt 02 "deepseek\\n$case_a"
seed fuzz_chunk derive-custom.txt 02 "$custom\\nlayers=1,$case_a,slowdown=1/2"
# Native files with a chunks section (tests/test_chunk_cli.cpp).
printf 'ranks 1\nmicrobatches 1\nchunks layers=1 %s mlp_f@0=5\nchunk-pattern %s\nrank 0: 0F0 0B0\n' \
  "${case_a//,/ }" "$custom" > "$out/fuzz_native/chunks.txt"
"$pp" convert "$out/fuzz_native/chunks.txt" -o "$out/fuzz_json/chunks.json"
# Sequence segments (Seq1F1B): native and JSON seeds with segment costs.
"$pp" generate seq1f1b -P 2 -M 2 --segments 2 -o "$out/fuzz_native/seq1f1b-P2-M2-k2.txt" 2>/dev/null
sed -i 's/^segments 2$/segments 2\nsegment-costs 3\/8,5\/8/' "$out/fuzz_native/seq1f1b-P2-M2-k2.txt"
"$pp" convert "$out/fuzz_native/seq1f1b-P2-M2-k2.txt" -o "$out/fuzz_json/seq1f1b-P2-M2-k2.json"
# Round trip (first byte: 0 native, 1 JSON, 2 PyTorch CSV; +4: 2024 letters): the readers' seeds, and a file
# with every header (fractions the writers print as long decimals, stage costs, memory limit, activation sizes).
printf 'ranks 2\nmicrobatches 2\ncosts F=1/1024 I=1000000000001/4 W=3/65536 FI=7/3 comm=1/3\nstage-costs 1 F=1/3\nmemory-limit 3/2\nactivation-sizes F=1 I=11/16\nrank 0: 0F0 0F1 . 0I0 0W0 0I1 0W1\nrank 1: 1F0 1I0 1F1 1I1 1W0 1W1\n' \
  > "$out/fuzz_native/every-header.txt"
for f in "$out"/fuzz_native/*; do { printf '\0'; cat "$f"; } > "$out/fuzz_round_trip/native-$(basename "$f")"; done
for f in "$out"/fuzz_json/*; do { printf '\1'; cat "$f"; } > "$out/fuzz_round_trip/json-$(basename "$f")"; done
for f in "$out"/fuzz_csv/*; do  # the CSV harness's first byte: bit 0 = 2024 letters
  if [ "$(head -c1 "$f" | od -An -tu1 | tr -d ' ')" = 1 ]; then era='\6'; else era='\2'; fi
  { printf "$era"; tail -c +2 "$f"; } > "$out/fuzz_round_trip/csv-$(basename "$f")"
done
# Certificates of small proofs (the checker's harness): exact and symbolic costs, a step program, a zone word,
# batched timing (a communication program), sequence segments.
cert() {  # name, then prove's arguments
  local name="$1" dir
  shift
  dir=$(mktemp -d)
  "$pp" prove "$@" --certificate "$dir" >/dev/null 2>&1 && cp "$dir/certificate.json" "$out/fuzz_certificate/$name.json"
  rm -rf "$dir"
}
cert 1f1b-exact 1f1b -P 2 --costs F=1,I=1,W=1
cert 1f1b-symbolic 1f1b -P 2
cert dualpipev-exact dualpipev -P 2 --costs F=1,I=1,W=1
cert gpipe-exact gpipe -P 2 --costs F=1,I=1,W=1
cert looped-bfs-symbolic looped-bfs -P 2 -V 2
cert zb-h1-exact zb-h1 -P 3 --costs F=1,I=1,W=1
cert dualpipe-batched dualpipe -P 2 --model batched --costs F=1,I=1,W=1,FB=3/2
cert seq1f1b-exact seq1f1b -P 2 --segments 2 --costs F=1,I=1,W=1
echo "seed corpus: $(find "$out" -type f | wc -l) files, $(du -sh "$out" | cut -f1)"
