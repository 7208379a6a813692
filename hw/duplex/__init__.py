"""Duplex Logic-PIM units (Duplex §IV-D): the GEMM module, the softmax unit and the gated activation."""
