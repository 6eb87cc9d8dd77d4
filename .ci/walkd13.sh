#!/usr/bin/env bash
# Walk D 13 (d_swap_plan) on one H100, from the repo root with the bundle active: its GPU tests (every branch of its
# host plan, the tails and odd N, C poisoned), then .ci/walkd13.toml (10, 12 and 13 with cuBLAS interleaved at the 36
# LLM shapes with M <= 128, BF16 and FP16, two repeats: % of cuBLAS per cell and repeat and geometric means per M in
# walkd13.txt), then Nsight Compute for 12 and 13 at 128 x 1024 x 8192 BF16 (moves-walkd13.txt). Logs under $OUT.
set -uo pipefail
export PYTHONUNBUFFERED=1 RES=/tmp/farm-results GEMM_FARM_GIT_COMMIT=${GIT_COMMIT:-unknown}
OUT=${OUT:-/tmp/walkd13}
mkdir -p "$OUT"
[ -f ~/.ray/auth_token ] || ray get-auth-token --generate > /dev/null
export RAY_AUTH_MODE=token
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpus.csv"
python3 -m farm compile --arch sm_90 --jobs "$(nproc)" --kernels d_swap_ab_bf16,d_swap_ab_fp16,d_tma_store_bf16,d_tma_store_fp16,d_swap_plan_bf16,d_swap_plan_fp16 > "$OUT/compile.log" 2>&1
echo "compile rc=$?"
timeout "${TESTS_S:-90}" python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_walkd_shapes.py -k d_swap_plan 2>&1 | tee "$OUT/gpu-tests-walkd13.log" | tail -4
timeout "${BENCH_S:-170}" python3 -m farm bench --plan .ci/walkd13.toml --run-id walkd13 --output "$RES" > "$OUT/bench-walkd13.log" 2>&1
echo "bench rc=$?"; tail -2 "$OUT/bench-walkd13.log"
python3 - "$RES" <<'PY' 2>&1 | tee "$OUT/walkd13.txt"
import sys
import numpy as np
import pandas as pd
from farm.data.dataset import read_table
t = read_table(sys.argv[1]).to_pandas()
t = t[t.run_id == "walkd13"]
print(t.status.value_counts().to_dict(), t.gpu_name.iloc[0], t.driver_version.iloc[0] if "driver_version" in t else "")
ok = t[(t.status == "ok") & (t.family == "hopper_d")].assign(kernel=lambda d: d.stage.str[2:-5])
pct = ok.pivot_table(index=["m", "n", "k", "dtype"], columns=["kernel", "repeat"], values="pct_of_baseline")
base = t[(t.status == "ok") & (t.family == "baseline")].groupby(["m", "n", "k", "dtype"]).median_ms.median() * 1e3
pct.columns = [f"{s}.r{r}" for s, r in pct.columns]
pct["cublas_us"] = base
pd.set_option("display.width", 250)
print(pct.round(1).to_string())
g = ok.groupby(["m", "n", "k", "dtype", "kernel"]).pct_of_baseline.median().unstack("kernel")
g["best_10_12"] = g[["swap_ab", "tma_store"]].max(axis=1)
geo = lambda s: float(np.exp(np.log(s).mean()))
print("geometric mean of the repeats' median % of cuBLAS, per M and dtype")
print(g.groupby(["m", "dtype"]).agg(geo).round(1).to_string())
print(g.groupby("dtype").agg(geo).round(1).to_string())
print("all", g.agg(geo).round(1).to_dict())
PY
timeout "${PROFILE_S:-60}" python3 -m farm profile --kernels d_tma_store_bf16,d_swap_plan_bf16 --sizes 128x1024x8192 --output "$RES" \
  --run-id profile-walkd13 --timeout 40 > "$OUT/profile-walkd13.log" 2>&1
echo "profile rc=$?"
python3 -c "from farm.analysis.moves import moves_table; import pandas as pd; pd.set_option('display.width', 250); pd.set_option('display.max_colwidth', 120); print(moves_table('$RES')[['family','stage','previous','rank','text']].to_string())" \
  > "$OUT/moves-walkd13.txt" 2>&1; grep -E "hopper_d|rror" "$OUT/moves-walkd13.txt" | head -12
python3 -m farm report "$RES" --run-id profile-walkd13 > "$OUT/report-profile-walkd13.md" 2>&1
tar czf "$OUT/results-walkd13.tgz" -C /tmp farm-results
