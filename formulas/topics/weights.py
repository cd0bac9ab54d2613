"""The bytes of one weight matrix as a quantized checkpoint stores it: values, scales and zero points.

A d_out×d_in matrix (d_in inputs, d_out outputs) in each scheme the counts model, as transformers 5.24 and the
libraries it loads them with hold them:
- FP8 block-scaled (DeepSeek-V3/R1, Qwen3-FP8; quant_method "fp8"): one E4M3 byte per weight and an fp32
  weight_scale_inv per B_r×B_c block, ⌈d_out/B_r⌉·⌈d_in/B_c⌉ of them.
- MXFP4 (gpt-oss's experts; OCP microscaling): half a byte per weight (*_blocks) and one E8M0 byte per 32 inputs
  (*_scales).
- GPTQ (n_bits, groups of G inputs): qweight packed in int32 (n_bits/8 bytes a weight), qzeros packed likewise
  per group and output, fp16 scales per group and output, and g_idx (an int32 per input).
- AWQ (GEMM layout): the same without g_idx.
- bitsandbytes NF4/FP4 (blocks of B_q = 64): half a byte per weight, an fp32 absmax per block and the 16-value
  code; with double quantization the absmax in one byte, an fp32 per B_q2 = 256 of them, and the 256-value code.
  LLM.int8(): an int8 per weight and an fp32 scale (SCB) per output row.
- compressed-tensors pack-quantized (symmetric int, n_bits 4 or 8, groups of G inputs or one per row; Kimi-K2.5):
  weight_packed in int32 (n_bits/8 bytes a weight), a 16-bit weight_scale per group and output, and weight_shape,
  two int32.
- NVFP4 (ModelOpt's quant_algo "NVFP4", compressed-tensors' nvfp4-pack-quantized): two E2M1 weights a byte, an E4M3
  scale per 16 inputs, and two fp32 scalars (the weight's second-level scale and the input's scale).
- FP8 per tensor (ModelOpt's quant_algo "FP8"): an E4M3 byte per weight, an fp32 weight_scale and input_scale.
bitsandbytes also stores a small JSON of each matrix's quantization state (about 80 bytes, 170 with double
quantization) and int8 a one-byte weight_format: metadata the formulas leave out.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Source, formula
from llm_formulas.formulas.vocabulary.symbols import B_c, B_q, B_q2, B_r, G_q, c_byte, d_in, d_out, n_bits

FINEGRAINED = Source("deepseek2024v3", "§3.3.2: fine-grained quantization, 1×128 activation tiles and 128×128 weight blocks")
TRANSFORMERS_FP8 = Source("transformers", "integrations/finegrained_fp8.py: FP8Linear weight and weight_scale_inv")
MX = Source("ocp2023mx", "§5: MXFP4, blocks of 32 E2M1 elements with a shared E8M0 scale")
GPT_OSS = Source("openai2025", "§2: MoE weights in MXFP4, 4.25 bits per parameter")
GPTQ = Source("frantar2022", "§4: groups of g columns share a scale and zero point")
AWQ = Source("lin2023awq", "§3: group-wise INT4 quantization")
QLORA = Source("dettmers2023", "§3: NF4 in blocks of 64, double quantization of the constants in blocks of 256")
INT8 = Source("dettmers2022", "§3.1: vector-wise quantization, one scale per row")
COMPRESSED = Source("compressedtensors", "pack-quantized: weight_packed int32, weight_scale per group, weight_shape")
MODELOPT = Source("modelopt", "NVFP4 and FP8 export: weight, weight_scale, weight_scale_2, input_scale")

weights = d_in * d_out

fp8_block = formula(
    "memory.weights.fp8_block",
    (weights + sp.ceiling(d_out / B_r) * sp.ceiling(d_in / B_c) * 4) * c_byte,
    "byte",
    "one matrix in block-scaled FP8: an E4M3 byte per weight and an fp32 scale per B_r×B_c block",
    sources=[TRANSFORMERS_FP8, FINEGRAINED],
    symbol_latex=r"M_{FP8}",
)
mxfp4 = formula(
    "memory.weights.mxfp4",
    (weights / 2 + weights / 32) * c_byte,
    "byte",
    "one matrix in MXFP4: two E2M1 weights a byte and an E8M0 scale byte per 32 inputs (4.25 bits a weight)",
    sources=[MX, GPT_OSS],
    symbol_latex=r"M_{MXFP4}",
)
gptq = formula(
    "memory.weights.gptq",
    (weights * n_bits / 8 + (d_in / G_q) * d_out * n_bits / 8 + (d_in / G_q) * d_out * 2 + 4 * d_in) * c_byte,
    "byte",
    "one matrix in GPTQ: n_bits a weight packed in int32, packed zero points and fp16 scales per group of G inputs and "
    "output, and an int32 group index per input",
    sources=[GPTQ],
    symbol_latex=r"M_{GPTQ}",
)
awq = formula(
    "memory.weights.awq",
    (weights * n_bits / 8 + (d_in / G_q) * d_out * n_bits / 8 + (d_in / G_q) * d_out * 2) * c_byte,
    "byte",
    "one matrix in AWQ's GEMM layout: n_bits a weight packed in int32, packed zero points and fp16 scales per group "
    "of G inputs and output",
    sources=[AWQ],
    symbol_latex=r"M_{AWQ}",
)
nf4 = formula(
    "memory.weights.nf4",
    (weights / 2 + sp.ceiling(weights / B_q) * 4 + 16 * 4) * c_byte,
    "byte",
    "one matrix in bitsandbytes' 4-bit format: two weights a byte, an fp32 absmax per block of B_q, the 16 code values",
    sources=[QLORA],
    symbol_latex=r"M_{NF4}",
)
nf4_double = formula(
    "memory.weights.nf4.double",
    (weights / 2 + sp.ceiling(weights / B_q) + sp.ceiling(sp.ceiling(weights / B_q) / B_q2) * 4 + 256 * 4 + 16 * 4) * c_byte,
    "byte",
    "the same with double quantization: each block's absmax in one byte, an fp32 per B_q2 of them, the 256-value "
    "code of the second level and the 16 of the first",
    sources=[QLORA],
    symbol_latex=r"M_{NF4}^{DQ}",
)
int8 = formula(
    "memory.weights.int8",
    (weights + 4 * d_out) * c_byte,
    "byte",
    "one matrix in LLM.int8(): an int8 a weight and an fp32 scale per output row (SCB)",
    sources=[INT8],
    symbol_latex=r"M_{int8}",
)
int_packed = formula(
    "memory.weights.int_packed",
    (weights * n_bits / 8 + d_out * (d_in / G_q) * 2 + 8) * c_byte,
    "byte",
    "one matrix in compressed-tensors' pack-quantized format (symmetric): n_bits a weight packed in int32, a 16-bit "
    "scale per group of G inputs and output, and the matrix's shape in two int32",
    sources=[COMPRESSED],
    symbol_latex=r"M_{pack}",
)
nvfp4 = formula(
    "memory.weights.nvfp4",
    (weights / 2 + weights / 16 + 2 * 4) * c_byte,
    "byte",
    "one matrix in NVFP4: two E2M1 weights a byte, an E4M3 scale per 16 inputs, an fp32 second-level weight scale "
    "and an fp32 input scale (4.5 bits a weight)",
    sources=[MODELOPT, COMPRESSED],
    symbol_latex=r"M_{NVFP4}",
)
fp8_tensor = formula(
    "memory.weights.fp8_tensor",
    (weights + 2 * 4) * c_byte,
    "byte",
    "one matrix in per-tensor FP8: an E4M3 byte per weight, an fp32 weight scale and an fp32 input scale",
    sources=[MODELOPT],
    symbol_latex=r"M_{FP8}^{tensor}",
)
