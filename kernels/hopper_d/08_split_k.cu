// 08 split_k: 07 plus split-K where the tiles alone leave SMs idle. Skinny and small products
// (M = 1 to 128 tokens against a 4096 x 1024 projection: 8 to 16 tiles for 132 SMs) have too
// few output tiles to fill the chip however narrow they are, and at M = 1 they are bound by
// reading B, which idle SMs do not help with either. plan_for now also weighs slicing each
// 128- or 64-column tile's K into 2, 4 or 8 work units (only while tiles < blocks), the
// fix-up costed by the partial rows it moves: S slices of a tile with R rows of C write R x BN
// floats and the last reads S x R x BN back, nearly free at M = 1, dearer than the split saves
// at 1024^3 (a first model that ignored R split 1024^3 into 128x128 tiles x 2 slices: 39 % of
// cuBLAS against 07's 81 %). A 256-column split spilled (its 128 accumulators and the fix-up's
// bookkeeping did not fit), so only 128- and 64-column tiles split. A plan of one slice runs
// 07's code.
// The fix-up needs no second launch and no zeroed buffer: each consumer warp stores its
// slice's partial 16 x BN rows to plane z of the workspace W (8 planes of M x N floats, rows
// past M never written), fences, and counts its arrival on a per-(tile, warp) counter in
// module memory (zero when the module loads); the warp that arrives last sums the planes in
// z order through L2 (the same result whichever slice was last; a lane's loads of a plane in
// flight together), zeroes the counter for the next launch and stores C. No block ever waits
// for another, so nothing depends on which blocks are resident. The launch's tile_n of 8
// sizes the persistent grid for the most units it can make (128x64 tiles in 8 slices):
// every SM for any N >= 1056 / ceil(M / 128). N % 8 == 0, K % 8 == 0, any M.
// The kernel's body is kernels/common/persistent_ws.cuh (run_per_shape with MAX_SPLITS = 8).
#include "persistent_ws.cuh"

// The persistent grid: at most one block per work unit, the smallest (a 128x64 tile's eighth of K) counted as
// a 128x8 tile (kernels/sources.py reads BM and BN here before the header's 128x256 ring's).
enum : int { BM = 128, BN = 8 };

__device__ unsigned int split_arrivals[persistent_ws::ARRIVALS];  // zero when the module loads; each tile's last arrival zeroes its own

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_split_k(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* __restrict__ W,
          int M, int N, int K) {
    persistent_ws::run_per_shape<T, 8>(tma_a, tma_b, C, W, split_arrivals, M, N, K);
}
