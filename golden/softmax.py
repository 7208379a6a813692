"""The softmax unit both Duplex (§IV-D, §VI: "softmax units with 128 KB of buffers") and Hermes (§IV-A1:
the activation unit's comparator tree, exponent units, adder tree and divider) build, bit-exact, in the
hardware's order and precision (hw/common/softmax.py; shared/notes/l3_duplex_flash.md §2.4f). Values are
FP16 bit patterns; every operation rounds to nearest even with gradual underflow (golden.arith).

* The row is padded to whole beats of ``lanes`` with -Inf. Pass 1: M is the max tree of beat 0, then
  max(M, max tree of beat b) (-0 < +0, NaN wins). Pass 2: e_i = exp(s_i - M) (FP16 subtract,
  golden.arith.fp_exp); l_b = the add tree of beat b's e; two partial sums (beats even / odd) from -0,
  S = S_0 + S_1; r = 1/S (golden.arith.fp_recip). Pass 3 (``normalize``): p_i = e_i * r, recomputing e_i.
  Deferred normalization returns e_i and r: the consumer (Duplex's context GEMM) scales by r.
* A row longer than ``max_scores`` is not computed: it returns the ``LEN_OVER`` flag (:class:`SoftmaxErr`).
"""

from __future__ import annotations

import enum

from golden import arith
from golden.commands import flag_fields
from golden.fp import FP16 as F

NEG_INF = F.inf_bits | F.sign_bit  # the padding of a row's last beat: exp(-Inf - M) = +0


class SoftmaxErr(enum.IntFlag):
    LEN_OVER = 1 << 0  # a row longer than the softmax buffer


ERR_FIELDS = flag_fields(SoftmaxErr)


def softmax(
    scores: list[int], lanes: int, normalize: bool = True, max_scores: int | None = None
) -> tuple[list[int], int, int]:
    """(p or e for every lane of every beat, r = 1/S, error) for one FP16 score row (module docstring)."""
    if not scores:
        raise ValueError("scores: a row needs at least one score")
    if max_scores is not None and len(scores) > max_scores:
        return [], 0, int(SoftmaxErr.LEN_OVER)
    padded = list(scores) + [NEG_INF] * (-len(scores) % lanes)
    beats = [padded[b : b + lanes] for b in range(0, len(padded), lanes)]
    m = arith.max_tree(beats[0], F)
    for beat in beats[1:]:
        m = arith.fp_max(m, arith.max_tree(beat, F), F)
    es = [[arith.fp_exp(arith.fp_add(s, m ^ F.sign_bit, F), F) for s in beat] for beat in beats]
    part = [F.sign_bit, F.sign_bit]
    for b, e in enumerate(es):
        part[b % 2] = arith.fp_add(part[b % 2], arith.add_tree(e, F), F)
    r = arith.fp_recip(arith.fp_add(part[0], part[1], F), F)
    flat = [x for e in es for x in e]
    return ([arith.fp_mul(x, r, F) for x in flat] if normalize else flat), r, 0
