"""Every Hugging Face causal-LM family with rotary embeddings through the
`torch.compile` backend: a table of what compiled, what was split off per
op, whether each graph with attention had it raised, and whether the tokens
are eager's.

    python benchmarks/hf_family_sweep.py                    # every family
    python benchmarks/hf_family_sweep.py llama mixtral      # some
    python benchmarks/hf_family_sweep.py --out results/hf-families

Each family runs in a subprocess of its own (a crash or a hang is a row of
the table, not the end of the sweep), with a timeout: a tiny random config
(2 layers, hidden 64, 4 heads on 2 kv heads of head dim 16, 4 experts of
which 2 per token where the family has experts; the fields a config has are
set, the others left at its defaults), greedy `generate` of 4 tokens from
one prompt of 9, eagerly and through `model.compile(backend="rope_mlir",
dynamic=True)`. A family whose config does not build at that size, or
whose eager `generate` fails, is listed as such: the backend is not tried.
Rows: `tokens` (equal to eager's), `graphs` (compiled / all), `split`
(the ops run in PyTorch per op), `whole` (why graphs ran whole in
PyTorch), `attention` (graphs whose attention was raised / graphs holding
one: a graph holds one when the raise found or nearly found it, or when
its imported IR has a softmax), `misses` (the raise's near misses).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The tests' tiny models: one way to draw their weights (tiny_decoders.instantiate).
sys.path.insert(0, str(ROOT / "test" / "lib" / "python"))
TIMEOUT = 600

SIZES = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
             intermediate_size=128, num_hidden_layers=2, vocab_size=256,
             max_position_embeddings=256, pad_token_id=0, bos_token_id=None, eos_token_id=None,
             tie_word_embeddings=False,
             # experts
             num_experts=4, num_local_experts=4, n_routed_experts=4, num_experts_per_tok=2,
             moe_intermediate_size=32, n_shared_experts=1, first_k_dense_replace=0,
             n_group=1, topk_group=1, decoder_sparse_step=1,
             # multi-head latent attention (DeepSeek)
             kv_lora_rank=32, q_lora_rank=32, qk_rope_head_dim=8, qk_nope_head_dim=8,
             v_head_dim=16, qk_head_dim=16,
             # DeepSeek sparse attention's indexer (V3.2, GLM-MoE-DSA)
             index_head_dim=16, index_n_heads=4, index_topk=8,
             sliding_window=8,
             # Gemma 4: per-layer embeddings, the global layers' head dim
             vocab_size_per_layer_input=256, hidden_size_per_layer_input=16, global_head_dim=16,
             ffn_hidden_size=128)


def families() -> list[str]:
    """The causal-LM model types of the pinned transformers whose default
    config has rotary parameters."""
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    found = []
    for model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        try:
            config = transformers.CONFIG_MAPPING[model_type]()
            text = getattr(config, "get_text_config", lambda: config)()
        except Exception:  # noqa: BLE001 - a config that needs arguments (or names
            found.append(model_type)  # several text configs) is tried anyway
            continue
        if getattr(text, "rope_parameters", None) or hasattr(text, "rope_theta"):
            found.append(model_type)
    return found


def _has(config, key: str) -> bool:
    try:
        getattr(config, key)
        return True
    except Exception:  # noqa: BLE001 - AttributeError, or a per-layer attribute's error
        return False


def _set(config, key: str, value) -> None:
    """Sets a field the config has; a read-only property or a value its
    validators refuse leaves the default."""
    if not _has(config, key):
        return
    try:
        setattr(config, key, value)
    except Exception:  # noqa: BLE001
        pass


def _first_layers(layer_types: list) -> list:
    """The tiny model's layer types: one layer of each kind the model has
    (a hybrid's linear-attention and attention layers, sliding and full),
    in their order, then repeats of the first, up to the layer count."""
    kinds = list(dict.fromkeys(layer_types))[:SIZES["num_hidden_layers"]]
    return kinds + [kinds[0]] * (SIZES["num_hidden_layers"] - len(kinds))


def _homogeneous(config):
    """A config whose layers differ (`per_layer_config`: Gemma 4's global
    layers' head dim, dots3's MLA layers) rebuilt with every layer alike, so
    that the tiny sizes reach each layer."""
    if not getattr(config, "_heterogeneity_spec", None):
        return config
    fields = {k: v for k, v in config.to_dict().items() if k != "per_layer_config"}
    try:
        return type(config)(**fields)
    except Exception:  # noqa: BLE001 - the config as it is then
        return config


def tiny_model(model_type: str):
    import transformers

    import tiny_decoders
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    model_class = getattr(transformers, MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model_type])
    config = _homogeneous(transformers.CONFIG_MAPPING[model_type]())
    text = getattr(config, "get_text_config", lambda: config)()
    # The causal LM of a multimodal family takes its text config.
    wanted = getattr(model_class, "config_class", None)
    if wanted is not None and isinstance(text, wanted) and not isinstance(config, wanted):
        config = text
    # The sizes go to every config the model builds from: its sub-configs
    # too (BLT's encoder, decoder and global transformer; DBRX's attention).
    targets = {id(config): config, id(text): text}
    for owner in list(targets.values()):
        for name in getattr(owner, "sub_configs", {}) or {}:
            sub = getattr(owner, name, None)
            if sub is not None and hasattr(sub, "to_dict"):
                targets[id(sub)] = sub
    for target in targets.values():
        for key, value in SIZES.items():
            _set(target, key, value)
        # A partial rotation within the head dim; MLA's head dim is its rotated part.
        _set(target, "rotary_dim", 8)
        if _has(target, "qk_rope_head_dim"):
            _set(target, "head_dim", SIZES["qk_rope_head_dim"])
        if _has(target, "kv_lora_rank"):  # MLA: K and V per query head
            _set(target, "num_key_value_heads", SIZES["num_attention_heads"])
        if isinstance(getattr(target, "layer_types", None), list):
            _set(target, "layer_types", _first_layers(target.layer_types))
    return tiny_decoders.instantiate(model_class, config)


def run_one(model_type: str) -> dict:
    """One family's row (run in the subprocess)."""
    import torch
    row = {"family": model_type}
    try:
        model = tiny_model(model_type)
    except Exception as e:  # noqa: BLE001
        return {**row, "status": "config", "why": f"{type(e).__name__}: {str(e)[:160]}"}
    ids = torch.randint(1, 256, (1, 9), generator=torch.Generator().manual_seed(1))
    try:
        with torch.no_grad():
            eager = model.generate(ids, max_new_tokens=4, do_sample=False)
    except Exception as e:  # noqa: BLE001
        return {**row, "status": "eager", "why": f"{type(e).__name__}: {str(e)[:160]}"}
    import rope_mlir.torch as rt
    start = time.perf_counter()
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.compile(backend="rope_mlir", dynamic=True)
            out = model.generate(ids, max_new_tokens=4, do_sample=False)
    except Exception as e:  # noqa: BLE001
        return {**row, "status": "compiled", "why": f"{type(e).__name__}: {str(e)[:160]}"}
    graphs = rt.reports()

    # The graphs that ran (compiled, or whole in PyTorch), not the ones split
    # into parts: each part has its own report.
    leaves = [r for r in graphs if not r.split_around]
    with_attention = [r for r in leaves if r.attention_candidates or r.attentions]
    return {**row, "status": "ran", "tokens": bool(torch.equal(out, eager)),
            "graphs": len(graphs), "compiled": sum(r.compiled for r in graphs),
            "split": sorted({op for r in graphs for op in r.split_around}),
            "whole": sorted({r.fallback for r in graphs
                             if not r.compiled and not r.split_around and r.fallback}),
            "attention_graphs": len(with_attention),
            "raised_graphs": sum(1 for r in with_attention
                                 if r.compiled and r.attentions >= r.attention_candidates),
            "attentions": sum(r.attentions for r in leaves if r.compiled),
            "attention_candidates": sum(r.attention_candidates for r in leaves),
            "misses": sorted({m for r in graphs for m in r.near_misses}),
            "seconds": round(time.perf_counter() - start, 1)}


def row_text(r: dict) -> str:
    if r["status"] != "ran":
        return f"| {r['family']} | {r['status']} fails | | | | | {r.get('why', '')} |"
    return (f"| {r['family']} | {'equal' if r['tokens'] else '**differ**'} | "
            f"{r['compiled']}/{r['graphs']} | {r['raised_graphs']}/{r['attention_graphs']} "
            f"({r.get('attentions', '?')}/{r.get('attention_candidates', '?')}) | "
            f"{', '.join(r['split'])} | {'; '.join(r['whole'])[:200]} | "
            f"{'; '.join(r['misses'])[:200]} |")


def write_table(rows: list, out: Path) -> tuple[list, list]:
    """Writes `out`.json and `out`.md; returns (the rows that ran, the good ones)."""
    out.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
    ran = [r for r in rows if r["status"] == "ran"]
    good = [r for r in ran if _good(r)]
    header = ("| family | tokens | graphs compiled | attention raised: graphs (ops) | "
              "split per op | "
              "run whole | near misses |\n|---|---|---|---|---|---|---|")
    out.with_suffix(".md").write_text(
        f"# Hugging Face families through `backend=\"rope_mlir\"`\n\n"
        f"`python benchmarks/hf_family_sweep.py` ({len(rows)} families; {len(ran)} built and "
        f"ran eagerly; of them {len(good)} gave eager's tokens with every attention raised).\n\n"
        f"{header}\n" + "\n".join(row_text(r) for r in rows) + "\n")
    return ran, good


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/hf-families"))
    parser.add_argument("--timeout", type=int, default=TIMEOUT)
    parser.add_argument("--require-all", action="store_true",
                        help="exit 1 unless every family ran, gave eager's tokens and had "
                             "every attention raised (the test of a fixed subset)")
    parser.add_argument("--merge", action="store_true",
                        help="replace the rows of the families run in the table at --out, "
                             "keep the others")
    parser.add_argument("--add", metavar="JSON",
                        help="with --merge: rows of another run's table (a sweep split over "
                             "processes) merged in like fresh ones; no family is run unless named")
    args = parser.parse_args()
    if args.one:
        print("ROW " + json.dumps(run_one(args.one)))
        return 0
    out = Path(args.out)
    kept = (json.loads(out.with_suffix(".json").read_text())
            if args.merge and out.with_suffix(".json").exists() else [])
    added = json.loads(Path(args.add).read_text()) if args.add else []

    def merged(fresh_rows):
        fresh = {r["family"]: r for r in [*added, *fresh_rows]}
        return [fresh.pop(r["family"], r) for r in kept] + list(fresh.values())

    rows = []
    to_run = args.families or ([] if args.add else families())
    for family in to_run:
        env = dict(os.environ, ROPE_MLIR_DUMP_DIR=f"/tmp/rope-sweep-{os.getpid()}/{family}")
        try:
            done = subprocess.run([sys.executable, __file__, "--one", family], env=env,
                                  capture_output=True, text=True, timeout=args.timeout)
            lines = [ln for ln in done.stdout.splitlines() if ln.startswith("ROW ")]
            row = (json.loads(lines[-1][4:]) if lines else
                   {"family": family, "status": "process",
                    "why": f"exit {done.returncode}: {done.stderr.strip()[-160:]}"})
        except subprocess.TimeoutExpired:
            row = {"family": family, "status": "timeout", "why": f"over {args.timeout} s"}
        rows.append(row)
        print(row_text(row), flush=True)
        write_table(merged(rows), out)  # after every family: a stopped sweep keeps its rows
    rows = merged(rows)
    ran, good = write_table(rows, out)
    print(f"{len(good)} of {len(ran)} families that ran eagerly ({len(rows)} tried) gave "
          f"eager's tokens with every attention raised")
    if args.require_all and len(good) != len(rows):
        print("FAILED: " + ", ".join(r["family"] for r in rows if r not in good))
        return 1
    return 0


def _good(r: dict) -> bool:
    """Eager's tokens, and every attention of every graph raised."""
    return (r["status"] == "ran" and r["tokens"] and r["raised_graphs"] == r["attention_graphs"]
            and r.get("attentions", 0) >= r.get("attention_candidates", 0))


if __name__ == "__main__":
    sys.exit(main())
