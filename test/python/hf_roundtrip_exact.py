# RUN: %python %s | FileCheck %s
"""Every number of every generated module survives rope-opt exactly.

For each bundled config, the module from rope_mlir.hf goes through rope-opt
twice (parse, verify, print, parse the printout, print again). Then:
* the two printouts are identical (printing is a fixed point);
* the printed #rope.spec and the one hf.spec_attr wrote have the same tokens;
  numbers compare as doubles, so 2.000000000000001 (ours, repr) equals
  2.0000000000000009 (rope-opt) only if they are the same double;
* the printed softmax scale, if any, is exactly hf.attention_scale.
Together these show that no value of a config (96 longrope factors included)
is rounded on its way into the compiler.
"""

import json
import re
import subprocess
from pathlib import Path

from rope_mlir import hf
import rope_testing as T

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
TOKEN = re.compile(r"\s*(-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|[A-Za-z_][\w.]*|#[\w.]+|\S)")


def tokens(text):
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        tok = m.group(1)
        pos = m.end()
        out.append(float(tok) if re.fullmatch(r"-?\d.*", tok) else tok)
    return out


def rope_opt(text):
    proc = subprocess.run([str(T.rope_opt())], input=text, capture_output=True, text=True,
                          env=T.tool_env())
    if proc.returncode:
        raise AssertionError(f"rope-opt failed:\n{proc.stderr}")
    return proc.stdout


def spec_in(printed):
    """The text of the rotary(...) attribute in rope-opt's output."""
    start = printed.index("rotary(") + len("rotary(")
    depth = 0
    for i in range(start, len(printed)):
        depth += printed[i] in "<([" and 1 or 0
        depth -= printed[i] in ">)]" and 1 or 0
        if depth < 0:
            return printed[start:i]
    raise AssertionError("unterminated rotary(...)")


for path in sorted(CONFIGS.glob("*.json")):
    config = json.loads(path.read_text())
    once = rope_opt(hf.attention_module(config))
    twice = rope_opt(once)
    if once != twice:
        raise AssertionError(f"FAIL {path.stem}: printing is not a fixed point")
    ours = hf.spec_attr(hf.spec_from_config(config), hf.head_dims(config)[0])
    printed = spec_in(once)
    if tokens(ours) != tokens(printed):
        raise AssertionError(f"FAIL {path.stem}: spec changed\n  ours    {ours}\n  printed {printed}")
    scale = hf.attention_scale(config)
    m = re.search(r"causal scale = (\S+)", once)
    if (scale is None) != (m is None) or (m and float(m.group(1)) != scale):
        raise AssertionError(f"FAIL {path.stem}: scale {m and m.group(1)} != {scale!r}")
    n = sum(isinstance(t, float) for t in tokens(ours))
    print(f"PASS roundtrip {path.stem}: {n} numbers exact")

# CHECK: PASS roundtrip codellama_7b
# CHECK: PASS roundtrip deepseek_v2_lite
# CHECK: PASS roundtrip gpt_neox_20b
# CHECK: PASS roundtrip gptj_6b
# CHECK: PASS roundtrip llama31_8b
# CHECK: PASS roundtrip phi3_mini_128k_instruct: 98 numbers exact
# CHECK: PASS roundtrip qwen25_7b_instruct_yarn
