"""Proofs of the stored bytes of a quantized matrix (formulas/topics/weights.py), tensor by tensor."""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.formulas.vocabulary.symbols import B_c, B_q, B_q2, B_r, G_q, c_byte, d_in, d_out, n_bits
from llm_formulas.formulas.topics.weights import AWQ, COMPRESSED, FINEGRAINED, GPT_OSS, GPTQ, INT8, MODELOPT, MX, QLORA, TRANSFORMERS_FP8

BYTE = c_byte


def fp8_block() -> Derivation:
    d = Derivation("memory.weights.fp8_block", "A block-scaled FP8 matrix", (TRANSFORMERS_FP8, FINEGRAINED))
    values = d.defines("M_W", d_out * d_in * BYTE, "weight [d_out, d_in] in float8_e4m3fn")
    scales = d.defines("M_s", sp.ceiling(d_out / B_r) * sp.ceiling(d_in / B_c) * 4 * BYTE,
                       "weight_scale_inv [⌈d_out/B_r⌉, ⌈d_in/B_c⌉] in fp32, partial blocks at the edges included")
    d.defines("M_FP8", values + scales, "the two tensors", parts=("M_W", "M_s"))
    d.concludes("memory.weights.fp8_block")
    return d


def mxfp4() -> Derivation:
    d = Derivation("memory.weights.mxfp4", "An MXFP4 matrix", (MX, GPT_OSS))
    blocks = d.defines("M_blocks", d_out * (d_in / 32) * 16 * BYTE, "*_blocks [.., d_out, d_in/32, 16] uint8: 32 E2M1 values in 16 bytes")
    scales = d.defines("M_scales", d_out * (d_in / 32) * BYTE, "*_scales [.., d_out, d_in/32] uint8: one E8M0 exponent per block")
    d.defines("M_MXFP4", blocks + scales, "4 + 8/32 = 4.25 bits a weight", parts=("M_blocks", "M_scales"))
    d.concludes("memory.weights.mxfp4")
    return d


def _packed(rows: sp.Expr, cols: sp.Expr) -> sp.Expr:
    """An int32 tensor of rows × cols n_bits values, 32/n_bits to a word."""
    return rows * (cols * n_bits / 32) * 4 * BYTE


def gptq() -> Derivation:
    d = Derivation("memory.weights.gptq", "A GPTQ matrix", (GPTQ,))
    qweight = d.defines("M_qweight", _packed(d_out, d_in), "qweight [d_in·n_bits/32, d_out] int32")
    qzeros = d.defines("M_qzeros", _packed(d_in / G_q, d_out), "qzeros [d_in/G, d_out·n_bits/32] int32")
    scales = d.defines("M_scales", (d_in / G_q) * d_out * 2 * BYTE, "scales [d_in/G, d_out] fp16")
    g_idx = d.defines("M_g_idx", d_in * 4 * BYTE, "g_idx [d_in] int32: each input's group")
    d.defines("M_GPTQ", qweight + qzeros + scales + g_idx, "the four tensors", parts=("M_qweight", "M_qzeros", "M_scales", "M_g_idx"))
    d.concludes("memory.weights.gptq")
    return d


def awq() -> Derivation:
    d = Derivation("memory.weights.awq", "An AWQ matrix (GEMM layout)", (AWQ,))
    qweight = d.defines("M_qweight", _packed(d_in, d_out), "qweight [d_in, d_out·n_bits/32] int32")
    qzeros = d.defines("M_qzeros", _packed(d_in / G_q, d_out), "qzeros [d_in/G, d_out·n_bits/32] int32")
    scales = d.defines("M_scales", (d_in / G_q) * d_out * 2 * BYTE, "scales [d_in/G, d_out] fp16")
    d.defines("M_AWQ", qweight + qzeros + scales, "the three tensors", parts=("M_qweight", "M_qzeros", "M_scales"))
    d.concludes("memory.weights.awq")
    return d


def nf4() -> Derivation:
    d = Derivation("memory.weights.nf4", "A bitsandbytes 4-bit matrix", (QLORA,))
    blocks = sp.ceiling(d_in * d_out / B_q)
    values = d.defines("M_W", d_in * d_out / 2 * BYTE, "weight [d_in·d_out/2, 1] uint8: two 4-bit codes a byte")
    absmax = d.defines("M_absmax", blocks * 4 * BYTE, "weight.absmax [⌈d_in·d_out/B_q⌉] fp32")
    code = d.defines("M_code", 16 * 4 * BYTE, "weight.quant_map: the 16 NF4 (or FP4) values in fp32")
    d.defines("M_NF4", values + absmax + code, "the quantization state's JSON aside", parts=("M_W", "M_absmax", "M_code"))
    d.concludes("memory.weights.nf4")
    return d


