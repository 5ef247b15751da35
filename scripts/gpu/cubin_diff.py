#!/usr/bin/env python3
"""Compares two cubins section by section, leaving out line tables: code that is unchanged has
byte-identical .text.* (the SASS) and .nv.info.* (registers, barriers, shared memory). Needs no
GPU and no cuobjdump: build each side with
  nvcc -Ikernels -O3 -DNDEBUG -cubin -arch=sm_90a -std=c++20 -x cu kernels/flash3_fwd_hdim64.cu -o a.cubin
Usage: cubin_diff.py A.cubin B.cubin (exit 1 when a section differs)."""
import struct, sys

def sections(path):
    data = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3A)
    heads = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx]
    def name(off):
        start = strtab[4] + off
        return data[start:data.index(b'\0', start)].decode()
    return {name(h[0]): data[h[4]:h[4] + h[5]] if h[1] != 8 else b'' for h in heads}

a, b = sections(sys.argv[1]), sections(sys.argv[2])
keep = lambda n: n.startswith(('.text.', '.nv.info', '.nv.shared.', '.nv.constant0.', '.nv.global'))
names = sorted(n for n in set(a) | set(b) if keep(n))
same = 0
for n in names:
    if a.get(n) == b.get(n):
        same += 1
    else:
        print(f"differs: {n} ({len(a.get(n, b''))} -> {len(b.get(n, b''))} bytes)")
print(f"{same} of {len(names)} code and info sections identical")
sys.exit(0 if same == len(names) else 1)
