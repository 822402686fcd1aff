"""Runs one committed export (models/<NAME>.mlir) through rope-mlir and compares
it with PyTorch running the same Hugging Face model.

    <venv>/bin/python test/Frontends/compare.py NAME      (lit: compare-NAME.test)
    python3 test/Frontends/compare.py --structure NAME    (lit: structure-NAME.test)

For model NAME of zoo.py:
  weights    zoo.build(NAME) (same config, same seed) has the weights the
             committed file was exported from (the digest in its header).
  (a)        the file as it is, compiled with --rope-lower-to-cpu and run on
             every position set of the model, against PyTorch.
  (b)        the file after `rope-opt --rope-raise --rope-fold-rotation-into-qk
             --canonicalize`, then compiled the same way, against PyTorch.
  structure  (--structure; needs no torch) (b)'s raised module is checked by
             `check_raised`: the rotation and the attention were raised and
             fused (rope.attention with the rotation inside, no S×S
             batch_matmul left, no rotation left outside the attention).
  sensitive  PyTorch on the model without the feature it exercises (zoo's
             `without`: the scaling, the window, the soft-cap, ...) differs
             from the model by more than 100 tolerances, so a compiled module
             that dropped that feature would fail (a) or (b).

Tolerance: max|out − torch| <= RTOL · max|torch| over the whole [1, S, hidden]
output, RTOL = 1e-5 (about 170 f32 ulps of the largest output). Both sides
compute in f32 but round differently: other summation orders in the
projections (64 terms), Q·Kᵀ (16) and P·V (12), other sin/cos/exp/tanh
implementations (a few ulps each; logits and values are O(1), so each moves
an output by ~1e-7 of max|out|), and, for (b), the phase p·inv_freq formed in
f64 from the frequencies the raise recovers instead of PyTorch's f32 product:
|Δφ| <= ½ ulp_f32(p·inv_freq) + p·|Δinv_freq| <= ~4e-6 rad for the positions
< 64 used here (the recovered frequencies are within a few f32 ulps of
PyTorch's), which moves a logit, and through the softmax an output, by at most
~4e-6 of its scale. Measured: 2e-7..4e-7 (printed), for (a) and (b) alike.
The features under test move the output by ~1e-1 (the `sensitive` check asks
for more than 100 tolerances). A bf16 model is compared with itself run in
f64 instead, within PyTorch's own bf16 error (torch_outputs), and the
`sensitive` check asks for 10 such tolerances.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zoo  # noqa: E402
from rope_mlir import compiler  # noqa: E402
import rope_testing as T  # noqa: E402

RTOL = 1e-5
# Half an ulp of the largest output, relative to it, at most: the slack
# of a 16-bit model's tolerance for its final rounding.
HALF_ULP = {"bf16": 2.0**-8, "f16": 2.0**-11}
SENSITIVITY = 100.0
LOWER = "--rope-lower-to-cpu"
RAISE = ["--rope-raise", "--rope-fold-rotation-into-qk", "--canonicalize"]

# What each model is exported to exercise, and its config without it; the
# "sensitive" check proves the tolerance would notice the difference.
def _rope(config, **change):
    return {**config, "rope_parameters": {**config["rope_parameters"], **change}}


def _plain_rope(config):
    return {**config, "rope_parameters": {"rope_type": "default",
                                          "rope_theta": config["rope_parameters"]["rope_theta"]}}


WITHOUT = {
    "llama": ("llama3 scaling", _plain_rope),
    "qwen2": ("yarn scaling", _plain_rope),
    "phi3": ("the right longrope factor list (short and long swapped)",
             lambda c: _rope(c, short_factor=c["rope_parameters"]["long_factor"],
                             long_factor=c["rope_parameters"]["short_factor"])),
    "gpt_neox": ("partial rotary (all 16 dims rotated instead of 8)",
                 lambda c: _rope(c, partial_rotary_factor=1.0)),
    "gptj": ("partial rotary (all 16 dims rotated instead of 8)", lambda c: {**c, "rotary_dim": 16}),
    "mistral": ("sliding window", lambda c: {**c, "sliding_window": None}),
    "gemma2": ("logit soft-capping", lambda c: {**c, "attn_logit_softcapping": None}),
}


def torch_outputs(module, name):
    """For each position set of `name`: the arguments of the compiled @main,
    PyTorch's inputs, the reference output (float64 numpy) and the tolerance
    (relative to max|reference|). An f32 model is compared with PyTorch's own
    output within RTOL. A bf16 model is compared with the same model run in
    f64 (its bf16 or f16 weights and inputs widened exactly): rope-mlir must
    be no further from it than PyTorch's own output is, up to the final
    rounding (the tolerance is PyTorch's own error plus half an ulp of
    max|out|, HALF_ULP: an output that the two compute a little differently
    in f32 may round to the other neighbour)."""
    import torch
    model = zoo.get(name)
    outs = {}
    with torch.no_grad():
        for label, pos in model.positions.items():
            # A dynamically shaped export runs at the length of each set.
            hs = zoo.hidden_states(name, len(pos))
            mask = zoo.attention_mask(name, len(pos))
            extra = () if mask is None else (mask,)
            ids = zoo.position_ids(pos)
            out = module(hs, ids, *extra).double().numpy()
            if model.dtype == "f32":
                args = (hs.numpy(), ids.numpy()) + tuple(m.numpy() for m in extra)
                outs[label] = (args, (hs, ids) + extra, out, RTOL)
                continue
            exact = zoo.build(name).double()(hs.double(), ids, *extra).double().numpy()
            own = (float(np.max(np.abs(out - exact)) / np.max(np.abs(exact)))
                   + HALF_ULP[model.dtype])
            args = (T.to_storage(hs.double().numpy(), model.dtype), ids.numpy())
            outs[label] = (args, (hs, ids) + extra, exact, own)
    return outs


def real_tokens(name, seq=None):
    """[batch, S, 1] True at the outputs of real (not padding) tokens. A
    padding query sees no key at all; PyTorch's eager attention then
    averages every value (its mask is finfo.min, not −inf), where
    rope.attention gives zero: those outputs are padding, which no model
    reads, and are not compared."""
    mask = zoo.attention_mask(name, seq)
    return None if mask is None else mask.numpy()[:, :, None]


def run(lib, model, args):
    """@main of `lib` on `args`, its output in f64."""
    return T.from_storage(T.call(lib, "main", *args), model.dtype)


def compare(actual, expected, what: str, tol: float = RTOL, keep=None) -> float:
    """max|actual − expected| / max|expected| over the outputs `keep` says
    (all when None); raises AssertionError beyond `tol`."""
    actual = np.asarray(actual, np.float64)
    if actual.shape != expected.shape:
        raise AssertionError(f"{what}: shape {actual.shape}, PyTorch {expected.shape}")
    if keep is not None:
        actual, expected = np.where(keep, actual, 0.0), np.where(keep, expected, 0.0)
    scale = float(np.max(np.abs(expected)))
    err = float(np.max(np.abs(actual - expected))) if np.all(np.isfinite(actual)) else float("inf")
    rel = err / scale
    if not rel <= tol:
        idx = np.unravel_index(np.argmax(np.abs(actual - expected)), expected.shape)
        raise AssertionError(f"{what}: max|err| / max|torch| = {rel:.3e} > {tol:.1e}; worst at "
                             f"{idx}: ours {actual[idx]!r}, torch {expected[idx]!r}")
    return rel


def check_raised(module_text: str, seq) -> list[str]:
    """What the raise+fold step left undone in `module_text` (`seq`: the
    sequence length as types spell it, a regex: `\\?` when dynamic), one line each
    (empty: the rotation and the attention were raised and fused).

    Required: a rope.attention that rotates Q and K itself (`rotary(` with a
    spec, or `rotary_tables(` with cos/sin operands); no linalg.batch_matmul or
    tosa.matmul with an S×S operand or result left (the Q·Kᵀ scores and the P·V product of the
    exported attention); no rope.rotate / rope.rotate_with_tables left outside
    the attention (each model has one attention, so any rotation left is one
    that was not folded into it)."""
    problems = []
    attentions = [ln.strip() for ln in module_text.splitlines()
                  if re.search(r"=\s*rope\.attention\b", ln)]
    if not attentions:
        problems.append("no rope.attention: the exported attention (batch_matmul, scale, mask, "
                        "softmax, batch_matmul) was not raised")
    elif not any("rotary(" in a or "rotary_tables(" in a for a in attentions):
        problems.append("rope.attention has no rotation inside (no rotary(...) or rotary_tables(...)): "
                        "the rotation was not folded into it: " + attentions[0][:160])
    for ln in module_text.splitlines():
        if re.search(r"linalg\.batch_matmul|tosa\.matmul", ln) and \
                re.search(rf"x{seq}x{seq}x|<\d+x{seq}x{seq}x", ln):
            problems.append(f"an S×S batched product is left: {ln.strip()[:160]}")
            break
    rotations = [m.group(1) for m in re.finditer(r"=\s*(rope\.rotate(?:_with_tables)?)\b", module_text)]
    if rotations:
        problems.append(f"{len(rotations)} rotation(s) left outside the attention "
                        f"({', '.join(sorted(set(rotations)))}): not folded into rope.attention")
    return problems


def structure(name: str) -> None:
    """(b)'s structural check alone (no torch: it reads the committed file)."""
    model = zoo.get(name)
    raised = compiler.lower(model.path.read_text(), RAISE[0], RAISE[1:])
    with T.guard(f"{name} (b) structure"):
        problems = check_raised(raised, r"\?" if model.dynamic else model.seq)
        if problems:
            raise AssertionError("after " + " ".join(RAISE) + ":\n" + "\n".join(problems))
        print(f"PASS {name} (b) structure: rope.attention with the rotation inside, "
              "no S×S batched product, no rotation outside")
    T.finish()


