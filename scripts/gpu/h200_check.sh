#!/usr/bin/env bash
# The one call on the H200: the GPU checks of every issue, as parts, each part's logs gathered
# into one archive ($OUT/h200-check.tgz) and a line per part last. Build here (cmake --build build)
# and carry build/src/sdpa-prof, build/src/libsdpa-prof-inject.so and build/tests/sdpa_gpu_tests.
#   scripts/gpu/h200_check.sh                  the parts that fit one call (see `default` below)
#   scripts/gpu/h200_check.sh counters trace   only those
# Parts (seconds on the H200, roughly); the scripts named run alone too (scripts/gpu/):
#   tests      every GPU test, the fault-injection test in its own process               (~60)
#   nocudnn    the backend tests with cuDNN's soname changed in a copy: they must fail     (~20)
#   odd        every backend at odd sizes (S=1,17,1000,4097, GQA, Sq!=Skv), bf16 and fp16:
#              the worst error per backend and dtype against its bound                   (~60)
#   torchrows  --with-torch where PyTorch's cuDNN will not load (the system cuDNN first on
#              LD_LIBRARY_PATH): torch:cudnn failed with the error, torch:flash ok       (~40)
#   signals    timeout -s TERM / -s INT at random moments (10 runs), a process-group TERM and
#              a double Ctrl-C: each keeps the finished cases in --json                  (~150)
#   resume     kill -9 mid-sweep, --resume finishes it with every case once; two shards
#              merged equal the unsharded sweep's case list                              (~90)
#   devices    --devices 0,0 on the one GPU: two workers, their parts merged, the same case
#              list as one worker's run; a SIGINT to the parent keeps what finished (~60)
#   backward   the gradient tests (reference backward against fp64, every backend's dQ, dK,
#              dV at odd sizes), then configs/backward.json with PyTorch's paths: kernels
#              per backward, times, TFLOP/s; and the README's --pass fwd,bwd job timed    (~150)
#   interrupt  SIGINT two cases into --backend all --seq 1024,2048,4096                   (~20)
#   cudnn-all  every cuDNN engine config at S4096 D128, compared with itself              (~30)
#   cudnn      cudnn_check.sh: cudnn and flash swept, PyTorch's cuDNN path, every engine
#              config, the backend on PyTorch's own cuDNN, cuDNN's error log            (~120)
#   acceptance acceptance.sh: ceilings, the default sweep twice compared, cold against hot
#              L2 at S=512, the unfused backends' profile, the fused backends at D=128   (~150)
#   clocks     clocks_check.sh: flash+cudnn at S4096 D128, the default sweep             (~120)
#   counters   counters_check.sh: the counter pass against Nsight Compute                (~60)
#   trace      trace_check.sh with --timeline: PyTorch traced, --with-torch              (~120)
#   timeline   timeline_gpu_check.sh: run --timeline checked against its JSON            (~30)
#   ops        issue 30: torch_sdpa.py traced with --ops at the study's shape (B8 H16 S1024
#              D64 bf16 causal) and S4096, the op tables and findings, the timeline checked
#              with its op flows, torch_ops_check.py against torch.profiler's key_averages;
#              then --launch eager,graph (configs/launch.json, S1024 and S4096) with PyTorch's
#              paths: host us per call both ways, graph skips with their reasons, launch
#              findings; the graph GPU tests                                            (~330)
#   flash3     flash3_check.sh: schedules, fused tests, hopper-bench, long               (~250)
#   hopper     hopper-bench alone (flash, flash3, cudnn; FLASH3=flash3:all adds every
#              schedule) with counters, one line per case (scripts/hopper_table.py), and
#              `compare` against results/<gpu>-hopper-bench.json where it exists         (~60)
#   ab         flash3_ab.sh: build/base/sdpa-prof (BASE) against this build, 3 rounds
#              alternating over hopper-bench, flash3 schedules and cuDNN                (~300)
#   decode     issue 32: the read ceiling (`ceilings --remeasure`, its kernel's GPU test), the paged-cache and
#              flash3 decode GPU tests, configs/decode.json contiguous, and
#              scripts/decode_table.py: each case's TB/s against the read ceiling      (~300)
#   decode-paged  configs/decode.json paged with 16- and 64-token pages, flash3 and cuDNN,
#              and its scripts/decode_table.py                                          (~330)
#   default    the README's main job (--backend all --seq 4096) and the default preset,
#              JSON for results/                                                        (~120)
#   sanitize   sanitize.sh: memcheck, racecheck, initcheck, synccheck                    (~200)
set -uo pipefail
cd "$(dirname "$0")/../.."
work=${WORK:-/tmp/h200-check}
mkdir -p "$work"
trap '[ -n "${OUT:-}" ] && tar -czf "$OUT/h200-check.tgz" -C "$work" .' EXIT
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
export PATH=/usr/local/cuda/bin:$PATH
tool=${TOOL:-build/src/sdpa-prof}
default=(tests counters trace timeline)

