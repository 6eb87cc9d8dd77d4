#!/usr/bin/env bash
# The checks that need real GPUs, run on a GPU host from the repo root:
#   bash .ci/gpu-session.sh tests|single|multi|nodeloss [RUN]|crosscheck|scaling N...|walkb|profile|walkc|walkd|walkf|counters|walkf-llm|walkf-e5m2|walkf08|floor|stage-crosscheck RUN|walkd22 RUN|walkd23 RUN|llm-crosscheck RUN|llm-targets RUN|llm-later RUN|llm-tail RUN|cubes RUN|fp8-targets RUN|capped RUN|blocks|tune|aa|aaruns|aapaired|aafull|aafull-report|geforce|merged|reference RUN [flags]
# Ray comes from the offline bundle (.bundle: ../shared/gpu-host/make-bundle.sh).
# Everything worth keeping (logs, datasets as .tgz) goes under $OUT. A results .tgz of an earlier
# call placed at .resume/results.tgz (carried; git ignores .resume/) is unpacked first, so a sweep
# cut off by DEADLINE resumes where it stopped when called again with the same RUN.
set -uo pipefail
STEP=${1:-tests}
export PYTHONUNBUFFERED=1 RES=/tmp/farm-results RAY_ADDRESS=http://127.0.0.1:8265
# The device copy has no .git: rows learn their commit from here (set GIT_COMMIT=$(git rev-parse --short HEAD)); none
# is refused, not written as `unknown` (2026-11-27: 117 rows of h100-llmf8c were, from a mistyped line).
GIT_COMMIT=${GIT_COMMIT:-$(git rev-parse --short HEAD 2> /dev/null)}
[ -n "$GIT_COMMIT" ] || { echo "GIT_COMMIT unset and no .git here: set GIT_COMMIT=\$(git rev-parse --short HEAD)" >&2; exit 2; }
export GEMM_FARM_GIT_COMMIT=$GIT_COMMIT GIT_COMMIT
# A run named for a card (h100-..., h200-...) runs on it or not at all: a call for an H200 may get a held H100
# (2026-11-27: h200-cubesb and h200-llmf8c rows from an H100, discarded).
CARD=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
for a in "$@"; do
  case "$a" in h100-* | h200-*)
    want=${a:0:4}; [ -z "$CARD" ] || [[ $CARD == *"${want^^}"* ]] || { echo "run $a is named for an ${want^^}, this card is $CARD" >&2; exit 3; } ;;
  esac
