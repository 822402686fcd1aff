# REQUIRES: cuda-device
# RUN: %python %s | FileCheck %s
"""Matmuls on the GPU kernels of --rope-lower-to-nvvm against f64 numpy: the
tensor-core kernel (--rope-matmul-to-tensor-cores) for f16 and bf16
operands, the register-tiled SIMT kernel (--rope-matmul-to-register-tiles)
for f32:
contractions with B stored [K, N] and [N, K] (a projection x·Wᵀ), batched
both ways, C in f32, f16 and
bf16, a non-zero initial C, and extents that are and are not multiples of
the 64×64×64 tiles.

Each case first checks that its kernel takes it (after the pass the module
holds nvvm.mma.sync, or for f32 a gpu.launch with shared tiles). Tolerance per element: K·u_f32·Σ_k |a_k·b_k| (f32
accumulation in any order; the products of f16/bf16 values are exact in f32)
plus one ulp of C's type at |C| when C is stored in f16 or bf16, plus u_f32 of
the initial value.
"""


import numpy as np

import rope_testing as T


def ty(dims, e):
    return "tensor<" + "x".join(map(str, dims)) + f"x{e}>"


MAPS = {
    # name: (A dims, B dims, C dims) over loops (b, m, n, k)
    "kn": ("m,k", "k,n", "m,n"),
    "nk": ("m,k", "n,k", "m,n"),
    "batch": ("b,m,k", "b,k,n", "b,m,n"),
    "batch nk": ("b,m,k", "b,n,k", "b,m,n"),
}

# name: (layout, element, C element, B, M, N, K, initial C given)
CASES = {
    "f16 [K,N] f32 C 100x136x72": ("kn", "f16", "f32", 1, 100, 136, 72, False),
    "bf16 x·Wt bf16 C 70x96x128": ("nk", "bf16", "bf16", 1, 70, 96, 128, False),
    "f16 batched f16 C 3x65x80x64": ("batch", "f16", "f16", 3, 65, 80, 64, False),
    "bf16 batched x·Wt f32 C 2x64x64x200": ("batch nk", "bf16", "f32", 2, 64, 64, 200, False),
    "f16 x·Wt with initial C 33x40x24": ("nk", "f16", "f32", 1, 33, 40, 24, True),
    "f32 [K,N] 100x130x70": ("kn", "f32", "f32", 1, 100, 130, 70, False),
    "f32 x·Wt with initial C 33x40x24": ("nk", "f32", "f32", 1, 33, 40, 24, True),
    "f32 batched 3x65x80x64": ("batch", "f32", "f32", 3, 65, 80, 64, False),
}


def module(layout, e, ce, B, M, N, K, with_init):
    extent = dict(b=B, m=M, n=N, k=K)
    a_dims, b_dims, c_dims = (d.split(",") for d in MAPS[layout])
    shape = lambda dims: [extent[d] for d in dims]
    at, bt, ct = ty(shape(a_dims), e), ty(shape(b_dims), e), ty(shape(c_dims), ce)
    loops = ["b", "m", "n", "k"] if "b" in c_dims else ["m", "n", "k"]
    amap = lambda dims: f"affine_map<({', '.join(loops)}) -> ({', '.join(dims)})>"
    iters = ", ".join('"reduction"' if d == "k" else '"parallel"' for d in loops)
    params = f"%a: {at}, %w: {bt}" + (f", %c: {ct}" if with_init else "")
    init = "%c" if with_init else "%f"
    fill = "" if with_init else (
        f"  %z = arith.constant 0.0 : {ce}\n  %e = tensor.empty() : {ct}\n"
        f"  %f = linalg.fill ins(%z : {ce}) outs(%e : {ct}) -> {ct}\n")
    ext = (lambda v: f"arith.extf {v} : {e} to {ce}") if ce != e else None
    body = ("    %x = arith.extf %p : " + e + " to " + ce + "\n    %y = arith.extf %q : " + e
            + " to " + ce + "\n    %t = arith.mulf %x, %y : " + ce + "\n") if ext else (
        "    %t = arith.mulf %p, %q : " + ce + "\n")
    return (f"func.func @kernel({params}) -> {ct} {{\n{fill}"
            f"  %r = linalg.generic {{indexing_maps = [{amap(a_dims)}, {amap(b_dims)}, "
            f"{amap(c_dims)}], iterator_types = [{iters}]}}\n"
            f"      ins(%a, %w : {at}, {bt}) outs({init} : {ct}) {{\n"
            f"  ^bb0(%p: {e}, %q: {e}, %o: {ce}):\n{body}"
            f"    %s = arith.addf %o, %t : {ce}\n    linalg.yield %s : {ce}\n"
            f"  }} -> {ct}\n  return %r : {ct}\n}}\n")


def takes_its_kernel(source, e):
    pass_, mark = (("--rope-matmul-to-register-tiles", "workgroup(") if e == "f32"
                   else ("--rope-matmul-to-tensor-cores", "nvvm.mma.sync"))

    def ask():
        run = T.rope_opt_run([pass_], source)
        return run.returncode == 0 and mark in run.stdout
    return T.compiler_answer(repr(("takes_its_kernel", source, e)), ask)


def reference(layout, a, w):
    spec = {"kn": "mk,kn->mn", "nk": "mk,nk->mn", "batch": "bmk,bkn->bmn",
            "batch nk": "bmk,bnk->bmn"}[layout]
    return np.einsum(spec, a, w), np.einsum(spec, np.abs(a), np.abs(w))


g = T.rng(53)
for name, (layout, e, ce, B, M, N, K, with_init) in CASES.items():
    with T.guard(f"gpu matmul {name}"):
        source = module(layout, e, ce, B, M, N, K, with_init)
        assert takes_its_kernel(source, e), "its kernel does not take the case"
        lib = T.gpu_compile(source)
        if lib is None:
            print(f"COMPILED gpu matmul {name}")
            continue
        extent = dict(b=B, m=M, n=N, k=K)
        dims = [d.split(",") for d in MAPS[layout]]
        a = T.quantize(g.standard_normal([extent[d] for d in dims[0]]), e)
        w = T.quantize(g.standard_normal([extent[d] for d in dims[1]]), e)
        args = [T.to_storage(a, e), T.to_storage(w, e)]
        expected, magnitude = reference(layout, a, w)
        atol = K * 2.0 ** -24 * magnitude
        if with_init:
            c0 = T.quantize(g.standard_normal(expected.shape), ce)
            args.append(T.to_storage(c0, ce))
            expected = expected + c0
            atol = atol + 2.0 ** -24 * np.abs(c0)
        out = T.call(lib, "kernel", *args)
        if ce != "f32":
            atol = atol + T.ulp(np.abs(expected), ce)
        T.check(T.from_storage(out, ce), expected, atol, f"gpu matmul {name}")
T.finish()

# CHECK: PASS gpu matmul f16 [K,N] f32 C 100x136x72
# CHECK: PASS gpu matmul bf16 x·Wt bf16 C 70x96x128
# CHECK: PASS gpu matmul f16 batched f16 C 3x65x80x64
# CHECK: PASS gpu matmul bf16 batched x·Wt f32 C 2x64x64x200
# CHECK: PASS gpu matmul f16 x·Wt with initial C 33x40x24
# CHECK: PASS gpu matmul f32 [K,N] 100x130x70
# CHECK: PASS gpu matmul f32 x·Wt with initial C 33x40x24
# CHECK: PASS gpu matmul f32 batched 3x65x80x64
# CHECK-NOT: FAIL
