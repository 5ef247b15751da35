"""The problem part of sdpa-prof's case range names, as model/range_name.cpp writes it:
B8_H16[_Hkv2]_S1024[_Skv4096]_D64_bf16[_causal][_scale0.125][_bwd|_fwd+bwd][_graph]. Kept free of torch so that the
unit tests can hold it against the C++ writer (test_range_name.cpp)."""


def scale_text(text):
    """A softmax scale's one spelling (the shortest that reads back, as sdpa-prof writes it)."""
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise ValueError(f"expected a number > 0, got {text!r}")
    return repr(value)


PASSES = ("fwd", "bwd", "fwd+bwd")
LAUNCHES = ("eager", "graph")


def problem_label(batch, heads, kv_heads, seq, seq_kv, head_dim, dtype, causal, scale=None,
                  pass_name="fwd", launch="eager"):
    s = f"B{batch}_H{heads}"
    if kv_heads != heads:
        s += f"_Hkv{kv_heads}"
    s += f"_S{seq}"
    if seq_kv != seq:
        s += f"_Skv{seq_kv}"
    s += f"_D{head_dim}_{dtype}" + ("_causal" if causal else "")
    s += f"_scale{scale_text(scale)}" if scale is not None else ""
    if pass_name not in PASSES:
        raise ValueError(f"expected a pass of {', '.join(PASSES)}, got {pass_name!r}")
    if launch not in LAUNCHES:
        raise ValueError(f"expected a launch of {', '.join(LAUNCHES)}, got {launch!r}")
    # The forward is the pass, and eager the launch, that a name without one means.
    return s + (f"_{pass_name}" if pass_name != "fwd" else "") + (f"_{launch}" if launch != "eager" else "")


if __name__ == "__main__":
    import sys
    args = sys.argv[1:]
    # batch heads kv_heads seq seq_kv head_dim dtype causal|full [scale|''] [pass] [launch]
    scale = args[8] if len(args) > 8 and args[8] else None
    print(problem_label(*map(int, args[:6]), args[6], args[7] == "causal", scale,
                        args[9] if len(args) > 9 else "fwd", args[10] if len(args) > 10 else "eager"))