done
FINAL=${OUT:-/tmp/gpu-session}; OUT=/tmp/gpu-session-logs  # logs gather here, then leave as one .tgz
mkdir -p "$OUT" "$FINAL"
[ -f .resume/results.tgz ] && tar xzf .resume/results.tgz -C /tmp && echo "resuming from .resume/results.tgz"
[ -f .bundle/activate.sh ] && source .bundle/activate.sh
# Ray turns token authentication on by itself for a local ray.init() (it writes ~/.ray/auth_token) and for a
# `ray start` on a machine that has that file; `ray job submit` then needs the mode named (docs/running.md,
# "Token authentication"). The steps that start nodes use token mode throughout; `overhead` runs as a new user would.
[ -f ~/.ray/auth_token ] || ray get-auth-token --generate > /dev/null
export RAY_AUTH_MODE=token
sweep() {  # sweep RUN_ID [flags...]: submitted as a Ray job, timed; its log under $OUT. Past DEADLINE seconds the
  # job is stopped (`ray job stop`: the driver writes every finished row and the runs rows), not left running.
  local run=$1; shift
  local t0=$(date +%s.%N) sid="$run-$(date +%s%N)"
  timeout "${DEADLINE:-3600}" ray job submit --submission-id "$sid" --working-dir . --runtime-env-json "{\"env_vars\": {\"GEMM_FARM_GIT_COMMIT\": \"$GIT_COMMIT\"}}" \
    -- python farm/sweep.py --plan "${PLAN:-plans/proof.toml}" --run-id "$run" --output "$RES" "$@" > "$OUT/sweep-$run.log" 2>&1
  local rc=$?
  [ "$rc" = 124 ] && { echo "sweep $run: past DEADLINE ${DEADLINE:-3600} s, stopping the job"; timeout 30 ray job stop "$sid" > "$OUT/stop-$run.log" 2>&1; }
  local t1=$(date +%s.%N)
  echo "sweep $run rc=$rc wall_s=$(python3 -c "print(round($t1-$t0,1))")" | tee -a "$OUT/walltimes.txt"
  grep -E "summary|wall time|ok [0-9]|error|Error" "$OUT/sweep-$run.log" | tail -6
}
prewarm() {  # compile [flags]: fill the CUBIN cache for this GPU's arch on every core before a sweep
  local arch; arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
  python3 -m farm compile --arch "$arch" --jobs "$(nproc)" "$@" > "$OUT/compile-$arch.log" 2>&1
  echo "prewarm $arch rc=$? $(grep -c regs "$OUT/compile-$arch.log") kernels"
}
moves() {  # moves FILE: the Nsight Compute counters that moved at each ladder step of the profiles in $RES, to $OUT/FILE
  python3 -c "from farm.analysis.moves import moves_table; import pandas as pd; pd.set_option('display.width', 250); pd.set_option('display.max_colwidth', 120); print(moves_table('$RES')[['family','stage','previous','rank','text']].to_string())" \
    > "$OUT/$1" 2>&1
}
ncu_summary() {  # ncu_summary CSV METRIC...: those metrics of an `ncu --page details --csv` export, a line each
  python3 - "$@" <<'PY'
import csv
import sys
rows = list(csv.reader(open(sys.argv[1])))
h = next(r for r in rows if "Metric Name" in r)
ix = {k: i for i, k in enumerate(h)}
for r in rows:  # a --metrics row stops after its value (no rule columns)
    if len(r) > ix["Metric Value"] and r[ix["Metric Name"]] in sys.argv[2:]:
        print(r[ix["ID"]], r[ix["Kernel Name"]][:34], "|", r[ix["Metric Name"]], r[ix["Metric Value"]], r[ix["Metric Unit"]])
PY
}
nodes() {  # one Ray node per GPU here
  node 0 head
  for i in $(seq 1 $(( $(nvidia-smi -L | wc -l) - 1 ))); do node "$i"; done
  sleep 3
}
node() {  # node GPU_INDEX [head]: one Ray node per GPU, labelled with its model
  local model; model=$(nvidia-smi -i "$1" --query-gpu=name --format=csv,noheader | sed 's/^NVIDIA //; s/ /-/g')
  if [ "${2:-}" = head ]; then
    CUDA_VISIBLE_DEVICES=$1 ray start --head --num-gpus=1 --num-cpus=4 --labels "farm.gpu-model=$model" --disable-usage-stats > "$OUT/ray-node$1.log" 2>&1
  else
    CUDA_VISIBLE_DEVICES=$1 ray start --address=127.0.0.1:6379 --num-gpus=1 --num-cpus=4 --labels "farm.gpu-model=$model" > "$OUT/ray-node$1.log" 2>&1
  fi
}
aafull_report() {  # aafull_report [T0 BUDGET]: the aafull step's verdicts, comparisons, export and summary, from $RES
  # (runs pa-a/pa-b and pb-a/pb-b); alone as the aafull-report step on an earlier call's results (.resume/results.tgz)
  local t0=${1:-$(date +%s)} budget=${2:-0} exp="$FINAL/h100-paired-aa" ref d
  python3 -m farm compare pa-a pa-b --data "$RES" --cross-fit > "$OUT/compare-pa.txt" 2>&1
  PYTHONPATH=.:${PYTHONPATH:-} python3 .ci/paired_report.py pairs "$RES" pa > "$OUT/pairs-pa.txt" 2>&1
  PYTHONPATH=.:${PYTHONPATH:-} python3 .ci/paired_report.py split "$RES" pa --cross-fit > "$OUT/split-pa.txt" 2>&1
  python3 -m farm compare aa1 aa2 --data datasets/h100-aa --cross-fit > "$OUT/compare-before.txt" 2>&1
  python3 -m farm compare aa1 aa2 --data datasets/h100-aa --cross-fit --plant 1,2,3,5 > "$OUT/plant-before.txt" 2>&1
  python3 -m farm compare pb-a pb-b --data "$RES" > "$OUT/compare-base.txt" 2>&1  # the A/A's pairs the history
  for ref in h100-reference/h100-ref3 h100-reference/h100-walkd2 h200-reference/h200-ref3 h200-reference/h200-walkd; do
    echo "$ref $(python3 -m farm compare "${ref#*/}" --aa --data "datasets/${ref%/*}" 2>&1 | tail -1)"
  done > "$OUT/aa-shipped.txt"
  rm -rf "$exp"
  for d in "$RES"/{rows,telemetry,runs}/gpu_model=*/run_id=pa-[ab]; do
    [ -d "$d" ] && mkdir -p "$exp/${d#"$RES"/}" && cp -r "$d/." "$exp/${d#"$RES"/}/"
  done
  python3 -m farm compact "$exp" --telemetry-stride 8 > "$OUT/compact.txt" 2>&1; python3 -m farm validate "$exp" >> "$OUT/compact.txt" 2>&1
  python3 -m pip freeze > "$exp/pip-freeze.txt" 2>/dev/null
  tar czf "$FINAL/h100-paired-aa.tgz" -C "$FINAL" h100-paired-aa && rm -rf "$exp"  # one file back, hive names inside
  { cat "$OUT/walltimes.txt" 2>/dev/null
    python3 -c "
import collections, sys
from farm.data.dataset import read_table
t = read_table(sys.argv[1]).to_pylist()
for run in ('pa-a', 'pa-b', 'pb-a', 'pb-b'):
  rs = [r for r in t if r['run_id'] == run]
  print(run, len(rs), 'rows', dict(collections.Counter(r['status'] for r in rs)), 'loaded_first', dict(collections.Counter(r.get('loaded_first') for r in rs)))" "$RES" 2>&1
    echo "== pairs (log ratio B/A of identical arms)"; cat "$OUT/pairs-pa.txt"
    echo "== paired A/A, cross-fitted: verdicts, families, false differences, plants"; cat "$OUT/split-pa.txt"
    echo "== before: sequential A/A, datasets/h100-aa aa1 against aa2 (two to four repeats a side), cross-fitted"
    sed -n '/^Per GPU model/,$p' "$OUT/compare-before.txt" | grep -v '^{'; grep -E "^ +[0-9.]+%" "$OUT/plant-before.txt"
    echo "== --base-kernels: regblock slowed (40000 cycles before its stores), the rest unchanged"
    sed -n '/^Noise model/p; /^cell /,/^$/p' "$OUT/compare-base.txt" | cut -c1-170
    echo "== --aa of the shipped reference runs (recomputed)"
    python3 -c "
import json, sys
for line in open(sys.argv[1]):
  run, _, rest = line.partition(' ')
  try:
      s = json.loads(rest)
      print(f'{run:<28} pairs {s[\"comparisons\"]:>5} false {100 * s[\"difference_rate\"]:.1f} % UNCLEAR {100 * s[\"unclear_rate\"]:.1f} %')
  except ValueError:
      print(run, rest.strip()[:150])" "$OUT/aa-shipped.txt"
    echo "== export h100-paired-aa.tgz $(du -k "$FINAL/h100-paired-aa.tgz" | cut -f1) KB: $(tail -1 "$OUT/compact.txt")"
    echo "step wall $(( $(date +%s) - t0 )) s of DEADLINE $budget"
  } >> "$OUT/summary-aafull.txt" 2>&1
  cat "$OUT/summary-aafull.txt"
}
case "${1:-tests}" in
  tests)
    nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv | tee "$OUT/gpus.csv"
    python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu.py 2>&1 | tee "$OUT/gpu-tests.log" | tail -5 ;;
  single)  # one GPU: two identical runs (A/A) and one with telemetry off
    node 0 head
    sweep one && sweep aa2 && sweep notele --no-telemetry
    ray stop > /dev/null
    python3 -m farm compare one aa2 --data "$RES" > "$OUT/compare-aa-runs.txt"
    python3 -m farm compare one --aa --data "$RES" > "$OUT/compare-aa-repeats.txt"
    python3 -m farm compare one notele --data "$RES" > "$OUT/compare-telemetry.txt"
    tail -qn1 "$OUT"/compare-*.txt ;;
  multi)  # every GPU its own Ray node: replicate, shard, and a worker killed mid-sweep
    nodes
    sleep 2; ray status | tee "$OUT/ray-status.txt" | grep -E "GPU|node_" | head
    sweep rep --mode replicate && sweep shard --mode shard
    ( sleep 25; pid=$(pgrep -f "ray::GpuWorker" | head -1); echo "killing GpuWorker pid $pid at $(date +%T)"; kill -9 "$pid" ) > "$OUT/kill.log" 2>&1 &
    sweep kill --mode replicate
    wait; cat "$OUT/kill.log"; grep -iE "died|restart|requeue|again" "$OUT/sweep-kill.log" | head -5
    ray stop > /dev/null
    python3 -m farm compare rep --gpu-to-gpu --data "$RES" > "$OUT/compare-gpu-to-gpu.txt"
    python3 -m farm compare rep kill --data "$RES" > "$OUT/compare-kill-vs-rep.txt"
    tail -qn1 "$OUT"/compare-gpu*.txt "$OUT"/compare-kill*.txt ;;
  nodeloss)  # issue 27: two Ray nodes on GPU 0 (the head and a second `ray start` node, one label), the default plan
    # in shard mode, the second node's raylet killed about 30 s into the job: every cell still gets exactly one row.
    # About 2.5 minutes on an H100. Read: nodeloss-summary.txt (the job's end, the given-up line, the summary's
    # lines per worker; rows = cells = 261, cells with more than one row 0), sweep-nodeloss.log.
    run=${2:-nodeloss}
    node 0 head
    before=$(pgrep -x raylet | sort)
    CUDA_VISIBLE_DEVICES=0 ray start --address=127.0.0.1:6379 --num-gpus=1 --num-cpus=4 \
      --labels "farm.gpu-model=$(nvidia-smi -i 0 --query-gpu=name --format=csv,noheader | sed 's/^NVIDIA //; s/ /-/g')" > "$OUT/ray-node0b.log" 2>&1
    second=$(comm -13 <(echo "$before") <(pgrep -x raylet | sort) | head -1)
    sleep 3; ray status > "$OUT/ray-status.txt" 2>&1
    ( sleep 30; echo "killing the second node's raylet (pid $second) at $(date +%T)"; kill -9 "$second" ) > "$OUT/kill.log" 2>&1 &
    PLAN=plans/default.toml sweep "$run" --mode shard
    wait; cat "$OUT/kill.log"
    ray stop --force > /dev/null 2>&1
    { tail -1 "$OUT/walltimes.txt"
      grep -E "given up|joined|died|cells did not run|failed mid-sweep|exit code|succeeded|sweep summary|^ +[A-Za-z0-9-]+@" "$OUT/sweep-$run.log"
      python3 -c "
from collections import Counter
from farm.data.dataset import read_table
import pyarrow.compute as pc
t = read_table('$RES'); t = t.filter(pc.equal(t['run_id'], '$run')).to_pylist()
cells = Counter((r['stage'], r['m'], r['n'], r['k'], r['repeat']) for r in t)
print('rows', len(t), 'cells', len(cells), 'cells with more than one row', sum(n > 1 for n in cells.values()))
print('statuses', dict(Counter(r['status'] for r in t)))"
      python3 -m farm validate "$RES" 2>&1 | tail -2
    } > "$OUT/nodeloss-summary.txt" 2>&1
    cat "$OUT/nodeloss-summary.txt" ;;
  scaling)  # the default plan on N GPUs, each its own Ray node, shard (and replicate unless REPLICATE=0), from a
    # cold CUBIN cache when COLD=1: bash .ci/gpu-session.sh scaling 4 2 1
    shift
    for n in "$@"; do
      [ "${COLD:-0}" = 1 ] && rm -rf ~/.cache/gemm-farm
      node 0 head
      for i in $(seq 1 $((n - 1))); do node "$i"; done
      sleep 3
      PLAN=plans/default.toml sweep "scale$n-shard" --mode shard
      [ "$n" -gt 1 ] && [ "${REPLICATE:-1}" = 1 ] && PLAN=plans/default.toml sweep "scale$n-rep" --mode replicate
      ray stop > /dev/null
    done
    grep -h "wall time" "$OUT"/sweep-scale*.log ;;
  overhead)  # issue 16: the default plan as a new user runs it, from a cold CUBIN cache, no Ray running:
    # bash .ci/gpu-session.sh overhead RUN [GPUS] (GPUS: CUDA_VISIBLE_DEVICES, default 0; "all" for every GPU here)
    run=${2:-cold1}; gpus=${3:-0}
    ray stop --force > /dev/null 2>&1
    rm -rf ~/.cache/gemm-farm ~/.cupy/kernel_cache  # our CUBINs and CuPy's own kernels (inputs, verification)
    [ "$gpus" = all ] && visible=() || visible=(CUDA_VISIBLE_DEVICES="$gpus")
    t0=$(date +%s.%N)
    timeout "${DEADLINE:-3600}" env -u RAY_ADDRESS -u RAY_AUTH_MODE "${visible[@]}" python3 farm/sweep.py --run-id "$run" --output "$RES" > "$OUT/sweep-$run.log" 2>&1
    echo "sweep $run rc=$? command_to_exit_s=$(python3 -c "print(round($(date +%s.%N)-$t0,1))")" | tee -a "$OUT/walltimes.txt"
    for f in gcs_server.out dashboard.log raylet.out dashboard_agent.log runtime_env_agent.log; do  # Ray's own start-up
      head -2 "/tmp/ray/session_latest/logs/$f"; grep -m1 -E "started|Started|listening|Listening" "/tmp/ray/session_latest/logs/$f"
    done > "$OUT/ray-start-$run.txt" 2>&1
    grep -E "start-up|ready .* after|ETA|wall time" "$OUT/sweep-$run.log" | head -8; tail -4 "$OUT/sweep-$run.log"
    python3 -m farm report "$RES" --run-id "$run" | sed -n '/### Runs/,$p' | head -12 ;;
  walkb)  # the TF32 ladder at the issue's sizes, three repeats
    python3 -m farm bench --families tf32 --sizes 2048,4096,8192 --repeats 3 --run-id walkB --output "$RES" > "$OUT/bench-walkB.log" 2>&1
    python3 -m farm report "$RES" --run-id walkB | tee "$OUT/report-walkB.md" | grep -E "###|tf32" ;;
  walkc)  # walk C's SIMT FP32 and half-precision ladders
    python3 -m farm bench --families simt_fp32_c,half_c --sizes 1024,2048,4096,8192 --run-id walkC --output "$RES" > "$OUT/bench-walkC.log" 2>&1
    python3 -m farm report "$RES" --run-id walkC | tee "$OUT/report-walkC.md" | grep -E "###|\| (c_|h_|cublas)" ;;
  tune)  # TUNE_PLAN=plans/tune_quick.toml for the short pass
    prewarm --tuning --kernels c_warptile,h_wmma_dbuf_fp16,h_wmma_dbuf_bf16,h_wmma_pipe_fp16,h_wmma_pipe_bf16
    timeout "${DEADLINE:-3600}" python3 -m farm bench --plan "${TUNE_PLAN:-plans/tune.toml}" --run-id tune --output "$RES" > "$OUT/bench-tune.log" 2>&1; tail -3 "$OUT/bench-tune.log" ;;
  profile)  # Nsight Compute counters per ladder step: walk A at 2048^3, walk B at 4096^3
    python3 -m farm profile --kernels naive,tiled,tiled_coalesced,regblock,warp_rebalance,bank_pad_vec,gmem_vec,wider_m,supertile,ldg_vec,ldg_super,ldg_wider2,multibuf,splitk \
      --sizes 2048 --output "$RES" --run-id profile --timeout 90 > "$OUT/profile-walkA.log" 2>&1
    python3 -m farm profile --families tf32 --sizes 4096 --output "$RES" --run-id profile --timeout 90 > "$OUT/profile-walkB.log" 2>&1
    moves moves.txt; head -70 "$OUT/moves.txt" ;;
  walkd)  # walk D: every stage verified at tile-multiple and odd shapes; Nsight Compute counters of the BF16 ladder
    python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu.py \
      -k "d_mma_sync or d_wgmma or d_tma or d_warp_specialized or d_persistent or d_mma_overlap or d_multicast" 2>&1 \
      | tee "$OUT/gpu-tests-walkd.log" | tail -3
    timeout "${DEADLINE:-3600}" python3 -m farm profile --kernels d_mma_sync_bf16,d_wgmma_bf16,d_tma_bf16,d_warp_specialized_bf16,d_persistent_bf16,d_mma_overlap_bf16,d_multicast_bf16 --sizes "${SIZES:-4096}" \
      --output "$RES" --run-id profile-walkd --timeout 90 > "$OUT/profile-walkd.log" 2>&1
    tail -3 "$OUT/profile-walkd.log" ;;
  counters)  # issue 32's ladders' counters: Nsight Compute at 8192^3 of walk F 00-04 and cuBLASLt FP8, walk D in TF32
    # 00-04 and cuBLAS TF32, one launch each, and the counter that moved at each step (moves-counters.txt). About 4 min.
    timeout "${DEADLINE:-480}" python3 -m farm profile --sizes 8192 --output "$RES" --run-id profile-counters --timeout 90 \
      --kernels f_wgmma_fp8,f_warp_specialized_fp8,f_persistent_fp8,f_mma_overlap_fp8,f_multicast_fp8,cublaslt_fp8_e4m3,tf32_wgmma,tf32_warp_specialized,tf32_persistent,tf32_multicast,tf32_staged_epilogue,cublas_tf32 \
      > "$OUT/profile-counters.log" 2>&1
    moves moves-counters.txt; grep -E "fp8|tf32" "$OUT/moves-counters.txt" ;;
  walkf)  # walk F (hopper_fp8): every stage verified at tile-multiple and odd shapes; the ladder (plans/walkf.toml:
    # 4096^3 and 8192^3, two repeats, against cuBLASLt FP8 and torch._scaled_mm); torch._scaled_mm under Triton's
    # do_bench_cudagraph as the independent timer; Nsight Compute counters at 8192^3. About 2 minutes on an H100.
    python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_fp8.py 2>&1 | tee "$OUT/gpu-tests-walkf.log" | tail -3
    timeout "${DEADLINE:-3600}" python3 -m farm bench --plan plans/walkf.toml --run-id walkF --output "$RES" > "$OUT/bench-walkF.log" 2>&1
    grep -E "\] \[[0-9]+/" "$OUT/bench-walkF.log" | sed 's/.*\] \[/[/'
    python3 -c "