def numerics(name: str) -> None:
    """Weights, sensitivity, (a) and (b) against PyTorch."""
    model = zoo.get(name)
    text = model.path.read_text()

    module = zoo.build(name)
    digest = zoo.weights_digest(module)
    recorded = zoo.recorded_digest(text)
    if recorded != digest:
        # Nothing below would mean anything.
        print(f"FAIL {name} weights: {model.path.name} was exported from other weights (digest "
              f"{recorded}) than zoo.build({name!r}) makes now ({digest}): zoo.py or torch changed; "
              f"regenerate with test/Frontends/export_models.py {name}")
        sys.exit(1)
    print(f"PASS {name} weights: sha256 {digest[:16]}")

    expected = torch_outputs(module, name)
    with T.guard(f"{name} sensitive"):
        import torch
        feature, change = WITHOUT[model.family]
        other = zoo.build_model(dataclasses.replace(model, config=change(model.config)))
        moved = []
        tol = max(entry[3] for entry in expected.values())
        # bf16's tolerance is PyTorch's own rounding error: 10 of them still
        # separate a model from one without the feature.
        sensitivity = SENSITIVITY if model.dtype == "f32" else 10.0
        for label, (_, inputs, ref, _) in expected.items():
            with torch.no_grad():
                alt = other(*inputs).double().numpy()
            moved.append(float(np.max(np.abs(alt - ref)) / np.max(np.abs(ref))))
            print(f"  without {feature}, positions={label}: the output moves by {moved[-1]:.2e} of max|out|")
        # One position set that tells the feature apart is enough (Phi-3's long
        # factors only act on the `spread` set).
        if not max(moved) > sensitivity * tol:
            raise AssertionError(f"without {feature} the output moves by at most {max(moved):.2e} of "
                                 f"max|out| (<= {sensitivity:.0f} x {tol:.1e}): the test could not tell")
        print(f"PASS {name} sensitive: without {feature} the output moves by up to {max(moved):.2e} "
              f"= {max(moved) / tol:.0f} tolerances")

    with T.guard(f"{name} (a)"):
        lib = T.compile(text, pipeline=LOWER)
        for label, (args, _, ref, tol) in expected.items():
            rel = compare(run(lib, model, args), ref, f"(a) positions={label}", tol,
                          real_tokens(name, ref.shape[1]))
            print(f"PASS {name} (a) positions={label}: max|err|/max|torch| = {rel:.2e} (tol {tol:.1e})")

    raised = None
    with T.guard(f"{name} (b) raise"):
        raised = compiler.lower(text, RAISE[0], RAISE[1:])
        print(f"PASS {name} (b) raise: rope-opt {' '.join(RAISE)}")
    if raised is not None:
        with T.guard(f"{name} (b)"):
            lib = T.compile(raised, pipeline=LOWER)
            for label, (args, _, ref, tol) in expected.items():
                rel = compare(run(lib, model, args), ref, f"(b) positions={label}", tol,
                              real_tokens(name, ref.shape[1]))
                print(f"PASS {name} (b) positions={label}: max|err|/max|torch| = {rel:.2e} "
                      f"(tol {tol:.1e})")
    T.finish()


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name", help=f"one of: {', '.join(zoo.MODELS)}")
    ap.add_argument("--structure", action="store_true",
                    help="only (b)'s structural check (needs no torch)")
    a = ap.parse_args(argv)
    zoo.get(a.name)
    if a.structure:
        structure(a.name)
    else:
        numerics(a.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