# One process per suite: a test that crashes its process (an illegal address poisons the CUDA
# context for every later test) fails its own suite, not the suites after it.
part_tests() {
  local a=0 suite rc suites
  suites=$(build/tests/sdpa_gpu_tests --gtest_list_tests | awk '/^[^ ].*\.$/ {sub(/\.$/, ""); print}')
  [ -n "$suites" ] || { echo "sdpa_gpu_tests listed no suites"; return 1; }
  for suite in $suites; do
    [ "$suite" = FaultInjection ] && continue
    build/tests/sdpa_gpu_tests --gtest_filter="$suite.*" >>"$1/gpu_tests.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { a=1; echo "suite $suite: rc=$rc"; }
  done
  build/tests/sdpa_gpu_tests --gtest_filter=FaultInjection.* >"$1/fault.log" 2>&1; local b=$?
  grep -hE "^\[  FAILED  \] [A-Za-z]|Failure" "$1/gpu_tests.log" "$1/fault.log" | head -20
  echo "passed: $(cat "$1/gpu_tests.log" "$1/fault.log" | grep -cE '^\[       OK \]') tests"
  return $((a != 0 || b != 0))
}

# A build that has cuDNN on a machine where it does not load must fail the suite, not skip.
# The copy asks dlopen for libcudnn.so.X (same length, so the binary stays valid).
part_nocudnn() {
  sed 's/libcudnn\.so\.9/libcudnn.so.X/g' build/tests/sdpa_gpu_tests >"$1/gpu_tests_nocudnn"
  chmod +x "$1/gpu_tests_nocudnn"
  "$1/gpu_tests_nocudnn" --gtest_filter='Backends.*' >"$1/nocudnn.log" 2>&1
  local rc=$?
  rm -f "$1/gpu_tests_nocudnn"
  grep -hE "^\[  FAILED  \] [A-Z]" "$1/nocudnn.log" | head -5
  echo "suite rc=$rc (must be non-zero)"
  [ $rc -ne 0 ]
}

part_odd() {
  local quick=(--warmup 0 --min-samples 1 --min-time 0 --no-profile --quiet --dtype bf16,fp16 --case-timeout 60)
  $tool --backend all --batch 2 --heads 4 --kv-heads 2 --seq 1,17,1000,4097 --head-dim 64,128 --pass fwd,bwd \
    "${quick[@]}" --json "$1/odd_causal.json" >"$1/odd_causal.txt" 2>&1; local a=$?
  $tool --backend all --batch 2 --heads 4 --kv-heads 2 --seq 17,1000 --seq-kv 4097 --no-causal --head-dim 64,128 \
    "${quick[@]}" --json "$1/odd_cross.json" >"$1/odd_cross.txt" 2>&1; local b=$?
  python3 scripts/error_margins.py "$1/odd_causal.json" "$1/odd_cross.json"; local c=$?
  echo "runs rc=$a $b"
  return $((a != 0 || b != 0 || c != 0))
}

