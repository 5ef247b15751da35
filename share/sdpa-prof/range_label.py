"""The problem part of sdpa-prof's case range names, as model/range_name.cpp writes it:
B8_H16[_Hkv2]_S1024[_Skv4096]_D64_bf16[_causal][_scale0.125]. Kept free of torch so that the
unit tests can hold it against the C++ writer (test_range_name.cpp)."""


def scale_text(text):
    """A softmax scale's one spelling (the shortest that reads back, as sdpa-prof writes it)."""
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise ValueError(f"expected a number > 0, got {text!r}")
    return repr(value)


def problem_label(batch, heads, kv_heads, seq, seq_kv, head_dim, dtype, causal, scale=None):
    s = f"B{batch}_H{heads}"
    if kv_heads != heads:
        s += f"_Hkv{kv_heads}"
    s += f"_S{seq}"
    if seq_kv != seq:
        s += f"_Skv{seq_kv}"
    s += f"_D{head_dim}_{dtype}" + ("_causal" if causal else "")
    return s + (f"_scale{scale_text(scale)}" if scale is not None else "")


if __name__ == "__main__":
    import sys
    args = sys.argv[1:]
    print(problem_label(*map(int, args[:6]), args[6], args[7] == "causal", args[8] if len(args) > 8 else None))