import torch
from triton.testing import do_bench_cudagraph
for n in (4096, 8192):  # E4M3 operands, B stored N x K as the class's; per-tensor scales, FP32 out, fast accumulation off
    a, bt = (torch.randn(n, n, device='cuda').div(8).to(torch.float8_e4m3fn) for _ in range(2))
    s = torch.tensor(0.01, device='cuda')
    ms = do_bench_cudagraph(lambda: torch._scaled_mm(a, bt.t(), scale_a=s, scale_b=s, out_dtype=torch.float32, use_fast_accum=False), rep=300)
    print(f'torch._scaled_mm {n}^3 under do_bench_cudagraph: {ms:.4f} ms, {2 * n**3 / ms / 1e9:.0f} TFLOPS')" 2>&1 | tee "$OUT/crosscheck-walkf.txt"
    fp8=f_warp_specialized_fp8,f_persistent_fp8,f_mma_overlap_fp8,f_multicast_fp8
    timeout "${DEADLINE:-3600}" python3 -m farm profile --kernels "$fp8" --sizes 8192 --output "$RES" --run-id profile-walkf --timeout 90 \
      > "$OUT/profile-walkf.log" 2>&1
    moves moves-walkf.txt; grep -E "fp8|stage" "$OUT/moves-walkf.txt" ;;
  walkf-llm)  # walk F's 05 (split_k_fp8) and 06 (swap_ab_fp8): their GPU tests, then 03, 05, 06 and cuBLASLt FP8 at
    # plans/llm_fp8.toml's shapes with M = 1, 16 and 128 (144 cells, max_time_s 0.5), % of cuBLASLt FP8 and geometric
    # means per M and model; torch._scaled_mm under do_bench_cudagraph at three of them; Nsight Compute at 1 x 4096 x
    # 4096. About 5 minutes on an H100. Read: gpu-tests-walkf-llm.log, llmF.txt, crosscheck-walkf-llm.txt, moves-walkf-llm.txt.
    # Other stages: FP8_STAGES (benched and profiled), FP8_TESTS (pytest -k), LLM_RUN (the run id and the logs'
    # names), PROFILE_SIZE (MxNxK), CROSSCHECK=0 to skip the independent timer; 07 beside 03 and 06:
    #   FP8_STAGES=f_mma_overlap_fp8,f_swap_ab_fp8,f_swap_plan_fp8 FP8_TESTS=f_swap_plan_fp8 LLM_RUN=llmF7 CROSSCHECK=0 \
    #     bash .ci/gpu-session.sh walkf-llm        (112 s on a warm H100)
    stages=${FP8_STAGES:-f_mma_overlap_fp8,f_split_k_fp8,f_swap_ab_fp8}; run=${LLM_RUN:-llmF}; tag=${LLM_RUN:-walkf-llm}
    nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv | tee "$OUT/gpus.csv"
    prewarm --kernels "$stages"
    timeout 240 python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/test_gpu_fp8.py -k "${FP8_TESTS:-f_split_k_fp8 or f_swap_ab_fp8}" \
      > "$OUT/gpu-tests-$tag.log" 2>&1; grep -E "passed|failed|error|FAIL" "$OUT/gpu-tests-$tag.log" | tail -6
    python3 -c "
