#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, clang with -fsanitize=fuzzer,address,undefined) in build-fuzz and
# runs each for SECONDS (default 60), starting from the committed seed corpus (fuzz/corpus/<harness>, copied:
# the corpus a run grows stays in build-fuzz/corpus). Prints executions and crashes per harness; exits 1 if
# any harness found a crash (its input is in build-fuzz/crashes/<harness>/), 0 otherwise.
#
#   scripts/fuzz.sh            # 60 s each
#   scripts/fuzz.sh 600        # 10 min each
#   FUZZERS="fuzz_csv" scripts/fuzz.sh 30
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
fuzzers="${FUZZERS:-fuzz_native fuzz_csv fuzz_json fuzz_costs fuzz_claim fuzz_chunk fuzz_round_trip fuzz_certificate fuzz_search_certificate}"

# clang-14 and its runtime (libFuzzer, ASan, UBSan) on top of what scripts/setup.sh installs.
packages=(clang-14 libclang-rt-14-dev llvm-14)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
cmake -S . -B build-fuzz -DPP_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="" >/dev/null
# shellcheck disable=SC2086
cmake --build build-fuzz -j"$(nproc)" --target $fuzzers

export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0"
failed=0
for f in $fuzzers; do
  corpus="build-fuzz/corpus/$f"
  crashes="build-fuzz/crashes/$f"
  mkdir -p "$corpus" "$crashes"
  [ -d "fuzz/corpus/$f" ] && cp -n fuzz/corpus/"$f"/* "$corpus"/ 2>/dev/null || true
  log="build-fuzz/$f.log"
  status=0
  "build-fuzz/fuzz/$f" "$corpus" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1 || status=$?
  runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
  found=$(find "$crashes" -type f | wc -l)
  echo "$f: $runs executions in ${seconds} s, corpus $(find "$corpus" -type f | wc -l) inputs, $found crash(es)$([ "$status" -ne 0 ] && echo " (exit $status; see $log)")"
  if [ "$status" -ne 0 ] || [ "$found" -gt 0 ]; then failed=1; fi
done
exit "$failed"
