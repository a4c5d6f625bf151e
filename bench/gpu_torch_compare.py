#!/usr/bin/env python3
"""PyTorch side by side for scripts/device-check: the same GEMM shapes with torch.matmul, the
same causal attention with scaled_dot_product_attention(is_causal=True), and the same host<->GPU
copies with Tensor.copy_, timed like the kvbe probes (CUDA events, warm-up, median of samples).

Reads the kvbe probes' JSON Lines output (gpu-gemm-peak, gpu-prefill, gpu-copy) for the shapes and
the kvbe figures, and writes one JSON file with both and their ratios (kvbe speed / torch speed:
above 1 means kvbe is faster).

usage: gpu_torch_compare.py --out torch.json [--gemm FILE] [--prefill FILE ...] [--copy FILE]
"""
import argparse
import json
import statistics
import sys


def read_result(path):
    """The header params and the result summary of one kvbe JSONL stream (None if it failed)."""
    params, summary = None, None
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                ev = json.loads(line)
                if "kvbe_probe" in ev:
                    params = ev.get("params", {})
                elif ev.get("type") == "result":
                    summary = ev.get("summary", {})
    except (OSError, ValueError):
        return None, None
    return params, summary


def timed(torch, fn, samples=5, min_seconds=2e-3):
    """Median seconds of one fn() call: warm-up, then event-timed samples of >= min_seconds."""
    fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    one = max(start.elapsed_time(stop) / 1e3, 1e-7)
    reps = int(min(100, max(1, min_seconds / one + 0.999)))
    out = []
    for _ in range(samples):
        start.record()
        for _ in range(reps):
            fn()
        stop.record()
        stop.synchronize()
        out.append(start.elapsed_time(stop) / 1e3 / reps)
    return statistics.median(out)


def gemm_seconds(torch, ops, tokens, cache):
    """Time of the GEMMs of one block at `tokens` tokens: C = A @ W.T per op and instance."""
    total = 0.0
    for op in ops:
        if op.get("name") == "attention":
            continue
        n, k, rpt, inst = op["n"], op["k"], op["rows_per_token"], op["instances"]
        rows = round(tokens * rpt)
        base, extra = divmod(rows, inst)
        for m, count in ((base + 1, extra), (base, inst - extra)):
            if m <= 0 or count <= 0:
                continue
            key = (m, n, k)
            if key not in cache:
                a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
                w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k ** 0.5
                cache[key] = timed(torch, lambda: torch.matmul(a, w.t()))
                del a, w
            total += count * cache[key]
    return total


