"""Lesson: your own formula. Your serving stack keeps the KV cache in int8 with a scale per token and head: what
does it hold, and how do you add that formula so it is checked, proved, rendered and computed like the built-in ones?

The prose's figures are the lesson's inputs (render/documents/figures.py), and its last sweep takes them from the same
object."""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("own_formula", model="llama2-70b", minutes=30, n=8, M_gpu=80 * 10**9, b=64)

CELLS = [
    markdown(F.text("""
# Your own formula: an int8 KV cache, checked, proved, rendered and computed

> *"Our inference servers store the KV cache in int8, with one fp32 scale per token, layer and
> key/value head. How much memory does {{model}}'s cache take at 4k tokens, and can our
> capacity docs and our tests use the same formula as the rest of the catalogue?"*

The catalogue's `memory.kv_cache` counts a 16-bit cache, 2·b·s·l·g·d_head·q bytes. Your stack's
cache is not in it, and it should not be: it is yours. This lesson puts it in a catalogue of
your own, step by step, with the same machinery the project uses for its own formulas:

1. register the formula with its unit and its source, and see a unit slip refused;
2. derive it from its parts and prove it, including how it relates to the built-in 16-bit cache;
3. prove it again in a pytest file, with the plugin's fixture;
4. render it (LaTeX, Markdown) and compile it into a NumPy function;
5. evaluate it over a sweep of contexts and batches, and draw the picture your capacity doc needs.

Everything below is the public library, `import llm_formulas as lf`, as you would use it in your
own package. Plan {{minutes}}.
""")),
    code("""
import sympy as sp

import llm_formulas as lf
from llm_formulas.formulas.vocabulary.symbols import b, c_byte, d_head, g, l, q, s

M = model("llama2-70b")
note(f"Llama-2-70B: l = {M['l']} layers, g = {M['g']} key/value heads of d_head = {M['d_head']} (grouped-query attention).")"""),
    markdown("""
## 1. A catalogue of your own, and a formula with its unit

A `Catalogue` holds your formulas, symbols, sources and models apart from the built-in ones;
nothing you register is seen by anyone else's catalogue. Every formula cites where it comes from,
so first the source: your own design document.
"""),
    code("""
ours = lf.Catalogue("our-serving")
ours.source("kv-int8-design", authors="The serving team", title="KV cache in int8 with per-head scales",
            date="2026", venue="internal design document")
design = ours.cite("kv-int8-design", "§3, the cache layout")
note(f"Cited as: *{design}*.")"""),
    markdown("""
Per token, layer and key/value head the cache holds d_head int8 values for K and as many for V,
one byte each, and one fp32 scale for each of the two: 4 bytes apiece. `c_byte` is the
catalogue's one-byte unit mark, so the expression states its unit. A formula declared in the
wrong unit is refused where it is registered, before anyone can use it:
"""),
    code("""
per_token_head = 2 * (d_head * c_byte + 4 * c_byte)   # K and V: int8 values and one fp32 scale each
try:
    ours.formula("ours.kv_cache.int8", b * s * l * g * per_token_head, "FLOP", "a slip", sources=[design])
except lf.DimensionError as error:
    note(f"Refused: *{error}*.")
kv_int8 = ours.formula(
    "ours.kv_cache.int8", b * s * l * g * per_token_head, "byte",
    "KV cache of b sequences of s tokens in int8, one fp32 scale per token, layer, key/value head and K or V",
    sources=[design], symbol_latex=r"M_{KV}^{int8}")
kv_int8"""),
    markdown("""
The last line of the cell is the formula itself: a `Formula` shows itself as an equation. Its
`expr` is plain SymPy without units (a number times symbols), its `unit` a separate attribute,
and the inputs it needs are listed:
"""),
    code("""note(f"`expr` = `{kv_int8.expr}`; unit: **{kv_int8.unit}**; inputs: {', '.join(x.name for x in kv_int8.required)}.")"""),
    markdown("""
## 2. Derive it from its parts, and tie it to the built-in cache

A stated formula is a claim; a derivation proves it. This is how the catalogue derives its own
16-bit cache, each step with the engine's verdict beside it:
"""),
    code("""derive("memory.kv_cache")"""),
    markdown("""
Build yours the same way, as you would explain it on a whiteboard: the values, the scales, their
sum, then `concludes`. Each step is checked by the engine (exactly, never at sample points), in
units too. The factory is registered with `@ours.derivation`, so it runs with your catalogue
active wherever it is called, and `llm-formulas check --module` finds it.
"""),
    code("""
@ours.derivation
def int8_cache() -> lf.Derivation:
    d = lf.Derivation("ours.kv_cache.int8", "The int8 KV cache with per-head scales")
    d.defines("M_values", 2 * b * s * l * g * d_head * c_byte, "K and V: d_head int8 values per token, layer and head")
    d.defines("M_scales", 2 * b * s * l * g * 4 * c_byte, "one fp32 scale for K and one for V, per token, layer and head")
    d.defines("M_{int8}", 2 * b * s * l * g * (d_head + 4) * c_byte, "the cache", parts=("M_values", "M_scales"))
    d.concludes("ours.kv_cache.int8")
    sixteen = lf.get("memory.kv_cache").dimensioned.subs(q, 2 * c_byte)   # the built-in cache, in bf16
    d.defines("M_16", sixteen, "the catalogue's 16-bit cache, 2 bytes per value")
    quotient = sp.Mul(2 * b * s * l * g * (d_head + 4) * c_byte, sp.Pow(sixteen, -1, evaluate=False), evaluate=False)
    d.defines("M_{int8}/M_16", quotient, "what int8 keeps of the 16-bit cache")
    d.equals("(d_head + 4)/(2·d_head)", (d_head + 4) / (2 * d_head), "b, s, l and g cancel")
    d.approximates("1/2", sp.Rational(1, 2), "half, when the scales are small beside the head",
                   condition=lf.much_greater(d_head, 4), dropped=2 / d_head)
    return d


derivation = int8_cache()
lf.assert_derivation(derivation)   # raises, naming the step, if anything is not proved
derive(derivation)                 # in a plain notebook, a Derivation as a cell's last line shows itself the same way"""),
    markdown("""
The derivation reads `memory.kv_cache`, the catalogue's own 16-bit cache, to relate the two: that
is allowed (a cross-check of two stated results). What is not allowed is reading the entry you
conclude: a derivation that defined `ours.kv_cache.int8` as `lf.get("ours.kv_cache.int8").expr`
would be refused as circular, whatever the order of the calls. Neither is a unit slip inside a
step: adding the scales in FLOP, or a 16-bit cache in parameters, fails the check with both units
named. `llm-formulas check --module your_package.kv` proves every derivation of a module of yours
the same way, in CI.

## 3. The same proof in pytest

In a test, the plugin that installs with the package gives each test a fresh catalogue
(`llm_catalogue`), so tests never see each other's registrations. The file below is what your
repository would hold; the cell runs it with pytest.
"""),
    code('''
import pathlib, subprocess, sys, tempfile

TEST = """
import llm_formulas as lf
from llm_formulas.formulas.vocabulary.symbols import b, c_byte, d_head, g, l, s


def test_int8_cache_is_half_the_bf16_one_plus_scales(llm_catalogue, llm_assert):
    llm_catalogue.source("kv-int8-design", authors="The serving team", title="KV cache in int8", date="2026")
    kv = lf.formula("ours.kv_cache.int8", 2 * b * s * l * g * (d_head + 4) * c_byte, "byte", "int8 cache",
                    sources=[lf.Source("kv-int8-design", "§3")])
    bf16 = lf.get("memory.kv_cache").expr.subs(lf.symbol("q"), 2)   # the catalogue's q: Symbol("q") would not match
    llm_assert.identity(kv.expr - bf16 / 2, 8 * b * s * l * g)   # the scales: 8 bytes per token, layer and head
"""
folder = pathlib.Path(tempfile.mkdtemp(prefix="own-formula-"))
(folder / "test_kv_int8.py").write_text(TEST)
run = subprocess.run([sys.executable, "-m", "pytest", "-q", "--color=no", "-p", "no:cacheprovider", "-p", "no:xdist", str(folder)],
                     capture_output=True, text=True)
note(f"pytest: **{run.stdout.strip().splitlines()[-1].split(' in ')[0]}**.")'''),
    markdown("""
## 4. Render it, and compile it

The formula prints itself from the expression that computes it, as LaTeX for a paper and as
Markdown for a design document or a wiki page:
"""),
    code("""
note("```\\n" + lf.latex(kv_int8) + "\\n```")
note(lf.markdown(kv_int8))"""),
    markdown("""
`lf.numpy_function` compiles the formula into a vectorised NumPy function (the same printer that
writes the project's generated module): arguments by name, scalars or arrays, float64 results, and
a docstring that states the formula, the unit of every argument and the source.
"""),
    code("""
cache_bytes = lf.numpy_function(kv_int8)
bf16_bytes = lf.numpy_function("memory.kv_cache")
print(cache_bytes.__doc__.splitlines()[0])
exact = int(lf.evaluate(kv_int8, b=1, s=4096, l=M["l"], g=M["g"], d_head=M["d_head"]))
fast = cache_bytes(b=1, s=4096, l=M["l"], g=M["g"], d_head=M["d_head"])
note(f"One 4096-token sequence of Llama-2-70B: **{exact / 10**9:.3g} GB** in int8 ({exact:,} bytes exactly; "
     f"the compiled function gives {fast:,.0f}) against "
     f"{bf16_bytes(b=1, s=4096, l=M['l'], g=M['g'], d_head=M['d_head'], q=2) / 1e9:.3g} GB in bf16.")"""),
    markdown(F.text("""
## 5. A sweep, and the picture for the capacity doc

The compiled function takes arrays: every (batch, context) pair at once. On one {{M_gpu}} GPU with
{{model}}'s weights spread over {{n}} GPUs (2·Ψ/{{n}} bytes each) and the cache split by heads, how
long may the context grow at a batch of {{b}}?
""")),
    code(F.code("""
import numpy as np
import matplotlib.pyplot as plt

contexts = np.array([1024, 2048, 4096, 8192, 16384, 32768])
batch, gpus = {{b}}, {{n}}
free_per_gpu = {{M_gpu}} - 2 * M["P"] / gpus
shape = dict(l=M["l"], g=M["g"], d_head=M["d_head"])
int8_gb = cache_bytes(b=batch, s=contexts, **shape) / gpus / 1e9      # the cache split over the GPUs by heads
bf16_gb = bf16_bytes(b=batch, s=contexts, q=2, **shape) / gpus / 1e9
figure, axes = plt.subplots(figsize=(6.4, 3.6))
axes.plot(contexts, bf16_gb, "o-", label="bf16 cache (memory.kv_cache)")
axes.plot(contexts, int8_gb, "s-", label="int8 cache with scales (ours.kv_cache.int8)")
axes.axhline(free_per_gpu / 1e9, color="grey", linestyle="--", label="free beside the weights")
axes.set_xscale("log", base=2)
axes.set_xlabel("context (tokens)")
axes.set_ylabel(f"GB per GPU, batch of {batch}")
axes.set_title("{{model}} on {{n}} × {{M_gpu:text}}: the KV cache per GPU")
axes.legend(loc="upper left", fontsize=8)
figure.tight_layout()
show(figure)
longest_int8 = int(contexts[int8_gb < free_per_gpu / 1e9].max())
longest_bf16 = int(contexts[bf16_gb < free_per_gpu / 1e9].max())
note(f"Beside the weights each GPU has {free_per_gpu / 1e9:.3g} GB. At a batch of {batch} the bf16 cache fits up to "
     f"{longest_bf16:,} tokens of context, the int8 cache up to {longest_int8:,}: "
     f"{longest_int8 // longest_bf16}× the context on the same GPUs.")""")),
    markdown("""
## What you have now

A formula of your own, with its unit checked where it was registered, its derivation proved
step by step and tied to the catalogue's 16-bit cache, a pytest file that proves it in CI, its
LaTeX and Markdown rendered from the same expression, and a vectorised function for sweeps,
all from one definition. Put the catalogue in a module of your package (`our_serving/kv.py`),
run `llm-formulas check --module our_serving.kv` in CI, and import the module wherever you size.

## Exercise

The same bookkeeping, for the built-in 16-bit cache: type your answer in GiB.
"""),
    code("""exercise("memory.kv_gqa")"""),
    code("""
answer = None  # GiB
check("memory.kv_gqa", answer)"""),
]
