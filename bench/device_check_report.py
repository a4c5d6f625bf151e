#!/usr/bin/env python3
"""Writes the Markdown and JSON reports of scripts/device-check from what it left in OUTDIR:
steps.tsv (step, status, seconds, note), the probes' JSON Lines files and torch.json.

usage: device_check_report.py OUTDIR
"""
import json
import os
import sys


def read_stream(path):
    params, summary, error = None, None, None
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if "kvbe_probe" in ev:
                params = ev.get("params", {})
            elif ev.get("type") == "result":
                summary = ev.get("summary")
            elif ev.get("type") == "error":
                error = ev.get("message")
    return {"params": params, "summary": summary, "error": error}


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def seconds(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def verdict(ratio, target):
    if ratio is None:
        return "-"
    return "meets" if ratio >= target else "below"


def main():
    out = sys.argv[1]
    steps = []
    if os.path.exists(os.path.join(out, "steps.tsv")):
        with open(os.path.join(out, "steps.tsv")) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 4:
                    steps.append({"step": parts[0], "status": parts[1], "seconds": float(parts[2] or 0), "note": parts[3]})
    meta = {}
    if os.path.exists(os.path.join(out, "meta.json")):
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f)
    copy = read_stream(os.path.join(out, "gpu-copy.jsonl"))
    gemm = read_stream(os.path.join(out, "gpu-gemm-peak.jsonl"))
    prefill = {}
    for name in sorted(os.listdir(out)):
        if name.startswith("gpu-prefill-") and name.endswith(".jsonl"):
            prefill[name[len("gpu-prefill-"):-len(".jsonl")]] = read_stream(os.path.join(out, name))
    torch = None
    if os.path.exists(os.path.join(out, "torch.json")):
        with open(os.path.join(out, "torch.json")) as f:
            torch = json.load(f)

    report = {"meta": meta, "steps": steps, "gpu_copy": copy, "gpu_gemm_peak": gemm,
              "gpu_prefill": prefill, "torch": torch}
    with open(os.path.join(out, "device-check.json"), "w") as f:
        json.dump(report, f, indent=2)

    md = ["# kvbe device check", ""]
    if meta.get("sentence"):
        md += [f"**{meta['sentence']}**", ""]
    for k in ("date", "commit", "gpu", "cuda_arch", "elapsed_s"):
        if k in meta:
            md.append(f"- {k.replace('_', ' ')}: {meta[k]}")
    md += ["", "## Steps", "", "| step | status | time | note |", "|---|---|---|---|"]
    for s in steps:
        md.append(f"| {s['step']} | {s['status']} | {s['seconds']:.1f} s | {s['note']} |")

    md += ["", "## gpu-copy (GB/s, 1e9 bytes/s, median)", ""]
    if copy and copy["summary"]:
        best = copy["summary"].get("best_GBps", {})
        md.append("| series | best GB/s |")
        md.append("|---|---|")
        for k, v in best.items():
            md.append(f"| {k} | {fmt(v)} |")
    else:
        md.append("not run" + (f": {copy['error']}" if copy and copy.get("error") else ""))

    md += ["", "## gpu-gemm-peak", ""]
    if gemm and gemm["summary"]:
        s = gemm["summary"]
        md.append(f"Peak {fmt(s.get('peak_tflops'), 1)} TFLOP/s at {s.get('best_size')}³"
                  + (f", {fmt(100 * s['fraction_of_preset'], 1)} % of the {s['preset']} data sheet"
                     if "fraction_of_preset" in s else ""))
    else:
        md.append("not run" + (f": {gemm['error']}" if gemm and gemm.get("error") else ""))

    md += ["", "## gpu-prefill", ""]
    if not prefill:
        md.append("not run")
    for key, p in prefill.items():
        md += ["", f"### {key}", ""]
        if not p or not p["summary"]:
            md.append("not run" + (f": {p['error']}" if p and p.get("error") else ""))
            md.append("")
            continue
        md += ["| tokens | t_prefill | TFLOP/s | of data sheet | of GEMM peak | attention |", "|---|---|---|---|---|---|"]
        for r in p["summary"].get("prefill", []):
            pre = r.get("util_vs_preset")
            md.append(f"| {r['tokens']} | {seconds(r['t_prefill_s'])} | {fmt(r['tflops'], 1)} | "
                      f"{fmt(100 * pre, 1) + ' %' if pre is not None else '-'} | {fmt(100 * r['util_vs_gemm_peak'], 1)} % | "
                      f"{seconds(r['attention_s'])} |")
        md.append("")

    md += ["", "## PyTorch side by side (kvbe speed / torch speed)", ""]
    if not torch or torch.get("status") != "ok":
        md.append(torch.get("status", "not run") if torch else "not run")
    else:
        md.append(f"torch {torch.get('torch')} on {torch.get('device')}")
        g = torch.get("gemm", {})
        if g.get("rows"):
            md += ["", "| GEMM m=n=k | kvbe TFLOP/s | torch TFLOP/s | ratio | target 0.9 |", "|---|---|---|---|---|"]
            for r in g["rows"]:
                md.append(f"| {r['size']} | {fmt(r['kvbe_tflops'], 1)} | {fmt(r['torch_tflops'], 1)} | {fmt(r['ratio'])} | {verdict(r['ratio'], 0.9)} |")
        for p in torch.get("prefill", []):
            if p.get("status") != "ok":
                md += ["", p.get("status", "")]
                continue
            md += ["", f"**{p.get('model')}**", "", "| tokens | block | kvbe | torch | ratio | target |", "|---|---|---|---|---|---|"]
            for r in p["rows"]:
                md.append(f"| {r['tokens']} | {r['block']} | {seconds(r['kvbe_s'])} | {seconds(r.get('torch_s'))} | "
                          f"{fmt(r.get('ratio'))} | {r['target']} ({verdict(r.get('ratio'), r['target'])}) |")
        c = torch.get("copy", {})
        if c.get("status") == "ok":
            md += ["", "| pinned copies | kvbe best GB/s | torch best GB/s | ratio | target 0.95 |", "|---|---|---|---|---|"]
            for d in ("h2d", "d2h"):
                ratio = c["ratio"].get(d)
                md.append(f"| {d} | {fmt(c['kvbe_best_GBps'].get(d))} | {fmt(c['torch_best_GBps'].get(d))} | {fmt(ratio)} | {verdict(ratio, 0.95)} |")
    md.append("")
    with open(os.path.join(out, "device-check.md"), "w") as f:
        f.write("\n".join(md))
    print(f"reports: {os.path.join(out, 'device-check.md')} and device-check.json")


if __name__ == "__main__":
    main()
