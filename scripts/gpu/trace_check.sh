#!/usr/bin/env bash
# The GPU checks of `sdpa-prof trace` in one call, from the repository root with the build in
# BUILD (default build: sdpa-prof and libsdpa-prof-inject.so in $BUILD/src):
#   trace_check.sh [OUT_DIR]     (default: $OUT)
# Writes OUT_DIR/trace-check.tar.gz: each check's output, the JSON results, a raw record file.
# TIMELINE=1 adds --timeline to the trace of PyTorch and checks it against that trace's JSON.
set -u
out=${1:-${OUT:-/tmp/sdpa-prof-out}}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
work=$(mktemp -d)
# sdpa-prof needs cuBLAS and CUPTI from the toolkit; the traced Python inherits this path, so it
# names those two libraries alone, not the toolkit's whole folder (PyTorch brings its own).
cuda_lib=/usr/local/cuda/targets/x86_64-linux/lib
mkdir -p "$work/lib"
ln -sf "$cuda_lib"/libcublas.so.13 "$cuda_lib"/libcublasLt.so.13 "$cuda_lib"/libcupti.so.13 "$work/lib/"
export LD_LIBRARY_PATH=$work/lib
[ -x /opt/torch/.venv/bin/python3 ] && export PATH=/opt/torch/.venv/bin:$PATH
tool="timeout 150 $build/src/sdpa-prof"
lib=$PWD/$build/src/libsdpa-prof-inject.so
step() { echo "== $*"; }
timeline=""
[ -n "${TIMELINE:-}" ] && timeline="--timeline $work/trace-s1024.timeline.json"
{
  nvidia-smi -L
  python3 -c "import torch; print('torch', torch.__version__, 'cuDNN', torch.backends.cudnn.version())"

  step "trace of PyTorch at the study's shape"
  $tool trace --kernels --json "$work/trace-s1024.json" $timeline -- python3 share/sdpa-prof/torch_sdpa.py --seq 1024 > "$work/trace-s1024.txt" 2>&1
  echo "rc=$?"
  if [ -n "$timeline" ]; then
    python3 tests/timeline_check.py "$work/trace-s1024.timeline.json" --report "$work/trace-s1024.json"
    echo "timeline check rc=$?"
  fi
  step "torch.profiler on the same paths"
  python3 share/sdpa-prof/torch_baseline.py --seq 1024 --paths naive,naive-inplace,math,efficient,flash,cudnn --kernel-names \
    > "$work/profiler-s1024.txt" 2>&1
  echo "rc=$?"

  step "a raw record file (small shape) for tests/data"
  mkdir -p "$work/records"
  SDPA_PROF_TRACE_DIR="$work/records" CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib" \
    python3 share/sdpa-prof/torch_sdpa.py --batch 1 --heads 2 --seq 128 --backend naive,naive-inplace,flash --warmup 1 --forwards 2 --samples 2
  echo "rc=$? files: $(ls "$work/records")"

  step "os._exit: partial records"
  $tool trace -- python3 -c "import os, torch; x = torch.ones(1000, device='cuda'); y = x * 2; torch.cuda.synchronize(); os._exit(5)"
  echo "rc=$? (want 5)"
  step "two processes"
  $tool trace -- python3 -c "
import subprocess, sys
code = 'import torch; x = torch.ones(10, device=\"cuda\"); (x + 1).sum().item()'
for _ in range(2): subprocess.run([sys.executable, '-c', code], check=True)"
  echo "rc=$?"
  step "a CUDA graph"
  $tool trace --kernels -- python3 -c "
import torch
x = torch.ones(1 << 20, device='cuda'); g = torch.cuda.CUDAGraph(); s = torch.cuda.Stream()
with torch.cuda.stream(s):
    y = x * 2; torch.cuda.synchronize()
    with torch.cuda.graph(g): y = x * 2 + 1
torch.cuda.synchronize()
for i in range(3):
    torch.cuda.nvtx.range_push(f'sdpa-prof/graph/B1_H1_S1024_D64_bf16/fwd{i}'); g.replay(); torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()"
  echo "rc=$?"
  step "torch.profiler inside a traced program"
  $tool trace -- python3 -c "
import torch
x = torch.ones(10, device='cuda')
with torch.profiler.profile() as p: (x * 2).sum().item()
print(len(p.events()), 'profiler events')"
  echo "rc=$?"

  step "overhead per launch: untraced, then traced"
  python3 scripts/gpu/trace_overhead.py
  $tool trace -- python3 scripts/gpu/trace_overhead.py
  echo "rc=$?"

  step "run --with-torch at S4096"
  with_torch_timeline=""
  [ -n "$timeline" ] && with_torch_timeline="--timeline $work/with-torch-s4096.timeline.json"
  $tool run --backend all --seq 4096 --max-noise 2 --timeout 4 --with-torch --kernels --json "$work/with-torch-s4096.json" \
    $with_torch_timeline > "$work/with-torch-s4096.txt" 2>&1
  echo "rc=$?"
  if [ -n "$timeline" ]; then
    python3 tests/timeline_check.py "$work/with-torch-s4096.timeline.json" --report "$work/with-torch-s4096.json"
    echo "timeline check rc=$?"
  fi
} > "$work/trace-check.txt" 2>&1
rm -rf "$work/lib"
tar -czf "$out/trace-check.tar.gz" -C "$work" .
tail -c 3000 "$work/trace-check.txt"