part_torchrows() {
  $tool --backend flash,cudnn --seq 1024 --with-torch --no-counters --json "$1/torch.json" >"$1/torch.txt" 2>&1
  local rc=$?
  python3 - "$1/torch.json" <<'PY'
import json, sys
cases = {c["backend"]: c for c in json.load(open(sys.argv[1]))["cases"]}
for name in ("torch:flash", "torch:cudnn"):
    c = cases.get(name)
    print(name, "MISSING" if c is None else f"{c['status']} {c.get('reason', '')[:100]}")
ok = "torch:flash" in cases and "torch:cudnn" in cases
sys.exit(0 if ok else 1)
PY
  local found=$?
  echo "run rc=$rc (1: a case failed)"
  return $found
}

# The case keys of a result file, one per line (backend and problem), sorted.
case_keys() {
  python3 -c "import json,sys
for c in json.load(open(sys.argv[1]))['cases']: print(c['backend'], json.dumps(c['problem'], sort_keys=True))" "$1" | sort
}

part_signals() {
  local sweep=(--backend all --seq 1024,2048,4096 --no-counters) kept=0 runs=0 seconds
  for i in $(seq 1 10); do
    seconds=$((4 + RANDOM % 12))
    local sig=TERM; [ $((i % 2)) -eq 0 ] && sig=INT
    rm -f "$1/t$i.json"
    timeout -s $sig $seconds $tool "${sweep[@]}" --json "$1/t$i.json" >/dev/null 2>"$1/t$i.progress"
    local rc=$? finished
    finished=$(grep -c '^\[' "$1/t$i.progress")
    local inFile
    inFile=$(python3 -c "import json,sys;print(len(json.load(open(sys.argv[1]))['cases']))" "$1/t$i.json" 2>/dev/null || echo none)
    echo "timeout -s $sig $seconds: rc=$rc, $finished cases finished, $inFile in the file"
    runs=$((runs + 1)); [ "$inFile" = "$finished" ] && kept=$((kept + 1))
  done
  # A TERM to the whole process group, then a double Ctrl-C (two INTs 0.1 s apart).
  setsid bash -c "$tool ${sweep[*]} --json $1/group.json >/dev/null 2>$1/group.progress" &
  local leader=$!
  sleep 8; kill -TERM -- -$leader; wait $leader
  echo "group TERM: $(grep -c '^\[' "$1/group.progress") finished, $(python3 -c "import json;print(len(json.load(open('$1/group.json'))['cases']))" 2>&1) in the file"
  $tool "${sweep[@]}" --json "$1/ctrlc.json" >/dev/null 2>"$1/ctrlc.progress" &
  local pid=$!
  sleep 8; kill -INT $pid; sleep 0.1; kill -INT $pid; wait $pid
  echo "double Ctrl-C: rc=$?, $(grep -c '^\[' "$1/ctrlc.progress") finished, $(python3 -c "import json;print(len(json.load(open('$1/ctrlc.json'))['cases']))" 2>&1) in the file"
  echo "timeout runs that kept every finished case: $kept of $runs"
  [ $kept -eq $runs ]
}