from farm.data.llm_shapes import plan_shapes
sizes = ', '.join(f'\"{m}x{n}x{k}\"' for m, n, k in plan_shapes() if m in (1, 16, 128))
kernels = ', '.join(f'\"{s}\"' for s in '$stages'.split(','))
print(f'kernels = [{kernels}, \"cublaslt_fp8_e4m3\"]\nsizes = [{sizes}]')
print('repeats = 1\nmode = \"replicate\"\ncell_timeout_s = 120\n\n[measure]\nmax_time_s = 0.5\nwarmup_max_s = 0.5')" > /tmp/llm_fp8_small.toml
    timeout "${DEADLINE:-300}" python3 -m farm bench --plan /tmp/llm_fp8_small.toml --run-id "$run" --output "$RES" > "$OUT/bench-$run.log" 2>&1
    echo "bench rc=$?"; tail -2 "$OUT/bench-$run.log"
    python3 -c "
import math, pandas as pd
from farm.data.dataset import read_table
from farm.data.llm_shapes import MODELS
t = read_table('$RES').to_pandas(); t = t[(t.run_id == '$run') & (t.status == 'ok') & t.verified.fillna(True)]
pct = t[t.family == 'hopper_fp8'].pivot_table(index=['m', 'n', 'k'], columns='stage', values='pct_of_baseline')
pct['best'] = pct.max(axis=1)
pct['cublaslt_us'] = t[t.stage == 'cublaslt_fp8_e4m3'].set_index(['m', 'n', 'k'])['median_ms'] * 1e3
pd.set_option('display.width', 200); print(pct.round(1).to_string())
geo = lambda s: math.exp(s.map(math.log).mean())
for m, g in pct.groupby(level=0): print(f'M = {m}:', {c: round(geo(g[c].dropna()), 1) for c in g.columns if c != 'cublaslt_us'})
for llm in MODELS:
    g = pct[[s in set(llm.shapes()) for s in pct.index]]; print(llm.name, len(g), 'shapes, geo-mean % of cuBLASLt FP8:', {c: round(geo(g[c].dropna()), 1) for c in g.columns if c != 'cublaslt_us'})
print(t.status.value_counts().to_dict())" 2>&1 | tee "$OUT/$run.txt"
    python3 -m farm report "$RES" --run-id "$run" --headline > "$OUT/headline-$run.md" 2>&1
    [ "${CROSSCHECK:-1}" = 1 ] && python3 -c "
