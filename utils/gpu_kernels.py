#!/usr/bin/env python3
"""What the GPU kernels of a compiled module are, without a GPU.

Reads the output of `rope-opt --rope-lower-to-nvvm="format=isa chip=sm_XX"`
(a gpu.binary per kernel module, holding PTX text) and

  ptx     prints each module's PTX (for FileCheck on instructions);
  ptxas   assembles each module with the CUDA toolkit's ptxas -v for its
          chip and prints, per kernel, one line
            KERNEL <name> sm_XX: <R> registers, <S> bytes smem,
              <st> bytes spill stores, <ld> bytes spill loads, <stack> bytes stack
          (failing when ptxas fails);
  cubin   writes each module's cubin into a folder;
  sass    prints each module's SASS (nvdisasm of the cubin ptxas made).

Usage: gpu_kernels.py {ptx,ptxas,cubin,sass} [FILE|-] [--out DIR]
The CUDA toolkit is found through $CUDA_ROOT, else /usr/local/cuda;
cuobjdump and nvdisasm in $ROPE_CUDA_BINUTILS, else on $PATH.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

OBJECT = re.compile(r'#gpu\.object<#nvvm\.target<[^>]*chip = "(sm_\d+a?)"[^>]*>,'
                    r'(?:\s*properties = \{[^}]*\},)?\s*(?:assembly|bin) = "((?:[^"\\]|\\.)*)"')
BINARY = re.compile(r'gpu\.binary @(\w+)')
ESCAPE = re.compile(r'\\([0-9A-Fa-f]{2}|\\|")')


def unescape(text):
    """MLIR string attribute escapes (\\XX hex, \\\\, \\") to the text."""
    def one(m):
        s = m.group(1)
        return s if s in ('\\', '"') else chr(int(s, 16))
    return ESCAPE.sub(one, text)


def modules(mlir_text):
    """[(binary name, chip, PTX text)] of every gpu.binary."""
    found = []
    for binary in BINARY.finditer(mlir_text):
        tail = mlir_text[binary.end():]
        obj = OBJECT.search(tail)
        if obj is None:
            sys.exit(f"gpu_kernels.py: gpu.binary @{binary.group(1)} holds no PTX "
                     "(compile with format=isa)")
        found.append((binary.group(1), obj.group(1), unescape(obj.group(2))))
    if not found:
        sys.exit("gpu_kernels.py: no gpu.binary in the input")
    return found


def ptxas(ptx, chip, extra=()):
    """ptxas -v output for `ptx` (raises on failure)."""
    cuda = os.environ.get("CUDA_ROOT", "/usr/local/cuda")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        out = os.path.join(tmp, "k.cubin")
        run = subprocess.run([os.path.join(cuda, "bin", "ptxas"), "-v", f"-arch={chip}",
                              *extra, src, "-o", out], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"gpu_kernels.py: ptxas failed:\n{run.stderr}")
        with open(out, "rb") as f:
            return run.stderr, f.read()


def binutil(name):
    """The path of a CUDA binary utility (cuobjdump, nvdisasm)."""
    folder = os.environ.get("ROPE_CUDA_BINUTILS")
    return os.path.join(folder, name) if folder else name


def disassemble(cubin):
    """The SASS of a cubin (nvdisasm, control flow as plain text)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        run = subprocess.run([binutil("nvdisasm"), "-c", path],
                             capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"gpu_kernels.py: nvdisasm failed:\n{run.stderr}")
        return run.stdout


USAGE = re.compile(r"Compiling entry function '(\w+)' for '(sm_\d+a?)'.*?"
                   r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads.*?"
                   r"Used (\d+) registers(?:.*?, (\d+) bytes smem)?", re.S)


def usage_lines(report):
    for m in USAGE.finditer(report):
        name, chip, stack, st, ld, regs, smem = m.groups()
        yield (f"KERNEL {name} {chip}: {regs} registers, {smem or 0} bytes smem, "
               f"{st} bytes spill stores, {ld} bytes spill loads, {stack} bytes stack")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["ptx", "ptxas", "cubin", "sass"])
    ap.add_argument("input", nargs="?", default="-")
    ap.add_argument("--out", help="cubin: folder to write <binary>.cubin into")
    args = ap.parse_args()
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    for name, chip, ptx in modules(text):
        if args.mode == "ptx":
            print(f"// gpu.binary @{name} ({chip})")
            print(ptx)
            continue
        report, cubin = ptxas(ptx, chip)
        if args.mode == "sass":
            print(f"// gpu.binary @{name} ({chip})")
            print(disassemble(cubin))
        elif args.mode == "ptxas":
            lines = list(usage_lines(report))
            if not lines:
                sys.exit(f"gpu_kernels.py: no usage in ptxas' report:\n{report}")
            print("\n".join(lines))
        else:
            os.makedirs(args.out or ".", exist_ok=True)
            with open(os.path.join(args.out or ".", f"{name}.cubin"), "wb") as f:
                f.write(cubin)


if __name__ == "__main__":
    main()
