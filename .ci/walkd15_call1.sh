#!/usr/bin/env bash
# walkd15 call 1 (H200, 1024^3 BF16): where 11's 0.85 us against cuBLAS go. Probe timings (graphs of 100 launches,
# plain and PDL), cuBLAS's graph edges, Nsight Compute (full set, hot) of 11, 12, the probes and cuBLAS, then a farm
# bench of 11, 12 and the probes (verified, cuBLAS interleaved). Everything under $OUT.
set -uo pipefail
T0=$(date +%s); left() { echo $(( ${1} - ($(date +%s) - T0) )); }
L=/tmp/w15; mkdir -p $L "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $L/gpu.csv
KS=d_host_plan_bf16,d_tma_store_bf16,d_hp_pdl_bf16,d_v64_bf16,d_v64mc_bf16
timeout 70 python3 -m farm compile --arch sm_90 --jobs 8 --kernels $KS,d_host_plan_fp16 > $L/compile.log 2>&1; echo "compile rc=$? t=$(( $(date +%s) - T0 ))"
grep -E "regs|error" $L/compile.log | head -8
timeout 60 python3 .ci/walkd15_probe.py time $L > $L/probe.txt 2>&1; echo "probe rc=$? t=$(( $(date +%s) - T0 ))"
cat $L/probe.txt | grep -v "^node" | head -60
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | tail -1)
timeout $(left 200) $NCU --clock-control none --cache-control none --set full --import-source no --nvtx --nvtx-include "profile/" \
  -o $L/w15 -f python3 .ci/walkd15_probe.py ncu > $L/ncu.log 2>&1; echo "ncu rc=$? t=$(( $(date +%s) - T0 ))"; tail -3 $L/ncu.log
$NCU -i $L/w15.ncu-rep --page details --csv > $L/details.csv 2>&1
$NCU -i $L/w15.ncu-rep --page raw --csv > $L/raw.csv 2>&1
$NCU -i $L/w15.ncu-rep --page source --csv --print-source sass > $L/source.csv 2>&1
python3 - $L <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1] + "/details.csv")))
h = rows[0]; ix = {k: i for i, k in enumerate(h)}
want = ("Duration", "SM Active Cycles", "Elapsed Cycles", "Compute (SM) Throughput", "Memory Throughput", "L2 Cache Throughput",
        "DRAM Throughput", "L1/TEX Hit Rate", "L2 Hit Rate", "Registers Per Thread", "Block Size", "Grid Size", "Cluster Size",
        "Issue Slots Busy", "Warp Cycles Per Issued Instruction", "Achieved Occupancy", "Mem Busy", "Max Bandwidth", "SM Frequency")
for r in rows[1:]:
    if len(r) == len(h) and r[ix["Metric Name"]] in want:
        print(r[ix["ID"]], r[ix["Kernel Name"]][:40], "|", r[ix["Metric Name"]], r[ix["Metric Value"]], r[ix["Metric Unit"]])
PY
tar czf "$OUT/w15.tgz" -C $L . 2>&1 | tail -2; ls -la "$OUT"
echo "left $(left 290) s"
PLAN=plans/walkd15-probe.toml
timeout $(left 285) python3 -m farm bench --plan $PLAN --run-id walkd15p --output /tmp/w15res > $L/bench.log 2>&1; echo "bench rc=$?"; tail -3 $L/bench.log
python3 - <<'PY' 2>&1 | tee $L/bench.txt
import pandas as pd
from farm.data.dataset import read_table
t = read_table("/tmp/w15res").to_pandas()
print(t.status.value_counts().to_dict())
bad = t[t.status != "ok"]
if len(bad): print(bad[["stage", "m", "n", "k", "status", "status_reason"]].to_string())
ok = t[(t.status == "ok")]
pd.set_option("display.width", 250)
print(ok.pivot_table(index=["m", "n", "k", "dtype"], columns=["stage", "repeat"], values="pct_of_baseline").round(1).T.to_string())
print((ok.groupby(["m", "n", "k", "stage"]).median_ms.median().unstack("stage") * 1e3).round(2).T.to_string())
PY
cp $L/bench.txt $L/bench.log "$OUT/" 2>/dev/null
echo "done t=$(( $(date +%s) - T0 ))"