import torch
from triton.testing import do_bench_cudagraph
for m, n, k in ((1, 4096, 4096), (16, 1024, 4096), (1, 8192, 28672)):  # E4M3, B stored N x K, FP32 out, fast accumulation off
    a, bt = torch.randn(m, k, device='cuda').div(8).to(torch.float8_e4m3fn), torch.randn(n, k, device='cuda').div(8).to(torch.float8_e4m3fn)
    s = torch.tensor(0.01, device='cuda')
    try:
        us = 1e3 * do_bench_cudagraph(lambda: torch._scaled_mm(a, bt.t(), scale_a=s, scale_b=s, out_dtype=torch.float32, use_fast_accum=False), rep=200)
        print(f'torch._scaled_mm {m}x{n}x{k} under do_bench_cudagraph: {us:.2f} us')
    except RuntimeError as exc:
        print(f'torch._scaled_mm {m}x{n}x{k}: refused ({str(exc)[:120]})')" 2>&1 | tee "$OUT/crosscheck-walkf-llm.txt"
    timeout 120 python3 -m farm profile --kernels "$stages" --sizes "${PROFILE_SIZE:-1x4096x4096}" --output "$RES" \
      --run-id "profile-$tag" --timeout 60 > "$OUT/profile-$tag.log" 2>&1
    moves "moves-$tag.txt"; grep -E "fp8" "$OUT/moves-$tag.txt" | head -8 ;;
  reference)  # plans/reference.toml (or REF_PLAN) on every GPU here (DEADLINE=secs stops it early; call again to resume)
    shift; run=$1; shift
    python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" 2>&1 | tail -1 | tee "$OUT/libraries.txt"
    # PREWARM=0 leaves compiling to the workers' background compiler (walk D's sm_90a stages are not in prewarm's set).
    [ "${PREWARM:-1}" = 1 ] && prewarm
    nodes
    # A resumed run goes on in shard mode: each call is lent a fresh machine, most often another card of the model, and
    # replicate mode would measure every cell again on it (2026-11-26: 190 cells of h100-llm twice); flags may override.
    resume=(); [ -f .resume/results.tgz ] && [[ " $* " != *" --mode "* ]] && resume=(--mode shard)
    PLAN=${REF_PLAN:-plans/reference.toml} sweep "$run" "${resume[@]}" "$@"
    ray stop --force > /dev/null 2>&1
    # Beside every reference run: its vendor baselines against torch.mm under Triton's timers (shipped with the dataset;
    # CROSSCHECK=0 leaves it to the call that finishes the run).
    [ "${CROSSCHECK:-1}" = 1 ] && timeout "${DEADLINE:-3600}" python3 -m farm crosscheck --plan plans/reference.toml --csv "$RES/crosscheck-$run.csv" > "$OUT/crosscheck-$run.md" 2>&1
    tail -30 "$OUT/crosscheck-$run.md"
    python3 -m farm report "$RES" --run-id "$run" > "$OUT/report-$run.md" 2>&1
    python3 -m farm report "$RES" --run-id "$run" --headline | tee "$OUT/headline-$run.md" | grep -E "4096x|8192x" ;;
  aa)  # issue 26: two runs of one commit, plans/aa.toml (every family at four short sizes, 316 cells, adaptive repeats),
    # then their verdicts: without and with the shipped H100/H200 A/A history, the repeats' A/A, and planted slowdowns
    prewarm
    node 0 head; sleep 3
    PLAN=plans/aa.toml sweep aa1 && PLAN=plans/aa.toml sweep aa2
    ray stop --force > /dev/null 2>&1
    hist=datasets/h100-reference,datasets/h200-reference
    python3 -m farm compare aa1 aa2 --data "$RES" > "$OUT/compare-aa1-aa2.txt"
    python3 -m farm compare aa1 aa2 --data "$RES" --history "$hist" > "$OUT/compare-aa1-aa2-history.txt"
    python3 -m farm compare aa1 --aa --data "$RES" > "$OUT/compare-aa1-repeats.txt"
    python3 -m farm compare aa1 aa2 --data "$RES" --history "$hist" --plant 1,2,3,5 > "$OUT/plant.txt"
    python3 -c "import pyarrow.compute as pc; from farm.data.dataset import read_table; t = read_table('$RES'); \
print('rows', t.num_rows, 'repeats per cell', pc.value_counts(pc.cast(t.column('repeat'), 'string')).to_pylist())"
    for f in compare-aa1-aa2 compare-aa1-aa2-history compare-aa1-repeats; do echo "== $f"; sed -n '/^Per GPU model/,$p' "$OUT/$f.txt"; done
    echo "== planted (run aa2's samples x (1+x))"; cat "$OUT/plant.txt" ;;
  aaruns)  # issue 26: four runs of one commit, one repeat each (plans/aa-runs.toml, 316 cells, about 85 s a run on an
    # H100), compared as sides of two runs (r1,r3 against r2,r4: the run is the unit of noise), then single runs (r1
    # against r2: what one run a side gives), and slowdowns planted in side B. With the aa step's results resumed
    # (.resume/results.tgz holding runs aa1 and aa2) their repeats and their run pair are the noise history, and
    # aa1,r1,r3 against aa2,r2,r4 is compared too (three runs a side; aa1/aa2 came from an earlier commit of the same
    # measurement code).
    prewarm
    node 0 head; sleep 3
    for i in 1 2 3 4; do PLAN=plans/aa-runs.toml sweep "r$i" || break; done
    ray stop --force > /dev/null 2>&1
    python3 -m farm compare r1,r3 r2,r4 --data "$RES" > "$OUT/compare-runs2.txt"
    python3 -m farm compare r1 r2 --data "$RES" > "$OUT/compare-r1-r2.txt"
    python3 -m farm compare r1,r3 r2,r4 --data "$RES" --plant 1,2,3,5 > "$OUT/plant-runs2.txt"
    names=(compare-runs2 compare-r1-r2 plant-runs2)
    if [ -d "$RES/rows" ] && ls "$RES"/rows/*/ | grep -q "run_id=aa1"; then
      python3 -m farm compare aa1,r1,r3 aa2,r2,r4 --data "$RES" > "$OUT/compare-runs3.txt"
      python3 -m farm compare aa1,r1,r3 aa2,r2,r4 --data "$RES" --plant 1,2,3,5 > "$OUT/plant-runs3.txt"
      names+=(compare-runs3 plant-runs3)
    fi
    for f in "${names[@]}"; do echo "== $f"; sed -n '/^Common shift\|^ planted/,$p' "$OUT/$f.txt"; done ;;
  aapaired)  # issue 26: a paired A/A (plans/aa-paired.toml: 368 cells, each timed for two arms of identical code
    # as series of one interleaved timing with the baseline, the leading arm alternating), then the arms' verdicts cross-fitted (each half of the stages judged with the
    # other half's paired noise), per family, and slowdowns planted in arm b; the pairs' log ratios by measuring order; verdicts and plants split unthrottled / power-capped.
    # A second paired A/A judged with the first as its history (no cross-fit): its results .tgz as .resume/results.tgz,
    # and RUN=pa2 CROSSFIT= SWEEP_FLAGS="--sizes 2048 --repeats 2" (two pairs a cell, ABBA, at the noisiest size).
    # NO_PREWARM=1: no compile step first (the workers compile the plan's stages in the background while cells run)
    [ -n "${NO_PREWARM:-}" ] || prewarm
    node 0 head; sleep 3
    run=${RUN:-pa}; fit=${CROSSFIT---cross-fit}
    PLAN=plans/aa-paired.toml sweep "$run" ${SWEEP_FLAGS:-}
    ray stop --force > /dev/null 2>&1
    python3 -m farm compare "$run-a" "$run-b" --data "$RES" $fit > "$OUT/compare-pa.txt"
    python3 -m farm compare "$run-a" "$run-b" --data "$RES" $fit --json > "$OUT/compare-pa.json"
    python3 -m farm compare "$run-a" "$run-b" --data "$RES" $fit --plant 1,2,3,5 > "$OUT/plant-pa.txt"
    PYTHONPATH=.:${PYTHONPATH:-} python3 .ci/paired_report.py pairs "$RES" "$run" > "$OUT/pairs-pa.txt"; cat "$OUT/pairs-pa.txt"
    PYTHONPATH=.:${PYTHONPATH:-} python3 .ci/paired_report.py split "$RES" "$run" $fit | tee "$OUT/split-pa.txt"
    for f in compare-pa plant-pa; do echo "== $f"; sed -n '/^Noise model\|^ planted/,$p' "$OUT/$f.txt"; done ;;
  aafull)  # issue 26, one call of about 330 s on an H100 (DEADLINE, default 310, bounds the whole step: each part
    # gets what is left less what the later parts need; NO prewarm, the workers compile while cells run):
    # 1. with GPU_TESTS=1, tests/test_gpu_paired.py (measure_pair: both arms timed and verified, set up in an order
    #    drawn per pair; the rows' loaded_first counts in the summary say the same of the sweep);
    # 2. a paired A/A, plans/aa-paired.toml over every family at AA_SIZES (default 1024, 2048, 2048x2048x2080; capped
    #    cells up to 3 pairs), judged cross-fitted: verdicts per family, plants of 1/2/3/5 %, the pairs' log ratios by
    #    group and the cells that moved most; the shipped sequential A/A (datasets/h100-aa) as "before";
    # 3. a paired run against a copy of kernels/ whose regblock (simt_fp32 03) spins 40000 SM cycles (~22 us) before
    #    its stores, the sed below (a real code change: its code_sha256 differs; tiled, supertile, cublas_fp32
    #    unchanged), at 1024 and 2048, two pairs a cell: regblock SLOWER with "code" attributed, the others SAME;
    # 4. `farm compare --aa` of the shipped reference runs; 5. the A/A in $OUT/h100-paired-aa.tgz.
    # Read summary-aafull.txt (printed last).
    t0=$(date +%s); budget=${DEADLINE:-310}
    until_reserve() { local d=$(( budget - $(date +%s) + t0 - $1 )); echo $(( d < 20 ? 20 : d )); }  # seconds left less $1
    nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpus.csv"
    if [ "${GPU_TESTS:-0}" = 1 ]; then  # about 25 s more
      timeout 50 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_paired.py > "$OUT/gpu-tests-paired.log" 2>&1
      echo "gpu tests (test_gpu_paired.py): $(tail -1 "$OUT/gpu-tests-paired.log") at $(( $(date +%s) - t0 )) s" | tee "$OUT/summary-aafull.txt"
    fi
    node 0 head; sleep 3
    DEADLINE=$(until_reserve "${RESERVE:-100}") PLAN=plans/aa-paired.toml sweep pa --sizes "${AA_SIZES:-1024,2048,2048x2048x2080}" ${SWEEP_FLAGS:-}
    base=/tmp/base-kernels; rm -rf "$base"; cp -r kernels "$base"
    sed -i 's|^    store_tile<4, 1, 16>(C, acc, M, N, row0, ty, col0, tx);|    { const long long t0 = clock64(); while (clock64() - t0 < 40000) {} }  // planted by .ci/gpu-session.sh aafull\n&|' \
      "$base/simt_fp32/03_regblock.cu"
    grep -q "planted by" "$base/simt_fp32/03_regblock.cu" || echo "aafull: the planted change did not apply to regblock" | tee -a "$OUT/summary-aafull.txt"
    DEADLINE=$(until_reserve "${RESERVE_AFTER:-45}") PLAN=plans/aa-paired.toml sweep pb --base-kernels "$base" \
      --kernels regblock,tiled,supertile --sizes 1024,2048 --repeats 2 ${SWEEP_FLAGS:-}
    ray stop --force > /dev/null 2>&1
    aafull_report "$t0" "$budget" ;;
  aafull-report)  # the aafull step's second half alone, on the results of an earlier call placed at .resume/results.tgz
    aafull_report ;;
  geforce)  # issue 29: the FP64 check sized for the card still catches the planted errors, whole and in row blocks
    # (each check's time and verify_reference printed in the log); then plans/laptop.toml end to end on this GPU
    nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv | tee "$OUT/gpus.csv"
    python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/test_gpu_sizing.py tests/test_gpu_checks.py > "$OUT/gpu-sizing.log" 2>&1
    grep -E "rows \(|passed|failed" "$OUT/gpu-sizing.log" | sort | uniq -c | sort -rn | head -12
    timeout 240 python3 -m farm bench --plan plans/laptop.toml --run-id laptop --output "$RES" > "$OUT/bench-laptop.log" 2>&1
    echo "bench rc=$?"; tail -2 "$OUT/bench-laptop.log"
    python3 -m farm report "$RES" --run-id laptop > "$OUT/report-laptop.md" 2>&1
    python3 -c "import pyarrow.dataset as d, collections; t = d.dataset('$RES/rows', partitioning='hive').to_table(columns=['stage', 'm', 'verify_reference', 'verify_seconds', 'nvml_unreported', 'warmup_reason']).to_pylist(); print(collections.Counter(r['warmup_reason'] for r in t), collections.Counter(tuple(r['nvml_unreported'] or ()) for r in t)); [print(r['m'], round(r['verify_seconds'], 3), r['verify_reference'][:90]) for r in t if r['stage'] == 'cublas_fp32' and r['verify_seconds']]" | tee "$OUT/laptop-checks.txt" ;;
  merged)  # after parallel branches merge: the trust tests and every new Hopper stage's GPU tests on the merged tree,
    # then farm bench (the sweep on a local Ray) over one cell of each new family and its baseline, and a sweep as a Ray job
    nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv | tee "$OUT/gpus.csv"
    prewarm --families hopper_d,hopper_tf32,hopper_fp8
    timeout "${DEADLINE:-600}" python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_trust.py tests/test_gpu_fp8.py \
      tests/test_gpu_hopper_tf32.py tests/test_gpu_walkd_shapes.py 2>&1 | tee "$OUT/gpu-tests-merged.log" | tail -4
    timeout 240 python3 -m farm bench --kernels d_narrow_tiles_bf16,d_split_k_bf16,tf32_warp_specialized,f_warp_specialized_fp8 \
      --sizes 1024,4096 --run-id merged-bench --output "$RES" > "$OUT/bench-merged.log" 2>&1
    echo "bench rc=$?"; tail -3 "$OUT/bench-merged.log"
    node 0 head
    PLAN=plans/quick.toml sweep merged-sweep
    ray stop --force > /dev/null 2>&1
    python3 -m farm validate "$RES" | tail -2 ;;
  walkf08)  # issue 32, walk F 08 (f_tile_plan_fp8) on one H100: its GPU tests (every branch of its host plan, tails and odd
    # shapes, C poisoned), then SWEEP=1 (default) every candidate plan at the small-work LLM shapes (.ci/f08_sweep.py: one
    # CSV line a cell, verified, % of cuBLASLt FP8), then plans/walkf08.toml (08, 07, 05 with cuBLASLt FP8 interleaved, %
    # per cell in walkf08.txt), then Nsight Compute for 07 and 08 at 1024 x 512 x 3584 (moves-walkf08.txt).
    nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpus.csv"
    prewarm --kernels f_tile_plan_fp8,f_swap_plan_fp8,f_split_k_fp8
    timeout "${TESTS_S:-90}" python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/test_gpu_fp8.py -k "${FP8_TESTS:-f_tile_plan_fp8}" \
      > "$OUT/gpu-tests-walkf08.log" 2>&1; grep -E "passed|failed|error|FAIL" "$OUT/gpu-tests-walkf08.log" | tail -8
    [ "${SWEEP:-1}" = 1 ] && { PYTHONPATH=.:${PYTHONPATH:-} timeout "${SWEEP_S:-120}" python3 .ci/f08_sweep.py > "$OUT/f08-sweep.csv" 2> "$OUT/f08-sweep.err"; echo "sweep rc=$?"; }
    timeout "${BENCH_S:-100}" python3 -m farm bench --plan plans/walkf08.toml --run-id walkf08 --output "$RES" > "$OUT/bench-walkf08.log" 2>&1
    echo "bench rc=$?"; tail -2 "$OUT/bench-walkf08.log"
    python3 - "$RES" <<'PY' 2>&1 | tee "$OUT/walkf08.txt"
import sys
import pandas as pd
from farm.data.dataset import read_table
t = read_table(sys.argv[1]).to_pandas()
t = t[t.run_id == "walkf08"]
print(t.status.value_counts().to_dict(), t.gpu_name.iloc[0])
ok = t[(t.status == "ok") & t.verified.fillna(True)]
us = ok.pivot_table(index=["m", "n", "k"], columns="stage", values="median_ms") * 1e3
pct = ok[ok.family == "hopper_fp8"].pivot_table(index=["m", "n", "k"], columns="stage", values="pct_of_baseline")
pd.set_option("display.width", 250)
print("median us"); print(us.round(2).to_string())
print("% of cuBLASLt FP8 (interleaved in the same cell)"); print(pct.round(1).to_string())
PY
    timeout "${PROFILE_S:-60}" python3 -m farm profile --kernels f_swap_plan_fp8,f_tile_plan_fp8 --sizes "${PROFILE_SIZE:-1024x512x3584}" \
      --output "$RES" --run-id profile-walkf08 --timeout 40 > "$OUT/profile-walkf08.log" 2>&1
    echo "profile rc=$?"
    moves moves-walkf08.txt; grep -E "hopper_fp8|rror" "$OUT/moves-walkf08.txt" | head -12
    python3 -m farm report "$RES" --run-id profile-walkf08 > "$OUT/report-profile-walkf08.md" 2>&1 ;;
  llm-targets|llm-later|llm-tail)  # issue 31's LLM target: plans/llm.toml's BF16 cells of walk D 05-08 and 12-16
    # (best at some LLM shape in the full runs) with cuBLASLt (llm-later: 17-21; llm-tail: 22 and 23 where their launch
    # is not 21's, host_plan.launch_is_not_21s: 16 shapes on 132 SMs), cuBLAS interleaved (792 cells; 432; 48), then
    # llm-crosscheck at those shapes on the same card (LLM_CROSSCHECK=0: the call that finishes the run). In blocks at
    # the cap about 1,600 s on an H100 (llm-later 1,150; llm-tail 190 on an H200; DEADLINE, default 360): resume with
    # .resume/results.tgz until every cell has a row. A lower bound of the full plan's best stage.
    shift; run=$1
    kernels=d_mma_overlap_bf16,d_multicast_bf16,d_narrow_tiles_bf16,d_split_k_bf16,d_tma_store_bf16,d_swap_plan_bf16,d_cluster_pair_bf16,d_dependent_launch_bf16,cublaslt_bf16,d_priced_plan_bf16
    [ "$STEP" = llm-later ] && kernels=d_half_tiles_bf16,d_swap_dependent_bf16,d_lean_k_loop_bf16,d_tall_tiles_bf16,d_tile_order_bf16
    sizes=(); if [ "$STEP" = llm-tail ]; then
      kernels=d_mixed_tiles_bf16,d_tail_halves_bf16; SIZES=$(python3 -c "import torch; from farm.data.llm_shapes import plan_shapes
from kernels.hopper_d.host_plan import launch_is_not_21s as new; sms = torch.cuda.get_device_properties(0).multi_processor_count
print(','.join(f'{m}x{n}x{k}' for m, n, k in sorted(plan_shapes()) if new(m, n, k, sms)))")
      export SIZES; sizes=(--sizes "$SIZES")  # llm-crosscheck's too
    fi
    # One repeat a cell: on a host of several GPUs the cells are shared out (shard), not each measured on every card.
    mode=(); [ "$(nvidia-smi -L | grep -c '^GPU')" -gt 1 ] && mode=(--mode shard)
    OUT=$FINAL DEADLINE=${DEADLINE:-360} PREWARM=0 CROSSCHECK=0 REF_PLAN=plans/llm.toml bash "$0" reference "$run" --kernels "$kernels" "${sizes[@]}" "${mode[@]}"
    [ "${LLM_CROSSCHECK:-1}" = 0 ] || OUT=$FINAL DEADLINE=${CROSSCHECK_S:-300} bash "$0" llm-crosscheck "$run" ;;
  cubes)  # issue 31's cube targets, cross-checked, on one card: walk D 12, 22 and 23 (CUBE_KERNELS replaces them), BF16
    # and FP16, 1024^3-8192^3, three repeats, cuBLAS interleaved and alone; then the farm's cuBLAS there against torch.mm
    # under do_bench_cudagraph (hot), its CSV beside the run (about 400 s, DEADLINE=400 for one call; default 300)
    shift; run=$1
    OUT=$FINAL DEADLINE=${DEADLINE:-300} PREWARM=0 CROSSCHECK=0 REF_PLAN=plans/walkd.toml bash "$0" reference "$run" --sizes 1024,2048,4096,8192 \
      --kernels "${CUBE_KERNELS:-d_tma_store_bf16,d_mixed_tiles_bf16,d_tail_halves_bf16,d_tma_store_fp16,d_mixed_tiles_fp16,d_tail_halves_fp16}"
    mkdir -p "$RES"; timeout 240 python3 -m farm crosscheck --sizes 1024,2048,4096,8192 --precisions bf16,fp16 --modes hot \
      --csv "$RES/crosscheck-$run.csv" > "$OUT/crosscheck-$run.md" 2>&1
    echo "cubes crosscheck rc=$?"; tail -20 "$OUT/crosscheck-$run.md" | cut -c1-150 ;;
  capped)  # docs/verdicts.md "At the power cap": plans/capped.toml (walk D 12 and 15 BF16 with cuBLAS at 4096^3 and
    # 8192^3, three repeats, each series timed in blocks of 1 s: its own clock), then the same cells batch by batch (RUN-i,
    # plans/capped-batches.toml: cap_block_s = 0), on one card, and both runs' % in-cell and against cuBLAS alone (about 200 s)
    shift; run=$1
    OUT=$FINAL DEADLINE=${DEADLINE:-240} PREWARM=0 CROSSCHECK=0 REF_PLAN=plans/capped.toml bash "$0" reference "$run"
    OUT=$FINAL DEADLINE=120 PREWARM=0 CROSSCHECK=0 REF_PLAN=plans/capped-batches.toml bash "$0" reference "$run-i"
    python3 -c "
import sys
from farm.data.dataset import read_table
from farm.data.derived import with_alone_baseline
t = with_alone_baseline(read_table(sys.argv[1]).to_pandas())
t = t[t.run_id.isin(sys.argv[2:]) & (t.stage != t.baseline)]
cols = ['pct_of_baseline', 'pct_of_alone_baseline', 'partner_shift_pct', 'sm_clock_median_mhz', 'median_ms', 'baseline_median_ms']
print(t.groupby(['run_id', 'm', 'stage'])[cols].median().round(3).to_string())
print(t[['run_id', 'stop_reason']].drop_duplicates().to_string())" "$RES" "$run" "$run-i" | tee "$OUT/capped-$run.txt" ;;
  blocks)  # how long a block must be at the power cap: .ci/block_calibration.py (12, 01 wgmma and WMMA naive BF16 with
    # cuBLAS at SIZES, default 4096,8192, batch by batch, in blocks of 0.1-2 s and as the default decides; about 200 s
    # on an H100): blocks-*.txt and blocks/blocks.csv
    nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.max.sm --format=csv | tee "$OUT/gpus.csv"
    python3 .ci/block_calibration.py "$OUT/blocks" "${SIZES:-4096,8192}" 2>&1 | tee "$OUT/blocks-run.txt" | grep -v "^\s*$" ;;
  fp8-targets)  # issue 32's FP8 target at the LLM shapes in one call on one card: plans/llm_fp8.toml's E4M3 cells of
    # walk F 03, 07, 08 and 09 (09 best at 46 of 72 shapes in h100-llmf8c) with cuBLASLt FP8 (interleaved and alone)
    # and torch._scaled_mm, 432 cells: in blocks at the cap about 1,000 s on an H100 or H200, so two or three
    # calls (DEADLINE, default 330; .resume/results.tgz resumes). A lower bound of the full plan's best.
    # FP8_KERNELS replaces the list.
    shift; run=$1
    OUT=$FINAL DEADLINE=${DEADLINE:-330} PREWARM=0 CROSSCHECK=0 REF_PLAN=plans/llm_fp8.toml bash "$0" reference "$run" \
      --kernels "${FP8_KERNELS:-f_mma_overlap_fp8,f_swap_plan_fp8,f_tile_plan_fp8,f_half_tiles_fp8,cublaslt_fp8_e4m3,torch_fp8_e4m3}" ;;
  floor)  # what parts of walk D 19's (or PROBE_BASE's) work cost at the cap.
    # .ci/walkd15_probe.py floor: the stage, its probe builds (PROBE_FLOORS, default PROBE_LOADS_ONCE: no DRAM, L2 or
    # TMA traffic past the ring's first pass, PROBE_L2_RESIDENT: no DRAM; PROBE_NO_STORE: no C stores), cuBLAS, in
    # blocks of 1 s, three repeats, at SIZES (cubes; 8192,4096) or SHAPES (M,N,K ...), BF16 and FP16 (probe-floor.txt,
    # floor-*.jsonl); ncu at 8192^3 BF16 (ncu-floor.csv). 250 s (H200).
    T0=$(date +%s); left() { echo $(( $1 - ($(date +%s) - T0) )); }
    nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpus.csv"
    sizes=${SIZES:-8192,4096}; shapes=${SHAPES:-$(for x in ${sizes//,/ }; do printf '%s,%s,%s ' "$x" "$x" "$x"; done)}
    for shape in $shapes; do for dt in ${DTYPES:-bf16 fp16}; do
      PROBE_SHAPE=$shape PROBE_DTYPE=$dt timeout "$(left "${FLOOR_S:-420}")" python3 .ci/walkd15_probe.py floor "$OUT" >> "$OUT/probe-floor.txt" 2>&1
      echo "floor $shape $dt rc=$? t=$(( $(date +%s) - T0 ))"
    done; done
    grep -E "% of cuBLAS|against cuBLAS" "$OUT/probe-floor.txt" | cut -c1-200
    ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | tail -1)
    base=${PROBE_BASE:-d_lean_k_loop}_bf16; floors=${PROBE_FLOORS:-PROBE_LOADS_ONCE,PROBE_L2_RESIDENT}; stages=$base
    for f in ${floors//,/ }; do f=${f#PROBE_}; stages="$stages,${base}_${f,,}"; done
    PROBE_SIZE=8192 PROBE_STAGES=$stages timeout "$(left "${FLOOR_S:-420}")" "$ncu" \
      --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics \
      sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,lts__t_bytes.sum,sm__inst_issued.sum \
      --nvtx --nvtx-include "profile/" -o /tmp/floor -f python3 .ci/walkd15_probe.py ncu > "$OUT/ncu-floor.log" 2>&1
    echo "ncu rc=$?"; tail -2 "$OUT/ncu-floor.log"
    "$ncu" -i /tmp/floor.ncu-rep --page details --csv > "$OUT/ncu-floor.csv" 2>&1
    ncu_summary "$OUT/ncu-floor.csv" Duration "SM Frequency" dram__bytes_read.sum lts__t_bytes.sum sm__inst_issued.sum \
      sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active ;;
  llm-crosscheck)  # issue 31: the vendor baselines at plans/llm.toml's shapes (or SIZES') against torch.mm (BF16, hot), RUN's CSV
    # into $RES (72 shapes took over 400 s on an H100: a call cut off goes on from its CSV in .resume/results.tgz).
    # torch.mm(out_dtype=float32) hit an illegal address at the first LLM shape once (2026-11-26, H100, torch 2.11):
    # each token count M is probed first in a process of its own (an illegal address poisons the context), and the
    # shapes of the M that fail are left out, saying so.
    shift; run=$1; ok=""; mkdir -p "$RES"
    for m in $(python3 -c "from farm.plan import load_plan; print(*sorted({c.m for c in load_plan('plans/llm.toml').cells()}))"); do
      if timeout 60 python3 -c "
import sys, torch
from farm.plan import load_plan
for m, n, k in sorted({(c.m, c.n, c.k) for c in load_plan('plans/llm.toml').cells() if c.m == $m}):
    a, b = torch.randn(m, k, device='cuda').bfloat16(), torch.randn(k, n, device='cuda').bfloat16()
    c = torch.empty(m, n, device='cuda')
    torch.mm(a, b, out_dtype=torch.float32, out=c); torch.cuda.synchronize()
    assert torch.allclose(c, a.float() @ b.float(), rtol=1e-2, atol=1e-1), (m, n, k)" > "$OUT/probe-m$m.log" 2>&1
      then ok="$ok $m"; else echo "torch.mm out_dtype at M = $m failed: $(grep -m1 -E 'Error|assert' "$OUT/probe-m$m.log")"; fi
    done
    sizes=$(python3 -c "import sys; from farm.plan import load_plan; ok = {int(m) for m in sys.argv[1:]}
print(','.join(s for s in (f'{m}x{n}x{k}' for m, n, k in sorted({(c.m, c.n, c.k) for c in load_plan('plans/llm.toml').cells()}) if m in ok)
    if s in '${SIZES:-}'.split(',') or not '${SIZES:-}'))" $ok)
    timeout "${DEADLINE:-300}" python3 -m farm crosscheck --sizes "$sizes" --precisions bf16 --modes hot --max-time-s 0.5 \
      --csv "$RES/crosscheck-$run.csv" --resume > "$OUT/crosscheck-$run.md" 2>&1
    echo "llm crosscheck rc=$? at M in:$ok"; tail -80 "$OUT/crosscheck-$run.md" | cut -c1-110 ;;
  walkf-e5m2)  # issue 32, FP8 with B in E5M2 (fp8_e4m3_e5m2: 03, 04, 07, 09 built with FP8_B_E5M2): its GPU tests (B's E5M2
    # inputs against a host E5M2, the stages and both baselines at tile-multiple and odd shapes, 07 at each plan branch,
    # cuBLASLt's E5M2 x E5M2 refusal); then the class's stages and cuBLASLt FP8 of both classes at 4096^3, 8192^3 and two
    # LLM shapes, two repeats; torch._scaled_mm E4M3 x E5M2 under Triton's do_bench_cudagraph as the independent timer.
    # Read gpu-tests-walkf-e5m2.log and walkFe5m2.txt (% of cuBLASLt FP8 E4M3 x E5M2 per cell and repeat).
    stages=$(python3 -c "from kernels.registry import catalog; print(','.join(s.name for s in catalog()
      if s.dtype == 'fp8_e4m3_e5m2' and not s.is_baseline))")
    nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpus.csv"
    prewarm --kernels "$stages"
    timeout "${TESTS_S:-200}" python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/test_gpu_fp8.py -k e5m2 \
      > "$OUT/gpu-tests-walkf-e5m2.log" 2>&1; grep -E "passed|failed|error|FAIL" "$OUT/gpu-tests-walkf-e5m2.log" | tail -8
    printf '%s\n' "kernels = [\"${stages//,/\", \"}\", \"cublaslt_fp8_e4m3_e5m2\", \"cublaslt_fp8_e4m3\"]" \
      'sizes = [4096, 8192, "1x8192x8192", "4096x14336x4096"]' 'repeats = 2' 'mode = "replicate"' \
      'cell_timeout_s = 120' '' '[measure]' 'max_time_s = 0.5' 'warmup_max_s = 0.5' > /tmp/walkf_e5m2.toml
    timeout "${DEADLINE:-300}" python3 -m farm bench --plan /tmp/walkf_e5m2.toml --run-id walkFe5m2 --output "$RES" \
      > "$OUT/bench-walkFe5m2.log" 2>&1
    echo "bench rc=$?"; tail -2 "$OUT/bench-walkFe5m2.log"
    python3 -c "
import pandas as pd
from farm.data.dataset import read_table
t = read_table('$RES').to_pandas(); t = t[t.run_id == 'walkFe5m2']
print(t[['gpu_name', 'driver_version']].drop_duplicates().to_string(index=False)); print(t.status.value_counts().to_dict())
t['shape'] = t.m.astype(str) + 'x' + t.n.astype(str) + 'x' + t.k.astype(str)
cols = ['shape', 'stage', 'repeat', 'status', 'median_ms', 'tflops', 'pct_of_baseline', 'baseline', 'max_scaled_error']
pd.set_option('display.width', 250); print(t.sort_values(['m', 'n', 'k', 'stage', 'repeat'])[cols].round(4).to_string(index=False))" \
      2>&1 | tee "$OUT/walkFe5m2.txt"
    python3 -c "
import torch
from triton.testing import do_bench_cudagraph
for n in (4096, 8192):  # A E4M3, B E5M2 stored N x K, per-tensor scales, FP32 out, fast accumulation off
    a, bt = torch.randn(n, n, device='cuda').div(8).to(torch.float8_e4m3fn), torch.randn(n, n, device='cuda').to(torch.float8_e5m2)
    s = torch.tensor(0.01, device='cuda')
    ms = do_bench_cudagraph(lambda: torch._scaled_mm(a, bt.t(), scale_a=s, scale_b=s, out_dtype=torch.float32, use_fast_accum=False), rep=200)
    print(f'torch._scaled_mm E4M3 x E5M2 {n}^3 under do_bench_cudagraph: {ms:.4f} ms, {2 * n**3 / ms / 1e9:.0f} TFLOPS')" \
      2>&1 | tee "$OUT/crosscheck-walkf-e5m2.txt" ;;
  stage-crosscheck)  # walk D 19-21's % of cuBLAS by the farm's cell and by do_bench_cudagraph, alternated (farm
    # crosscheck --stages; STAGES, SIZES), its GPU tests first; RUN's CSV goes on from .resume (DEADLINE 540)
    python3 -m pytest -q -m gpu tests/test_gpu_crosscheck.py 2>&1 | tail -3 | tee "$OUT/tests-stage-crosscheck.txt"
    mkdir -p "$RES"; timeout "${DEADLINE:-540}" python3 -m farm crosscheck --csv "$RES/stage-crosscheck-$2.csv" --resume \
      --stages "${STAGES:-d_lean_k_loop_bf16,d_tall_tiles_bf16,d_tile_order_bf16,d_lean_k_loop_fp16,d_tall_tiles_fp16,d_tile_order_fp16}" \
      --sizes "${SIZES:-1024,2048,4096,8192}" 2>&1 | tee "$OUT/stage-crosscheck-$2.md" ;;
  walkd22|walkd23)  # walk D 22 (walkd23: 23 and 24): its GPU tests (walkd23: and the shipped rows' code hashes, 370 s
    # on an H200; TESTS_S=0: none), STAGES (21 and it) by cell and do_bench (RUN's CSV goes on) at SIZES (22: 4096^3 and
    # four LLM shapes it mixes tiles at; 23: 8192^3; DEADLINE 420 / 480 from the start), ncu at the first size
    shift; run=$1; T0=$(date +%s)
    if [ "$STEP" = walkd22 ]; then
      new="mixed_tiles"; tests=d_mixed_tiles; files=tests/test_gpu_walkd_shapes.py; sizes=4096,1024x14336x4096,4096x3584x3584,4096x14336x4096,4096x8192x8192
      tests_s=200; deadline=420; profile_s=90; ncu_s=40
    else
      new="tail_halves evict_first_c"; tests="d_tail_halves or d_evict_first_c or this_trees_code"; sizes=8192
      files="tests/test_gpu_walkd_shapes.py tests/test_shipped_datasets.py"
      tests_s=400; deadline=480; profile_s=120; ncu_s=60
    fi
    stages=$(for p in bf16 fp16; do for k in tile_order $new; do echo "d_${k}_$p"; done; done | paste -sd,)
    [ "${TESTS_S:-$tests_s}" = 0 ] || timeout "${TESTS_S:-$tests_s}" python3 -m pytest -m gpu -q -p no:cacheprovider $files -k "$tests" \
      2>&1 | tee "$OUT/gpu-tests-$STEP.log" | tail -2
    mkdir -p "$RES"; timeout "$(( ${DEADLINE:-$deadline} - $(date +%s) + T0 ))" python3 -m farm crosscheck --csv "$RES/stage-crosscheck-$run.csv" \
      --resume --stages "${STAGES:-$stages}" --sizes "${SIZES:-$sizes}" 2>&1 | tee "$OUT/stage-crosscheck-$run.md"
    timeout "${PROFILE_S:-$profile_s}" python3 -m farm profile --kernels "$(echo "$stages" | tr , '\n' | grep _bf16 | paste -sd,)" \
      --sizes "${sizes%%,*}" --output "$RES" --run-id "profile-$STEP" --timeout $ncu_s > "$OUT/profile-$STEP.log" 2>&1
    PYTHONPATH=.:${PYTHONPATH:-} python3 .ci/step_tables.py profile "$RES" "profile-$STEP" 2>&1 | tee "$OUT/profile-$STEP.txt" ;;
  crosscheck)  # SIZES=256,1024 to choose
    python3 -m farm crosscheck --sizes "${SIZES:-256,512,1024,2048,4096,8192}" --csv "$OUT/crosscheck.csv" 2>&1 | tee "$OUT/crosscheck.md" ;;
esac
if [ -d "$RES" ]; then
  for r in $(ls "$RES"/rows/*/ 2>/dev/null | sed -n 's/^run_id=//p' | sort -u); do  # every run these results hold
    python3 -m farm report "$RES" --run-id "$r" > "$OUT/report-$r.md" 2>/dev/null || true
  done
  tar czf "$FINAL/results-$STEP.tgz" -C /tmp farm-results
fi
tar czf "$FINAL/logs-$STEP.tgz" -C "$OUT" .
