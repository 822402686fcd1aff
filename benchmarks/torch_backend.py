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
  * decode tokens/s: 1 / the median time of one KV-cache step of
    `generate` (33 new tokens after a 512-token prompt), each step timed
    inside the call, from one new token to the next (a stopping criterion
    that only reads the clock), so that the prefill and generate's setup
    are not in it. Until 2026-11-27 it was 32 / (the best time of
    `generate` for 33 new tokens − the best for 1): the difference of two
    best-of-two times, which moved by 5% from run to run.
The three contenders are built side by side; each gets a warm-up (which
compiles), then they are timed in rounds, each call of one followed by the
same call of the others, so that the VM's drift falls on all of them
alike; the best of the rounds counts (decode: the median step of all
rounds). glibc keeps freed memory for reuse
(as in benchmarks/run.py), for every contender. torch.compile uses dynamic=True for both compilers, so one
compiled graph serves every prompt length.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
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
            ("llama3.1-8b-x2", llama_config(2, 14336), torch.bfloat16, [512, 2048], True),
            ("attention-heavy", llama_config(1, 1024), torch.float32, [2048, 4096, 8192], True)]


def build(config, dtype):
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval().to(dtype)
    return model


CONTENDERS = ("eager", "inductor", "rope_mlir")


def timed(fn):
    """Seconds of one call of `fn` and what it returned, after a pause: the
    contenders' OpenMP runtimes keep idle threads spinning for a while after
    a parallel region (LLVM's for 200 ms), which must not take a core from
    the next contender's call."""
    time.sleep(0.3)
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


class StepClock(transformers.StoppingCriteria):
    """Reads the clock each time `generate` has a new token (and never
    stops it): the intervals are its KV-cache steps, one token each."""

    def __init__(self):
        self.stamps = []

    def __call__(self, input_ids, scores, **kwargs):
        self.stamps.append(time.perf_counter())
        return torch.zeros(input_ids.shape[0], dtype=torch.bool)

    def steps(self):
        return [b - a for a, b in zip(self.stamps, self.stamps[1:])]


def workload(model, prompts, decode):
    """{label: call} of what is timed on `model`'s forward as it is called
    now (eager or compiled in place): one forward over each prompt (logits
    for the last token, as `generate` asks) and, with `decode`, `generate`
    for DECODE_TOKENS + 1 new tokens after a DECODE_PROMPT-token prompt,
    which returns the times of its DECODE_TOKENS KV-cache steps."""
    gen = torch.Generator().manual_seed(1)
    calls = {}
    for s in prompts:
        ids = torch.randint(1, model.config.vocab_size, (1, s), generator=gen)
        calls[("prefill", s)] = lambda ids=ids: model(ids, logits_to_keep=1)
    if decode:
        ids = torch.randint(1, model.config.vocab_size, (1, DECODE_PROMPT), generator=gen)

        def steps():
            clock = StepClock()
            model.generate(ids, max_new_tokens=DECODE_TOKENS + 1, do_sample=False,
                           stopping_criteria=[clock])
            return clock.steps()
        calls[("decode", DECODE_TOKENS)] = steps
    return calls


def run(quick, only=None, dtypes=None, cpu_features=None):
    """Per model: the three contenders built side by side and timed in
    rounds, each call of one contender followed by the same call of the
    others (the order reversed every other round), so that the VM's drift
    over the minutes of a run falls on all of them alike; the best of the
    rounds counts."""
    import rope_mlir.torch as rt
    reps = 1 if quick else 2
    # Three compiled copies of a model (two backends) share its code objects.
    torch._dynamo.config.recompile_limit = 64
    rows = []
    for name, config, dtype, prompts, decode in configs(quick):
        if (only and name not in only) or (dtypes and str(dtype).replace("torch.", "") not in dtypes):
            continue
        row = {"model": name, "dtype": str(dtype).replace("torch.", ""),
               "cpu_features": cpu_features or "host",
               "layers": config.num_hidden_layers, "intermediate": config.intermediate_size}
        torch._dynamo.reset()
        rt.clear_reports()
        calls = {}
        with torch.no_grad():
            for contender in CONTENDERS:
                model = build(config, dtype)
                if contender == "rope_mlir" and cpu_features:
                    model.compile(backend=contender, dynamic=True,
                                  options={"cpu_features": cpu_features})
                elif contender != "eager":
                    model.compile(backend=contender, dynamic=True)
                t0 = time.perf_counter()
                calls[contender] = workload(model, prompts, decode)
                for call in calls[contender].values():
                    call()  # warm-up: compiles
                row[contender] = {"warmup_seconds": time.perf_counter() - t0}
            best = {c: {label: float("inf") for label in calls[c]} for c in CONTENDERS}
            steps = {c: [] for c in CONTENDERS}
            for r in range(reps):
                order = CONTENDERS if r % 2 == 0 else CONTENDERS[::-1]
                for label in calls["eager"]:
                    for contender in order:
                        seconds, result = timed(calls[contender][label])
                        if label[0] == "decode":
                            steps[contender] += result
                        else:
                            best[contender][label] = min(best[contender][label], seconds)
        for contender in CONTENDERS:
            b = best[contender]
            row[contender]["prefill"] = {s: s / b[("prefill", s)] for s in prompts}
            if decode:
                row[contender]["decode"] = 1 / statistics.median(steps[contender])
                row[contender]["decode_steps"] = len(steps[contender])
            print(json.dumps({name: {contender: row[contender]}}), flush=True)
        row["graphs"] = [{"attentions": r.attentions, "folded": r.folded,
                          "compiled": r.compiled, "fallback": r.fallback,
                          "compile_s": round(r.seconds, 2)} for r in rt.reports()]
        del calls
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
            dtype = r["dtype"] if r.get("cpu_features", "host") == "host" else \
                f"{r['dtype']} (cpu-features={r['cpu_features']})"
            lines.append(f"| {r['model']} | {dtype} | {label} | {e:.1f} | {i:.1f} | {o:.1f} | "
                         f"{o / e:.2f}× | {o / i:.2f}× | "
                         f"{'' if target is None else f'≥ {target}×'} | {met} |")
    lines += ["", "Graphs rope_mlir compiled (per model: prefill first): rope.attention raised "
              "/ with the rotation folded in, compile seconds:", ""]
    for r in rows:
        graphs = ", ".join(f"{g['attentions']}/{g['folded']} ({g['compile_s']} s)"
                           if g["compiled"] else f"fallback: {g['fallback']}" for g in r["graphs"])
        features = "" if r.get("cpu_features", "host") == "host" else f" (cpu-features={r['cpu_features']})"
        lines.append(f"* {r['model']} {r['dtype']}{features}: {graphs}")
    (out_dir / "torch-backend.md").write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes, one repetition")
    parser.add_argument("--only", nargs="*", help="model names to run")
    parser.add_argument("--dtype", nargs="*", help="dtypes to run (float32, bfloat16)")
    parser.add_argument("--cpu-features", help="rope_mlir's cpu-features (default: the host's), "
                        "e.g. host,-avx512bf16 for bf16 widened to f32 FMAs")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    info = machine()
    rows = run(args.quick, args.only, args.dtype, args.cpu_features)
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