part_resume() {
  local sweep=(--backend naive,math,flash,efficient --seq 128,256,1000 --dtype bf16,fp16 --no-counters --min-time 0.2)
  $tool "${sweep[@]}" --json "$1/killed.json" >/dev/null 2>"$1/killed.progress" &
  local pid=$!
  until [ "$(grep -c '^\[' "$1/killed.progress" 2>/dev/null)" -ge 5 ] || ! kill -0 $pid 2>/dev/null; do sleep 0.1; done
  kill -KILL $pid; wait $pid 2>/dev/null
  echo "kill -9 after $(grep -c '^\[' "$1/killed.progress") cases: $(python3 -c "import json;d=json.load(open('$1/killed.json'));print(len(d['cases']),'cases, partial:',d['partial'])" 2>&1)"
  $tool "${sweep[@]}" --resume "$1/killed.json" >/dev/null 2>"$1/resumed.progress"; local a=$?
  grep -m1 resuming "$1/resumed.progress"
  $tool "${sweep[@]}" --json "$1/whole.json" >/dev/null 2>&1; local b=$?
  $tool "${sweep[@]}" --shard 1/2 --json "$1/s1.json" >/dev/null 2>&1; local c=$?
  $tool "${sweep[@]}" --shard 2/2 --json "$1/s2.json" >/dev/null 2>&1; local d=$?
  $tool merge "$1/s1.json" "$1/s2.json" --json "$1/merged.json"; local e=$?
  case_keys "$1/whole.json" >"$1/whole.keys"
  case_keys "$1/killed.json" >"$1/resumed.keys"
  case_keys "$1/merged.json" >"$1/merged.keys"
  local same_resumed=no same_merged=no
  cmp -s "$1/whole.keys" "$1/resumed.keys" && same_resumed=yes
  cmp -s "$1/whole.keys" "$1/merged.keys" && same_merged=yes
  echo "rc resume=$a whole=$b shards=$c,$d merge=$e; $(wc -l <"$1/whole.keys") cases; resumed = whole: $same_resumed; merged = whole: $same_merged"
  $tool compare "$1/whole.json" "$1/merged.json" --threshold 0.5 | tail -2
  [ $a -eq 0 ] && [ $same_resumed = yes ] && [ $same_merged = yes ]
}

part_devices() {
  local sweep=(--backend naive,math,flash --seq 128,256,1000 --dtype bf16,fp16 --no-counters --min-time 0.2)
  local began=$SECONDS
  $tool "${sweep[@]}" --devices 0,0 --json "$1/two.json" >"$1/two.txt" 2>"$1/two.progress"; local a=$?
  local two_s=$((SECONDS - began)); began=$SECONDS
  $tool "${sweep[@]}" --json "$1/one.json" >"$1/one.txt" 2>"$1/one.progress"; local b=$?
  local one_s=$((SECONDS - began))
  case_keys "$1/two.json" >"$1/two.keys"; case_keys "$1/one.json" >"$1/one.keys"
  local same=no; cmp -s "$1/two.keys" "$1/one.keys" && same=yes
  grep -c '^\[gpu 0\] \[' "$1/two.progress" | sed 's/^/worker progress lines: /'
  $tool "${sweep[@]}" --devices 0,0 --json "$1/stopped.json" >/dev/null 2>"$1/stopped.progress" &
  local pid=$!
  sleep 6; kill -INT $pid; wait $pid; local c=$?
  echo "SIGINT to the parent: rc=$c, $(python3 -c "import json;d=json.load(open('$1/stopped.json'));print(len(d['cases']),'cases, partial:',d['partial_reason'])" 2>&1)"
  echo "rc two=$a one=$b; $(wc -l <"$1/one.keys") cases; same case list: $same; wall ${two_s}s (two workers, one GPU) vs ${one_s}s"
  [ $a -eq 0 ] && [ $same = yes ]
}

part_interrupt() {
  $tool --backend all --seq 1024,2048,4096 --json "$1/interrupted.json" >"$1/interrupted.txt" 2>"$1/interrupted.progress" &
  local pid=$!
  until [ "$(grep -c '^\[' "$1/interrupted.progress" 2>/dev/null)" -ge 2 ] || ! kill -0 $pid 2>/dev/null; do sleep 0.2; done
  kill -INT $pid
  wait $pid
  local rc=$?
  python3 -c "import json;d=json.load(open('$1/interrupted.json'));print('rc=$rc partial',d['partial'],d['partial_reason'],[c['backend'] for c in d['cases']])"
  [ $rc -eq 130 ]
}

part_cudnn-all() {
  $tool --backend cudnn:all --seq 4096 --head-dim 128 --json "$1/cudnn_all.json" >"$1/cudnn_all.txt" 2>&1 &&
    $tool compare "$1/cudnn_all.json" "$1/cudnn_all.json" | tail -3
}

