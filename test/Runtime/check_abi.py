"""Checks that a runtime library provides every function of its prefix
that lowered code declares, with the same signature.

stdin: LLVM IR of lowered modules (mlir-translate --mlir-to-llvmir).
argv: [--prefix=PREFIX] the runtime's header and the shared library.
PREFIX (default mgpu) selects the declarations checked: mgpu for
libRopeCudaRuntime.so (include/rope/Runtime/CudaRuntime.h), ropeGpuEmu for
libRopeGpuEmulator.so (include/rope/Runtime/GpuEmulator.h). Prints one line
per function and exits non-zero on any mismatch: a missing symbol fails at
link or load time, a wrong signature corrupts arguments silently, which is
why the types are compared too.
"""

import re
import subprocess
import sys

# C type in our header -> LLVM IR type on x86-64.
C_TO_LLVM = {
    "void": "void", "bool": "i8", "int": "i32", "int32_t": "i32", "unsigned int": "i32",
    "unsigned short": "i16", "int64_t": "i64", "uint64_t": "i64", "intptr_t": "i64",
    "std::size_t": "i64", "size_t": "i64", "int8_t": "i8", "uint32_t": "i32",
    # Function pointer typedefs of our headers.
    "RopeGpuEmuKernel": "ptr",
}


def c_type_to_llvm(c: str) -> str:
    c = " ".join(c.replace("const ", "").split())
    if c.endswith("*"):
        return "ptr"
    return C_TO_LLVM[c]


def header_signatures(path):
    text = open(path).read()
    sigs = {}
    for m in re.finditer(r"ROPE_RUNTIME_EXPORT\s+([\w:\s\*]+?)\s*\b(\w+)\(([^)]*)\);", text):
        ret, name, params = m.group(1), m.group(2), m.group(3)
        args = []
        if params.strip() == "void":
            params = ""
        for p in filter(None, (p.strip() for p in params.split(","))):
            p = re.sub(r"/\*.*?\*/", "", p).strip()
            # Drop the parameter name: the last identifier not followed by '*'.
            ty = re.sub(r"\s*\b\w+$", "", p) if not p.endswith("*") else p
            args.append(c_type_to_llvm(ty))
        sigs[name] = (c_type_to_llvm(ret), args)
    return sigs


def main():
    argv = sys.argv[1:]
    prefix = "mgpu"
    if argv and argv[0].startswith("--prefix="):
        prefix = argv.pop(0)[len("--prefix="):]
    header, library = argv[0], argv[1]
    declared = {}
    pattern = r"^declare\s+(\S+)\s+@(" + re.escape(prefix) + r"\w+)\(([^)]*)\)"
    for m in re.finditer(pattern, sys.stdin.read(), re.M):
        args = [a.strip().split()[0] for a in m.group(3).split(",") if a.strip()]
        declared[m.group(2)] = (m.group(1), args)
    exported = set(subprocess.run(["nm", "-D", "--defined-only", library], check=True,
                                  capture_output=True, text=True).stdout.split())
    ours = header_signatures(header)
    bad = 0
    for name, sig in sorted(declared.items()):
        if name not in exported:
            print(f"MISSING {name}: not exported by {library}")
            bad += 1
        elif name not in ours:
            print(f"MISSING {name}: not declared in {header}")
            bad += 1
        elif ours[name] != sig:
            print(f"MISMATCH {name}: lowered code calls {sig}, runtime has {ours[name]}")
            bad += 1
        else:
            print(f"OK {name} {sig[0]}({', '.join(sig[1])})")
    if not declared:
        print(f"no {prefix}* declarations in the input")
        bad += 1
    sys.exit(1 if bad else 0)


main()
