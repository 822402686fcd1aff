"""End to end through `torch.compile`: a Llama-style model in eager PyTorch 2,
under Inductor, and under `backend="rope_mlir"`, in one run on one machine.

    <frontend venv>/bin/python benchmarks/torch_backend.py [--quick] [--out DIR]

(`make bench` runs it in the frontend venv after benchmarks/run.py, with the
package of the build on PYTHONPATH.) Writes DIR/torch-backend.{md,json}
(DIR: benchmarks/results).

Models: random weights (no download), `LlamaForCausalLM`, HF's default
attention (SDPA) and cache, batch 1, greedy:
  * `llama3.1-8b-x2`: two layers of Llama-3.1-8B's shapes (hidden 4096,
    32 query / 8 kv heads of 128, MLP 14336, llama3 scaling), vocabulary cut
    to 32000 so that the embedding and head do not dominate; f32 and bf16.
  * `attention-heavy`: the same attention (32/8 heads of 128, llama3) with
    a narrow MLP (1024) and one layer, at long prompts: there the attention
    is most of the work, which is what rope-mlir compiles differently.
Figures:
  * prefill tokens/s: prompt length / the time of one forward pass over the
    prompt (logits for the last token, as `generate` asks);
  * decode tokens/s: 32 / (the time of `generate` for 33 new tokens after
    a 512-token prompt − its time for 1 new token), i.e. the KV-cache steps
    alone: the prefill and generate's setup cancel out.
Each contender gets a warm-up (which compiles) and then the best of a few
timed runs; glibc keeps freed memory for reuse (as in benchmarks/run.py),
for every contender. torch.compile uses dynamic=True for both compilers, so one
compiled graph serves every prompt length.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch
import transformers

from cpu_name import cpu_name  # benchmarks/, beside this script

HERE = Path(__file__).resolve().parent
DECODE_PROMPT, DECODE_TOKENS = 512, 32

# Targets of the issue that introduced the backend (README: torch.compile).
TARGETS = {"prefill": 1.2, "decode": 1.0}


def llama_config(layers, intermediate, vocab=32000):
    return transformers.LlamaConfig(
        hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
        intermediate_size=intermediate, num_hidden_layers=layers, vocab_size=vocab,
        max_position_embeddings=131072, bos_token_id=None, eos_token_id=None, pad_token_id=0,
        rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                         "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192})


def configs(quick):
    """(name, config, dtype, prefill prompt lengths, decode?)"""
    if quick:
        return [("llama3.1-8b-x2", llama_config(2, 14336), torch.float32, [512], True),
                ("attention-heavy", llama_config(1, 1024), torch.float32, [2048], True)]
    return [("llama3.1-8b-x2", llama_config(2, 14336), torch.float32, [512, 2048], True),
            ("llama3.1-8b-x2", llama_config(2, 14336), torch.bfloat16, [512], True),
            ("attention-heavy", llama_config(1, 1024), torch.float32, [2048, 4096, 8192], True)]


def build(config, dtype):
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval().to(dtype)
    return model


def best(fn, reps):
    fn()  # warm-up: compiles
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure(model, prompts, decode, reps):
    """{"prefill": {S: tokens/s}, "decode": tokens/s} of `model`'s forward as
    it is called now (eager or compiled in place)."""
    gen = torch.Generator().manual_seed(1)
    out = {"prefill": {}}
    with torch.no_grad():
        for s in prompts:
            ids = torch.randint(1, model.config.vocab_size, (1, s), generator=gen)
            seconds = best(lambda: model(ids, logits_to_keep=1), reps)
            out["prefill"][s] = s / seconds
        if decode:
            ids = torch.randint(1, model.config.vocab_size, (1, DECODE_PROMPT), generator=gen)
            # generate's prefill (which gives the first token, with generate's
            # own setup) cancels out: only the steps differ.
            first = best(lambda: model.generate(ids, max_new_tokens=1, do_sample=False), reps)
            total = best(lambda: model.generate(ids, max_new_tokens=DECODE_TOKENS + 1,
                                                do_sample=False), reps)
            out["decode"] = DECODE_TOKENS / max(total - first, 1e-9)
    return out


def run(quick, only=None):
    import rope_mlir.torch as rt
    reps = 1 if quick else 2
    rows = []
    for name, config, dtype, prompts, decode in configs(quick):
        if only and name not in only:
            continue
        row = {"model": name, "dtype": str(dtype).replace("torch.", ""),
               "layers": config.num_hidden_layers, "intermediate": config.intermediate_size}
        for contender in ("eager", "inductor", "rope_mlir"):
            torch._dynamo.reset()
            model = build(config, dtype)
            if contender != "eager":
                model.compile(backend=contender, dynamic=True)
            t0 = time.perf_counter()
            rt.clear_reports()
            row[contender] = measure(model, prompts, decode, reps)
            row[contender]["seconds"] = time.perf_counter() - t0
            if contender == "rope_mlir":
                reports = rt.reports()
                row["graphs"] = [{"attentions": r.attentions, "folded": r.folded,
                                  "compiled": r.compiled, "fallback": r.fallback,
                                  "compile_s": round(r.seconds, 2)} for r in reports]
            print(json.dumps({name: {contender: row[contender]}}), flush=True)
            del model
        rows.append(row)
    return rows


def machine():
    return {"cpu": cpu_name(), "threads": torch.get_num_threads(), "torch": torch.__version__,
            "transformers": transformers.__version__, "python": platform.python_version()}


def write(rows, info, out_dir: Path):
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "torch-backend.json").write_text(json.dumps({"machine": info, "rows": rows},
                                                           indent=1))
    lines = ["# torch.compile(backend=\"rope_mlir\") end to end",
             "",
             f"Machine: {info['cpu']}, {info['threads']} threads; PyTorch {info['torch']}, "
             f"transformers {info['transformers']}. Written by `benchmarks/torch_backend.py` "
             "(`make bench`); tokens/s, higher is better; ratios are rope_mlir / Inductor.",
             "",
             "| model | dtype | phase | eager | Inductor | rope_mlir | vs eager | vs Inductor | target | met? |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        phases = [(f"prefill S={s}", "prefill", r["eager"]["prefill"][s], r["inductor"]["prefill"][s],
                   r["rope_mlir"]["prefill"][s]) for s in r["eager"]["prefill"]]
        if "decode" in r["eager"]:
            phases.append((f"decode after {DECODE_PROMPT}", "decode", r["eager"]["decode"],
                           r["inductor"]["decode"], r["rope_mlir"]["decode"]))
        for label, kind, e, i, o in phases:
            target = TARGETS[kind] if r["model"] == "attention-heavy" else None
            met = "" if target is None else ("**yes**" if o / i >= target else "**no**")
            lines.append(f"| {r['model']} | {r['dtype']} | {label} | {e:.1f} | {i:.1f} | {o:.1f} | "
                         f"{o / e:.2f}× | {o / i:.2f}× | "
                         f"{'' if target is None else f'≥ {target}×'} | {met} |")
    lines += ["", "Graphs rope_mlir compiled (per model: prefill first): rope.attention raised "
              "/ with the rotation folded in, compile seconds:", ""]
    for r in rows:
        graphs = ", ".join(f"{g['attentions']}/{g['folded']} ({g['compile_s']} s)"
                           if g["compiled"] else f"fallback: {g['fallback']}" for g in r["graphs"])
        lines.append(f"* {r['model']} {r['dtype']}: {graphs}")
    (out_dir / "torch-backend.md").write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes, one repetition")
    parser.add_argument("--only", nargs="*", help="model names to run")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    info = machine()
    rows = run(args.quick, args.only)
    write(rows, info, args.out)
    print((args.out / "torch-backend.md").read_text())


# As benchmarks/run.py: glibc keeps freed memory for reuse, so that no
# contender pays page faults for the fresh buffers of every call (eager
# PyTorch, Inductor and rope_mlir alike allocate their intermediates anew).
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(1 << 40), "MALLOC_TRIM_THRESHOLD_": str(1 << 40),
              "MALLOC_TOP_PAD_": str(1 << 30), "TOKENIZERS_PARALLELISM": "false"}

if __name__ == "__main__":
    if any(os.environ.get(k) != v for k, v in MALLOC_ENV.items()):
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **MALLOC_ENV})
    main()