def nf4_double() -> Derivation:
    d = Derivation("memory.weights.nf4.double", "A bitsandbytes 4-bit matrix, double-quantized", (QLORA,))
    blocks = sp.ceiling(d_in * d_out / B_q)
    values = d.defines("M_W", d_in * d_out / 2 * BYTE, "weight [d_in·d_out/2, 1] uint8")
    absmax = d.defines("M_absmax", blocks * BYTE, "weight.absmax: each block's constant quantized to one byte")
    nested = d.defines("M_nested", sp.ceiling(blocks / B_q2) * 4 * BYTE + 256 * 4 * BYTE,
                       "weight.nested_absmax, an fp32 per B_q2 constants, and nested_quant_map, the 256-value 8-bit code")
    code = d.defines("M_code", 16 * 4 * BYTE, "weight.quant_map: the 16 NF4 values")
    d.defines("M_NF4^DQ", values + absmax + nested + code, "the JSON aside", parts=("M_W", "M_absmax", "M_nested", "M_code"))
    d.concludes("memory.weights.nf4.double")
    return d


def int8() -> Derivation:
    d = Derivation("memory.weights.int8", "An LLM.int8() matrix", (INT8,))
    values = d.defines("M_W", d_out * d_in * BYTE, "weight [d_out, d_in] int8")
    scales = d.defines("M_SCB", d_out * 4 * BYTE, "SCB [d_out] fp32: one scale per output row")
    d.defines("M_int8", values + scales, "and a one-byte weight_format, metadata", parts=("M_W", "M_SCB"))
    d.concludes("memory.weights.int8")
    return d


def int_packed() -> Derivation:
    d = Derivation("memory.weights.int_packed", "A compressed-tensors pack-quantized matrix", (COMPRESSED,))
    packed = d.defines("M_packed", _packed(d_out, d_in), "weight_packed [d_out, d_in·n_bits/32] int32")
    scales = d.defines("M_scale", d_out * (d_in / G_q) * 2 * BYTE, "weight_scale [d_out, d_in/G] bf16 (symmetric: no zero point)")
    shape = d.defines("M_shape", 2 * 4 * BYTE, "weight_shape [2] int32: the unpacked matrix's shape")
    d.defines("M_pack", packed + scales + shape, "the three tensors", parts=("M_packed", "M_scale", "M_shape"))
    d.concludes("memory.weights.int_packed")
    return d


def nvfp4() -> Derivation:
    d = Derivation("memory.weights.nvfp4", "An NVFP4 matrix", (MODELOPT, COMPRESSED))
    values = d.defines("M_W", d_out * (d_in / 2) * BYTE, "weight (weight_packed) [d_out, d_in/2] uint8: two E2M1 values a byte")
    scales = d.defines("M_s", d_out * (d_in / 16) * BYTE, "weight_scale [d_out, d_in/16] float8_e4m3fn: one per 16 inputs")
    scalars = d.defines("M_2", 2 * 4 * BYTE, "weight_scale_2 and input_scale (weight_global_scale and input_global_scale) fp32 scalars")
    d.defines("M_NVFP4", values + scales + scalars, "4 + 8/16 = 4.5 bits a weight, and 8 bytes", parts=("M_W", "M_s", "M_2"))
    d.concludes("memory.weights.nvfp4")
    return d


def fp8_tensor() -> Derivation:
    d = Derivation("memory.weights.fp8_tensor", "A per-tensor FP8 matrix", (MODELOPT,))
    values = d.defines("M_W", d_out * d_in * BYTE, "weight [d_out, d_in] float8_e4m3fn")
    scalars = d.defines("M_2", 2 * 4 * BYTE, "weight_scale and input_scale: fp32 scalars")
    d.defines("M_FP8^tensor", values + scalars, "the three tensors", parts=("M_W", "M_2"))
    d.concludes("memory.weights.fp8_tensor")
    return d


DERIVATIONS = (fp8_block, mxfp4, gptq, awq, nf4, nf4_double, int8, int_packed, nvfp4, fp8_tensor)