part_cudnn() { OUT=$1 BUILD=build scripts/gpu/cudnn_check.sh 2>&1 | tail -40; }
part_acceptance() { OUT=$1 BUILD=build scripts/gpu/acceptance.sh 2>&1 | tail -60; }
part_clocks() { OUT=$1 BUILD=build scripts/gpu/clocks_check.sh 2>&1 | tail -30; }
part_counters() { TOOL=$tool OUT=$1 scripts/gpu/counters_check.sh 2>&1 | tail -40; }
part_trace() { TIMELINE=1 BUILD=build scripts/gpu/trace_check.sh "$1" 2>&1 | tail -40; }
part_timeline() { OUT=$1 scripts/gpu/timeline_gpu_check.sh 2>&1 | tail -12; }
# PyTorch's cuDNN first on the library path: the system's 9.14 (first above, for our backend)
# makes torch:cudnn refuse to run.
torch_cudnn_lib() { python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null; }

part_ops() {
  local rc=0 seq
  local LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$(torch_cudnn_lib):/usr/local/cuda/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
  export LD_LIBRARY_PATH
  for seq in 1024 4096; do
    $tool trace --ops --kernels --json "$1/ops-s$seq.json" --timeline "$1/ops-s$seq-timeline.json" \
      -- python3 share/sdpa-prof/torch_sdpa.py --seq $seq >"$1/ops-s$seq.txt" 2>&1 || rc=1
    grep -E "op calls per forward|^  (aten::|op )" "$1/ops-s$seq.txt" | head -12
    grep -E "masked-fill|mask built|safe softmax|transposes in|host time per call" "$1/ops-s$seq.txt" | head -8
    python3 tests/timeline_check.py "$1/ops-s$seq-timeline.json" --report "$1/ops-s$seq.json" || rc=1
    grep -c '"cat":"op"' "$1/ops-s$seq-timeline.json" | sed 's/^/op slices and flows: /'
    python3 share/sdpa-prof/torch_ops_check.py "$1/ops-s$seq.json" >"$1/ops-s$seq-vs-torch.txt" 2>&1 || rc=1
    grep -E "^== |calls per forward equal|calls differ" "$1/ops-s$seq-vs-torch.txt"
  done
  # Item 5: every backend and PyTorch path launched eagerly and as CUDA-graph replays.
  build/tests/sdpa_gpu_tests --gtest_filter='GraphLaunch.*' >"$1/launch-tests.log" 2>&1 || rc=1
  grep -E "^\[  (PASSED|FAILED) |Failure|skipped|launches per forward" "$1/launch-tests.log" | head -30
  $tool --config configs/launch.json --with-torch --wide --json "$1/launch.json" --csv "$1/launch.csv" \
    --html "$1/launch.html" >"$1/launch.txt" 2>&1 || rc=1
  grep -E "^ *(backend|[a-z0-9:-]+ +B8 )" "$1/launch.txt" | head -40
  python3 - "$1/launch.json" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    p, host, t = c["problem"], c.get("host") or {}, c.get("timing") or {}
    said = [f["text"] for f in (c.get("profile") or {}).get("findings", []) if f["rule"] in ("launch-bound", "graph-launch")]
    print(f'{c["backend"]:<16} S{p["seq_q"]:<5} {p["launch"]:<5} {c["status"]:<7} host {host.get("per_call_us", 0):7.1f} us'
          f' gpu {1e3 * t.get("median_ms", 0):9.1f} us {c.get("reason", "")[:160]}')
    for text in said:
        print("    " + text)
PY
  return $rc
}
part_flash3() { OUT=$1 scripts/gpu/flash3_check.sh 2>&1 | tail -40; }
part_hopper() {
  $tool --config configs/hopper-bench.json --backend "flash,${FLASH3:-flash3},cudnn" --counters \
    --min-time 0.5 --quiet --json "$1/hopper.json" >"$1/hopper.txt" 2>&1
  local rc=$?
  python3 scripts/hopper_table.py "$1/hopper.json"
  # Against the committed result of this GPU, where there is one (prefill must not get slower).
  local base
  base=results/$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 |
    grep -oiE 'h100|h200|a100' | head -1 | tr A-Z a-z)-hopper-bench.json
  if [ -f "$base" ]; then
    $tool compare "$base" "$1/hopper.json" >"$1/compare.txt" 2>&1
    echo "compare against $base: rc=$? (1: a regression)"
    tail -20 "$1/compare.txt"
  fi
  return $rc
}
decode_run=(--min-time 0.2 --no-counters --quiet --case-timeout 120)
part_decode() {
  $tool ceilings --remeasure >"$1/ceilings.txt" 2>&1; local a=$?
  grep -E "HBM read|copy" "$1/ceilings.txt"
  build/tests/sdpa_gpu_tests --gtest_filter='PagedKv*:ReadBandwidth.*:Flash3Decode.*' >"$1/paged_tests.log" 2>&1
  local b=$?
  grep -hE "^\[  (PASSED|FAILED|SKIPPED) |Failure" "$1/paged_tests.log" | head -10
  timeout 420 $tool --config configs/decode.json "${decode_run[@]}" --json "$1/decode.json" >"$1/decode.txt" 2>&1
  local c=$?
  python3 scripts/decode_table.py "$1/decode.json"; local d=$?
  echo "rc ceilings=$a paged tests=$b decode=$c table=$d"
  return $((a != 0 || b != 0 || c != 0 || d != 0))
}
# The whole preset paged: the issue's target holds over every decode shape, not a sample.
part_decode-paged() {
  timeout 540 $tool --config configs/decode.json --backend flash3,cudnn --page-size 16,64 "${decode_run[@]}" \
    --json "$1/decode_paged.json" >"$1/decode_paged.txt" 2>&1; local a=$?
  python3 scripts/decode_table.py "$1/decode_paged.json"; local b=$?
  echo "rc paged=$a table=$b"
  return $((a != 0 || b != 0))
}
part_ab() { OUT=$1 BASE=${BASE:-build/base/sdpa-prof} scripts/gpu/flash3_ab.sh 2>&1 | tail -40; }
part_default() {
  $tool --backend all --seq 4096 >"$1/main_job.txt" 2>&1; local a=$?
  $tool --json "$1/h200-default.json" >"$1/default.txt" 2>&1; local b=$?
  echo "main job rc=$a, first screen $(wc -l <"$1/main_job.txt") lines; default preset rc=$b, first screen $(wc -l <"$1/default.txt") lines"
  return $((a != 0 || b != 0))
}
part_sanitize() { LOG_DIR=$1 BUILD=build scripts/gpu/sanitize.sh; }
part_backward() {
  build/tests/sdpa_gpu_tests --gtest_filter='*ReferenceBackwardVsCpu.*:GradientVerification.*:Backends.Gradients*' \
    >"$1/gpu_tests.log" 2>&1; local a=$?
  grep -hE "^\[  (PASSED|FAILED) |Failure|Expected|Which is" "$1/gpu_tests.log" | head -20
  # PyTorch's cuDNN first: torch:cudnn runs, and our cudnn backend loads the same 9.19 beside it.
  LD_LIBRARY_PATH=$(torch_cudnn_lib):$LD_LIBRARY_PATH \
    $tool --config configs/backward.json --with-torch --json "$1/backward.json" >"$1/backward.txt" 2>&1; local b=$?
  python3 scripts/backward_table.py "$1/backward.json" | tail -16
  local began=$SECONDS
  $tool --backend all --seq 4096 --pass fwd,bwd >"$1/main_job_bwd.txt" 2>&1; local c=$?
  echo "tests rc=$a; preset rc=$b; --backend all --seq 4096 --pass fwd,bwd rc=$c in $((SECONDS - began)) s"
  return $((a != 0 || b != 0 || c != 0))
}

parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=("${default[@]}")
summary=()
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for part in "${parts[@]}"; do
  if ! declare -F "part_$part" >/dev/null; then
    echo "h200_check: unknown part '$part'" >&2
    exit 2
  fi
  mkdir -p "$work/$part"
  echo "== $part"
  began=$SECONDS
  "part_$part" "$work/$part"
  rc=$?
  summary+=("$(printf '%-10s rc=%-3s %4ss' "$part" "$rc" $((SECONDS - began)))")
done
echo "== summary"
printf '%s\n' "${summary[@]}"
