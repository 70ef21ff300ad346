"""Step-time pieces of an LLM serving engine on this GPU (bf16), measured with CUDA events.

GEMMs of Llama-3-8B's and Llama-3-70B's shapes at token counts from decode (1..512 rows) to
prefill (1k..16k rows); decode attention (one query token per sequence, GQA, KV lengths
512..16k) and causal prefill attention; the device-to-device copy bandwidth. Writes JSON.
"""
import json, sys, time
import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
dev = torch.device("cuda")
out = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
       "cuda": torch.version.cuda, "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
       "mem_bytes": torch.cuda.get_device_properties(0).total_memory, "started": time.time()}


def timeit(fn, reps=20, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]  # median, ms


# copy bandwidth
n = 2 * 1024 ** 3  # 2 GiB
x = torch.empty(n, dtype=torch.uint8, device=dev); y = torch.empty_like(x)
ms = timeit(lambda: y.copy_(x), reps=10)
out["copy"] = {"bytes": n, "ms": ms, "GBps_read_plus_write": 2 * n / ms / 1e6}
del x, y

models = {
    # name: hidden, intermediate, heads, kv_heads, head_dim
    "llama3-8b": (4096, 14336, 32, 8, 128),
    "llama3-70b": (8192, 28672, 64, 8, 128),
}
gemm = []
for name, (h, inter, nh, nkv, hd) in models.items():
    shapes = {"qkv": (h, (nh + 2 * nkv) * hd), "o": (nh * hd, h), "gate_up": (h, 2 * inter), "down": (inter, h)}
    ws = {k: torch.randn(kk, nn, dtype=torch.bfloat16, device=dev) for k, (kk, nn) in shapes.items()}
    for m in [1, 8, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]:
        for k, (kk, nn) in shapes.items():
            a = torch.randn(m, kk, dtype=torch.bfloat16, device=dev)
            w = ws[k]
            ms = timeit(lambda: a @ w, reps=15)
            gemm.append({"model": name, "op": k, "m": m, "k": kk, "n": nn, "ms": ms,
                         "tflops": 2 * m * kk * nn / ms / 1e9,
                         "GBps_weights": kk * nn * 2 / ms / 1e6})
    del ws
    torch.cuda.empty_cache()
out["gemm"] = gemm

attn = []
for name, (h, inter, nh, nkv, hd) in models.items():
    for b in [1, 16, 64, 256]:
        for L in [512, 2048, 8192, 16384]:
            kvbytes = 2 * b * nkv * L * hd * 2
            if kvbytes > 40e9:
                continue
            q = torch.randn(b, nh, 1, hd, dtype=torch.bfloat16, device=dev)
            k = torch.randn(b, nkv, L, hd, dtype=torch.bfloat16, device=dev)
            v = torch.randn_like(k)
            ms = timeit(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), reps=10)
            attn.append({"model": name, "phase": "decode", "batch": b, "kv_len": L, "ms": ms,
                         "kv_bytes": kvbytes, "GBps_kv": kvbytes / ms / 1e6})
            del q, k, v
    for L in [1024, 4096, 16384]:
        q = torch.randn(1, nh, L, hd, dtype=torch.bfloat16, device=dev)
        k = torch.randn(1, nkv, L, hd, dtype=torch.bfloat16, device=dev)
        v = torch.randn_like(k)
        ms = timeit(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True), reps=10)
        flops = 4 * nh * hd * L * L / 2  # QK^T and PV, causal half
        attn.append({"model": name, "phase": "prefill", "batch": 1, "kv_len": L, "ms": ms,
                     "tflops": flops / ms / 1e9})
        del q, k, v
    torch.cuda.empty_cache()
out["attention"] = attn
out["finished"] = time.time()
json.dump(out, open(sys.argv[1], "w"), indent=1)
print("done in %.1f s" % (out["finished"] - out["started"]))