def sdpa_seconds(torch, op, tokens):
    import torch.nn.functional as F
    hq, hkv, dqk, dv = op["q_heads"], op["kv_heads"], op["d_qk"], op["d_v"]
    if op["mask"] != "full":
        return None  # SDPA's is_causal has no window; kvbe's Llama runs need only full attention
    # [1, N, H, d] storage seen as [1, H, N, d], as a model's projections produce it; the KV heads
    # are expanded outside the timing so that the flash backend, not the math one, runs.
    q = torch.randn(1, tokens, hq, dqk, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    k = torch.randn(1, tokens, hkv, dqk, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    v = torch.randn(1, tokens, hkv, dv, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    if hkv != hq:
        k = k.repeat_interleave(hq // hkv, dim=1)
        v = v.repeat_interleave(hq // hkv, dim=1)
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backends = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]
        if hasattr(SDPBackend, "CUDNN_ATTENTION"):
            backends.append(SDPBackend.CUDNN_ATTENTION)
        with sdpa_kernel(backends):
            t = timed(torch, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    except ImportError:
        t = timed(torch, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    del q, k, v
    torch.cuda.empty_cache()
    return t


def compare_gemm(torch, path):
    params, summary = read_result(path)
    if not summary:
        return {"status": "not run: gpu-gemm-peak gave no result"}
    rows = []
    for r in summary.get("rows", []):
        n = r["size"]
        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        t = timed(torch, lambda: torch.matmul(a, b), min_seconds=0.05)
        del a, b
        torch_tflops = 2 * n ** 3 / t / 1e12
        rows.append({"size": n, "kvbe_tflops": r["tflops"], "torch_tflops": torch_tflops,
                     "ratio": r["tflops"] / torch_tflops})
    torch.cuda.empty_cache()
    return {"status": "ok", "rows": rows, "target": 0.9}


def compare_prefill(torch, path):
    params, summary = read_result(path)
    if not summary or not params:
        return {"status": "not run: gpu-prefill gave no result", "file": path}
    plan = {b["name"]: b for b in params.get("plan", [])}
    out = {"status": "ok", "model": summary.get("model"), "rows": []}
    cache = {}
    for r in summary.get("prefill", []):
        n = r["tokens"]
        for b in r["blocks"]:
            ops = plan.get(b["name"], {}).get("ops", [])
            row = {"tokens": n, "block": b["name"], "kvbe_s": b["seconds_per_layer"]}
            attn = [o for o in ops if o.get("name") == "attention"]
            if attn:
                t = sdpa_seconds(torch, attn[0], n)
                row["kind"] = "attention"
                row["target"] = 0.5
            else:
                t = gemm_seconds(torch, ops, n, cache)
                row["kind"] = "gemm"
                row["target"] = 0.9
            if t:
                row["torch_s"] = t
                row["ratio"] = t / b["seconds_per_layer"]
            out["rows"].append(row)
    torch.cuda.empty_cache()
    return out


def compare_copy(torch, path):
    params, summary = read_result(path)
    if not summary:
        return {"status": "not run: gpu-copy gave no result"}
    sizes = sorted({r["bytes"] for r in summary.get("rows", [])})
    best = {"h2d": 0.0, "d2h": 0.0}
    rows = []
    biggest = max(sizes) if sizes else 0
    host = torch.empty(biggest, dtype=torch.uint8, pin_memory=True)
    dev = torch.empty(biggest, dtype=torch.uint8, device="cuda")
    for size in sizes:
        h, d = host[:size], dev[:size]
        up = timed(torch, lambda: d.copy_(h, non_blocking=True))
        down = timed(torch, lambda: h.copy_(d, non_blocking=True))
        rows.append({"bytes": size, "h2d_GBps": size / up / 1e9, "d2h_GBps": size / down / 1e9})
        best["h2d"] = max(best["h2d"], size / up / 1e9)
        best["d2h"] = max(best["d2h"], size / down / 1e9)
    kvbe = summary.get("best_GBps", {})
    return {"status": "ok", "rows": rows, "torch_best_GBps": best,
            "kvbe_best_GBps": {"h2d": kvbe.get("h2d_pinned_GBps"), "d2h": kvbe.get("d2h_pinned_GBps")},
            "ratio": {d: (kvbe.get(d + "_pinned_GBps") or 0) / best[d] if best[d] else None for d in best},
            "target": 0.95}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--gemm")
    ap.add_argument("--prefill", action="append", default=[])
    ap.add_argument("--copy")
    args = ap.parse_args()
    result = {}
    try:
        import torch
    except ImportError:
        result["status"] = "not run: PyTorch is not installed"
    else:
        if not torch.cuda.is_available():
            result["status"] = "not run: PyTorch sees no CUDA GPU"
        else:
            result["status"] = "ok"
            result["torch"] = torch.__version__
            result["device"] = torch.cuda.get_device_name(0)
            if args.gemm:
                result["gemm"] = compare_gemm(torch, args.gemm)
            result["prefill"] = [compare_prefill(torch, p) for p in args.prefill]
            if args.copy:
                result["copy"] = compare_copy(torch, args.copy)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print("torch comparison:", result["status"])
    return 0 if result["status"] == "ok" else 3


if __name__ == "__main__":
    sys.exit(main())
