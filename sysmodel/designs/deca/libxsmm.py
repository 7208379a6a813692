"""Software-only decompression cost read from libxsmm's own instruction sequences (DECA §2.4, §7: the
software baseline is Intel libxsmm's AMX GEMM kernels with AVX-512 decompression).

Each sequence below is transcribed from libxsmm's JIT generator at commit ba10d530a (2025-02-05; the
MXFP4, BF8 and bitmask sequences are unchanged from their introduction in 2024 to 2026), for BF16
activations, as the per-iteration instruction mix the generator emits and the BF16 outputs one iteration
produces:

* ``q16_sparse`` — ``src/generator_gemm_amx_microkernel.c``,
  ``libxsmm_generator_gemm_amx_decompress_Kx32_A_block_kloop`` (BF16: VPEXPANDW, unroll 2 cache lines,
  K_CL = 16 so one call decompresses one 16 x 32 tile).
* ``q8_sparse`` — the same function for BF8 (VPEXPANDB, unroll 1) with the 8-bit -> BF16 table lookup of
  ``src/generator_common_x86.c`` ``libxsmm_generator_cvt_8bit_to_16bit_lut_prepped_regs_avx512``
  (3 VMOVDQU64, 3 VPERMT2B, VPANDD, VPXORD per 32 outputs).
* ``q8_dense`` — ``src/generator_gemm_amx.c`` ``libxsmm_generator_gemm_convert_KxM_bf8_to_f16_vnni2``
  (one 32-wide M block per VNNI K pair; batch-reduce-stride prefetches included).
* ``q4_dense`` — ``src/generator_gemm_amx.c`` ``libxsmm_generator_gemm_decompress_KxM_mxfp4_tensor``
  (two 16-row M tiles, K unrolled by 2; scale preparation once per 32 K).

Counts are dynamic instructions per 16 x 32 tile: ``all`` (everything the decompression loop retires:
vector, mask, load, store, prefetch, scalar and loop control) and ``vector`` (AVX-512 compute and mask
instructions, the ones a SIMD unit executes). Neither is the Roof-Surface's VO directly: the paper's VO
includes the core's bubbles (its footnote 1: dependencies between AVX operations and their latencies),
which an instruction count cannot see; sysmodel.designs.deca.roof_surface turns ``all`` into VO with one constant.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from golden.deca_spec import TILE

COMMIT = "ba10d530a"
VECTOR = frozenset(
    {  # AVX-512 compute and mask-register instructions (not loads, stores, prefetches, scalar)
        "VPEXPANDW",
        "VPEXPANDB",
        "KMOVD_GPR_ST",
        "KMOVQ_GPR_ST",
        "VEXTRACTI32X8",
        "VPERMT2B",
        "VPERMT2W",
        "VPERMW",
        "VPANDD",
        "VPXORD",
        "VMOVDQU64",
        "VPMOVZXBW",
        "VPSRLD_I",
        "VPSLLW_I",
        "VPCMPW",
        "KORD",
        "VPADDW",
        "VPSUBW",
        "VPBLENDMW",
    }
)
MEMORY = frozenset(  # instructions with a memory operand (VPEXPANDW/B expand straight from the compressed stream)
    {"KMOVD_LD", "KMOVQ_LD", "PREFETCHT0", "VPEXPANDW", "VPEXPANDB", "VMOVUPS", "VMOVDQU8"}
)
LOOP = Counter({"ADD": 1, "CMP": 1, "JMP": 1})  # the generator's loop footer
LUT_CVT = {"VMOVDQU64": 3, "VPERMT2B": 3, "VPANDD": 1, "VPXORD": 1}  # one 32-output 8-bit -> BF16 lookup


def _twice(mix: dict[str, int]) -> Counter:
    return Counter({k: 2 * v for k, v in mix.items()})


@dataclass(frozen=True)
class Sequence:
    """``body``: instructions of one loop iteration, which produces ``outputs`` BF16 values; ``setup``:
    instructions per ``setup_outputs`` outputs (call prologue/epilogue, per-block scale preparation)."""

    family: str
    file: str
    function: str
    outputs: int
    body: Counter
    setup: Counter
    setup_outputs: int

    def per_tile(self, vector_scale: int = 1) -> dict[str, float]:
        """Dynamic instructions per tile, ``all`` and ``vector``; ``vector_scale``: the loop body's
        non-memory instructions divided by it (§8.1's AVX-scaling rule, module docstring)."""
        if vector_scale < 1:
            raise ValueError(f"vector_scale: {vector_scale} not allowed; allowed: an integer >= 1")
        scale_b, scale_s = TILE / self.outputs, TILE / self.setup_outputs

        def count(mix: Counter, keep: frozenset[str] | None = None) -> float:
            return sum(v if k in MEMORY else v / vector_scale for k, v in mix.items() if keep is None or k in keep)

        total = scale_b * count(self.body) + scale_s * sum(self.setup.values())
        vector = scale_b * count(self.body, VECTOR) + scale_s * sum(v for k, v in self.setup.items() if k in VECTOR)
        return {"all": total, "vector": vector}


_SPARSE_CL = {"KMOVD_LD": 1, "PREFETCHT0": 2, "VPEXPANDW": 1, "KMOVD_GPR_ST": 1, "POPCNT": 1, "ADDQ": 1}
_MXFP4_HALF = {
    "VMOVDQU8": 1,
    "PREFETCHT0": 1,
    "VPMOVZXBW": 1,
    "VPSRLD_I": 1,
    "VPERMW": 2,
    "VPCMPW": 2,
    "KORD": 2,
    "VPADDW": 2,
    "VPBLENDMW": 2,
    "VMOVDQU64": 1,
    "VPERMT2W": 2,
}

SEQUENCES = {
    s.family: s
    for s in (
        Sequence(
            "q16_sparse",
            "src/generator_gemm_amx_microkernel.c",
            "libxsmm_generator_gemm_amx_decompress_Kx32_A_block_kloop",
            64,
            _twice(_SPARSE_CL) + Counter({"SALQ": 1, "VMOVUPS": 2, "SARQ": 1}) + LOOP,
            Counter({"PUSH": 1, "MOV": 2, "ADDQ": 2, "SALQ": 1, "POP": 1}),
            TILE,
        ),
        Sequence(
            "q8_sparse",
            "src/generator_gemm_amx_microkernel.c",
            "libxsmm_generator_gemm_amx_decompress_Kx32_A_block_kloop",
            64,
            Counter(
                {
                    "KMOVQ_LD": 1,
                    "PREFETCHT0": 2,
                    "VPEXPANDB": 1,
                    "KMOVQ_GPR_ST": 1,
                    "POPCNT": 1,
                    "ADDQ": 1,
                    "VEXTRACTI32X8": 1,
                    "SALQ": 1,
                    "VMOVUPS": 2,
                    "SARQ": 1,
                }
            )
            + LOOP
            + _twice(LUT_CVT),
            Counter({"PUSH": 1, "MOV": 2, "ADDQ": 2, "POP": 1}),
            TILE,
        ),
        Sequence(
            "q8_dense",
            "src/generator_gemm_amx.c",
            "libxsmm_generator_gemm_convert_KxM_bf8_to_f16_vnni2",
            64,
            Counter({"VMOVDQU8": 2, "PREFETCHT0": 2, "VPERMT2B": 1, "VEXTRACTI32X8": 1, "VMOVUPS": 2, "ADD": 2})
            + LOOP
            + _twice(LUT_CVT),
            Counter({"PUSH": 1, "MOV": 1, "POP": 1, "SUB": 2}),
            32 * 32,
        ),
        Sequence(
            "q4_dense",
            "src/generator_gemm_amx.c",
            "libxsmm_generator_gemm_decompress_KxM_mxfp4_tensor",
            128,
            _twice(_MXFP4_HALF) + Counter({"VMOVUPS": 4, "ADD": 2}) + LOOP,
            Counter(
                {
                    "VMOVDQU8": 1,
                    "PREFETCHT0": 1,
                    "VPMOVZXBW": 1,
                    "VPCMPW": 1,
                    "VPSUBW": 1,
                    "VPSLLW_I": 1,
                    "PUSH": 1,
                    "MOV": 1,
                    "POP": 1,
                    "SUB": 2,
                }
            ),
            32 * 32,
        ),
    )
}


def instructions_per_tile(family: str, vector_scale: int = 1) -> dict[str, float]:
    if family not in SEQUENCES:
        raise ValueError(f"family: no libxsmm sequence for {family!r}; known: {sorted(SEQUENCES)}")
    return SEQUENCES[family].per_tile(vector_scale)
