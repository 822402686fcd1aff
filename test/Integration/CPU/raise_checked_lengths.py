# RUN: %python %s | FileCheck %s
"""An attention raised at dynamic lengths that no size in the program
relates (Q and K as arguments of their own length, as in the parts of a
graph the torch.compile backend splits around an op; causal mask over Q's
length): --rope-raise makes it rope.attention with a run-time check that the
lengths are equal, the rule it read the mask as. The function of
test/Raising/raise-attention-dynamic.mlir (@raise_argument_lengths_checked,
GQA 4/2, D = 16) is compiled as written and raised, at S = 5 and 37, and
compared with the f64 reference (causal, scale 0.25); with 5 queries and 6
keys the raised one refuses the call with RuntimeCheckError quoting both
lengths.

Tolerance: rope_testing.attention_atol (f32 logits and accumulation).
"""

import re
from pathlib import Path

import numpy as np

from rope_mlir import compiler, reference as ref
from rope_mlir.errors import RuntimeCheckError
import rope_testing as T

SOURCE = Path(__file__).resolve().parents[2] / "Raising" / "raise-attention-dynamic.mlir"
chunk = next(c for c in SOURCE.read_text().split("// -----")
             if "func.func @raise_argument_lengths_checked(" in c)
raised = compiler.lower(chunk, "--rope-raise")
assert "rope.attention" in raised and "rope.assert" in raised, raised
written = T.compile(chunk)
checked = T.compile(raised)

rng = T.rng(11)
for s in (5, 37):
    q = T.quantize(rng.standard_normal((1, 4, s, 16)), "f32")
    k = T.quantize(rng.standard_normal((1, 2, s, 16)), "f32")
    v = T.quantize(rng.standard_normal((1, 2, s, 16)), "f32")
    args = [T.to_storage(a, "f32") for a in (q, k, v)]
    want = ref.attention(q, k, v, scale=0.25, causal=True)
    atol = T.attention_atol(q, k, v, scale=0.25)
    with T.guard(f"S={s}"):
        T.check(T.call(written, "raise_argument_lengths_checked", *args), want, atol,
                f"as written S={s}")
        T.check(T.call(checked, "raise_argument_lengths_checked", *args), want, atol,
                f"raised S={s}")

q = T.to_storage(rng.standard_normal((1, 4, 5, 16)), "f32")
kv = T.to_storage(rng.standard_normal((1, 2, 6, 16)), "f32")
with T.guard("unequal lengths"):
    try:
        checked.call("raise_argument_lengths_checked", q, kv, kv)
    except RuntimeCheckError as e:
        assert "got 5 queries and 6 keys" in str(e), str(e)
        print(f"PASS unequal lengths refused: {str(e).split(': error: ', 1)[-1]}")
    else:
        raise AssertionError("5 queries and 6 keys ran")
T.finish()

# CHECK: PASS as written S=5
# CHECK: PASS raised S=5
# CHECK: PASS as written S=37
# CHECK: PASS raised S=37
# CHECK: PASS unequal lengths refused: rope-raise: the attention's mask was read as a rule over equal query and key lengths, got 5 queries and 6 keys
