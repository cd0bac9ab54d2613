"""The works the catalogue cites, and ``Source``: a work and the place in it.

Every formula, symbol, worked example and refutation names its sources as
``Source(key, where)``: ``key`` is an entry of ``WORKS`` below and ``where``
the section, table or equation. ``str(Source("narayanan2021", "§5.1"))`` is
the short citation a reader sees, "Narayanan et al. 2021, §5.1"; the
documents link it to the full entry of their References section.

Kinds of work: the four seed articles this project started from (each with
its author, original title and an English translation, publisher or course,
and date, as SOURCES.md gives them; "undated" where the article prints none),
papers (authors, title, venue, year, arXiv id), vendor datasheets (vendor,
document, date) and software (project, version, the module cited).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from llm_formulas.formulas.vocabulary import scope

__all__ = ["Source", "Work", "WORKS", "cited", "work"]

Kind = Literal["seed", "paper", "datasheet", "software"]


@dataclass(frozen=True)
class Work:
    """One entry of the bibliography."""

    key: str
    kind: Kind
    short: str  # the citation label: "Narayanan et al. 2021", "Yu 2024 (000)"
    authors: str
    title: str
    venue: str  # journal, conference, publisher, course, or vendor
    date: str
    title_en: str = ""  # English title of a work in another language
    arxiv: str = ""
    url: str = ""

    @property
    def anchor(self) -> str:
        """The id of the entry in a document's References section."""
        return "ref-" + self.key

    @property
    def seed(self) -> str:
        """The seed article's number (``000``), or ``""`` for any other work."""
        return self.key if self.kind == "seed" else ""


WORKS: dict[str, Work] = {}


def _work(key: str, kind: Kind, short: str, authors: str, title: str, venue: str, date: str, **more: str) -> None:
    if key in WORKS:
        raise ValueError(f"bibliography key {key!r} used twice")
    WORKS[key] = Work(key, kind, short, authors, title, venue, date, **more)


# --- the seed articles (SOURCES.md, "Bibliography of the seeds") ----------------------------
_work(
    "000", "seed", "Yu 2024 (000)", "郁晨 (Yu Chen), Bilibili system department server team",
    "万字长文解析：大模型需要怎样的硬件算力", "published online", "2024-07-30",
    title_en="What hardware compute do large models need: a long-form analysis",
)
_work(
    "001", "seed", "Li Bojie (001)", "李博杰 (Li Bojie)",
    "大模型训练：为何A100更胜4090一筹？", "essay", "undated",
    title_en="Training large models: why the A100 beats the 4090",
)
_work(
    "002", "seed", "Anon. (002)", "unsigned",
    "大模型训练资源评估：算力与显存需求详解", "article", "undated",
    title_en="Estimating the resources to train a large model: compute and memory in detail",
)
_work(
    "004", "seed", "Li Wei (004)", "李威 (Li Wei), Institute of Computing Technology, Chinese Academy of Sciences",
    "《智能计算系统：从深度学习到大模型》第2版课件，第九章 大模型计算系统",
    "lecture slides of the textbook course", "undated",
    title_en="AI Computing Systems: from Deep Learning to Large Models, 2nd ed., lecture slides, "
    "chapter 9, Large-model computing systems",
)

# --- papers ---------------------------------------------------------------------------------
_work(
    "narayanan2021", "paper", "Narayanan et al. 2021",
    "Deepak Narayanan, Mohammad Shoeybi, Jared Casper, Patrick LeGresley, Mostofa Patwary, Vijay Korthikanti, "
    "Dmitri Vainbrand, Prethvi Kashinkunti, Julie Bernauer, Bryan Catanzaro, Amar Phanishayee, Matei Zaharia",
    "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", "SC '21", "2021",
    arxiv="2104.04473",
)
_work(
    "korthikanti2022", "paper", "Korthikanti et al. 2022",
    "Vijay Korthikanti, Jared Casper, Sangkug Lym, Lawrence McAfee, Michael Andersch, Mohammad Shoeybi, Bryan Catanzaro",
    "Reducing Activation Recomputation in Large Transformer Models", "MLSys 2023", "2022", arxiv="2205.05198",
)
_work(
    "rajbhandari2020", "paper", "Rajbhandari et al. 2020",
    "Samyam Rajbhandari, Jeff Rasley, Olatunji Ruwase, Yuxiong He",
    "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", "SC20", "2020", arxiv="1910.02054",
)
_work(
    "ren2021", "paper", "Ren et al. 2021",
    "Jie Ren, Samyam Rajbhandari, Reza Yazdani Aminabadi, Olatunji Ruwase, Shuangyan Yang, Minjia Zhang, Dong Li, Yuxiong He",
    "ZeRO-Offload: Democratizing Billion-Scale Model Training", "USENIX ATC '21", "2021", arxiv="2101.06840",
)
_work(
    "dao2022", "paper", "Dao et al. 2022", "Tri Dao, Daniel Y. Fu, Stefano Ermon, Atri Rudra, Christopher Ré",
    "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness", "NeurIPS 2022", "2022",
    arxiv="2205.14135",
)
_work(
    "hoffmann2022", "paper", "Hoffmann et al. 2022", "Jordan Hoffmann, Sebastian Borgeaud, Arthur Mensch, et al.",
    "Training Compute-Optimal Large Language Models", "NeurIPS 2022", "2022", arxiv="2203.15556",
)
_work(
    "chowdhery2022", "paper", "Chowdhery et al. 2022", "Aakanksha Chowdhery, Sharan Narang, Jacob Devlin, et al.",
    "PaLM: Scaling Language Modeling with Pathways", "JMLR 24", "2022", arxiv="2204.02311",
)
_work(
    "touvron2023a", "paper", "Touvron et al. 2023a", "Hugo Touvron, Thibaut Lavril, Gautier Izacard, et al.",
    "LLaMA: Open and Efficient Foundation Language Models", "arXiv preprint", "2023", arxiv="2302.13971",
)
_work(
    "touvron2023b", "paper", "Touvron et al. 2023b", "Hugo Touvron, Louis Martin, Kevin Stone, et al.",
    "Llama 2: Open Foundation and Fine-Tuned Chat Models", "arXiv preprint", "2023", arxiv="2307.09288",
)
_work(
    "dubey2024", "paper", "Llama Team 2024", "Llama Team, AI @ Meta (Abhimanyu Dubey et al.)",
    "The Llama 3 Herd of Models", "arXiv preprint", "2024", arxiv="2407.21783",
)
_work(
    "deepseek2024", "paper", "DeepSeek-AI 2024", "DeepSeek-AI", "DeepSeek-V3 Technical Report", "arXiv preprint", "2024",
    arxiv="2412.19437",
)
_work(
    "luccioni2022", "paper", "Luccioni et al. 2022", "Alexandra Sasha Luccioni, Sylvain Viguier, Anne-Laure Ligozat",
    "Estimating the Carbon Footprint of BLOOM, a 176B Parameter Language Model", "JMLR 24", "2022", arxiv="2211.02001",
)
_work(
    "tang2021", "paper", "Tang et al. 2021", "Hanlin Tang, Shaoduo Gan, Ammar Ahmad Awan, Samyam Rajbhandari, et al.",
    "1-bit Adam: Communication Efficient Large-Scale Training with Adam's Convergence Speed", "ICML 2021", "2021",
    arxiv="2102.02888",
)
_work(
    "young1974", "paper", "Young 1974", "John W. Young",
    "A first order approximation to the optimum checkpoint interval", "Communications of the ACM 17(9)", "1974",
)
_work(
    "daly2006", "paper", "Daly 2006", "John T. Daly",
    "A higher order estimate of the optimum checkpoint interval for restart dumps", "Future Generation Computer Systems 22(3)",
    "2006",
)
_work(
    "kaplan2020", "paper", "Kaplan et al. 2020",
    "Jared Kaplan, Sam McCandlish, Tom Henighan, Tom B. Brown, Benjamin Chess, Rewon Child, Scott Gray, Alec Radford, "
    "Jeffrey Wu, Dario Amodei",
    "Scaling Laws for Neural Language Models", "arXiv preprint", "2020", arxiv="2001.08361",
)
_work(
    "shazeer2020", "paper", "Shazeer 2020", "Noam Shazeer", "GLU Variants Improve Transformer", "arXiv preprint", "2020",
    arxiv="2002.05202",
)
_work(
    "ainslie2023", "paper", "Ainslie et al. 2023",
    "Joshua Ainslie, James Lee-Thorp, Michiel de Jong, Yury Zemlyanskiy, Federico Lebrón, Sumit Sanghai",
    "GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints", "EMNLP 2023", "2023",
    arxiv="2305.13245",
)
_work(
    "fedus2021", "paper", "Fedus et al. 2021", "William Fedus, Barret Zoph, Noam Shazeer",
    "Switch Transformers: Scaling to Trillion Parameter Models with Simple and Efficient Sparsity",
    "Journal of Machine Learning Research 23", "2021", arxiv="2101.03961",
)
_work(
    "jiang2024", "paper", "Jiang et al. 2024", "Albert Q. Jiang et al. (Mistral AI)", "Mixtral of Experts",
    "arXiv preprint", "2024", arxiv="2401.04088",
)
_work(
    "vaswani2017", "paper", "Vaswani et al. 2017",
    "Ashish Vaswani, Noam Shazeer, Niki Parmar, Jakob Uszkoreit, Llion Jones, Aidan N. Gomez, Łukasz Kaiser, Illia Polosukhin",
    "Attention Is All You Need", "NeurIPS 2017", "2017", arxiv="1706.03762",
)
_work(
    "brown2020", "paper", "Brown et al. 2020", "Tom B. Brown et al. (OpenAI)", "Language Models are Few-Shot Learners",
    "NeurIPS 2020", "2020", arxiv="2005.14165",
)
_work(
    "williams2009", "paper", "Williams et al. 2009", "Samuel Williams, Andrew Waterman, David Patterson",
    "Roofline: An Insightful Visual Performance Model for Multicore Architectures",
    "Communications of the ACM 52(4), 65–76", "2009",
)
_work(
    "amdahl1967", "paper", "Amdahl 1967", "Gene M. Amdahl",
    "Validity of the Single Processor Approach to Achieving Large Scale Computing Capabilities",
    "AFIPS Spring Joint Computer Conference", "1967",
)
_work(
    "sanders2009", "paper", "Sanders et al. 2009", "Peter Sanders, Jochen Speck, Jesper Larsson Träff",
    "Two-tree algorithms for full bandwidth broadcast, reduction and scan", "Parallel Computing 35(12), 581–594", "2009",
)
_work(
    "jeaugey2019", "paper", "Jeaugey 2019", "Sylvain Jeaugey", "Massively Scale Your Deep Learning Training with NCCL 2.4",
    "NVIDIA Technical Blog", "2019-02",
)
_work(
    "shoeybi2019", "paper", "Shoeybi et al. 2019",
    "Mohammad Shoeybi, Mostofa Patwary, Raul Puri, Patrick LeGresley, Jared Casper, Bryan Catanzaro",
    "Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism", "arXiv preprint", "2019",
    arxiv="1909.08053",
)
_work(
    "dao2023", "paper", "Dao 2023", "Tri Dao",
    "FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning", "ICLR 2024", "2023",
    arxiv="2307.08691",
)
_work(
    "shah2024", "paper", "Shah et al. 2024", "Jay Shah, Ganesh Bikshandi, Ying Zhang, Vijay Thakkar, Pradeep Ramani, Tri Dao",
    "FlashAttention-3: Fast and Accurate Attention with Asynchrony and Low-precision", "NeurIPS 2024", "2024",
    arxiv="2407.08608",
)
_work(
    "jia2018", "paper", "Jia et al. 2018", "Xianyan Jia, Shutao Song, Wei He, Yangzihao Wang, Haidong Rong et al.",
    "Highly Scalable Deep Learning Training System with Mixed-Precision: Training ImageNet in Four Minutes",
    "arXiv preprint", "2018", arxiv="1807.11205",
)
_work(
    "li2020", "paper", "Li et al. 2020", "Shen Li, Yanli Zhao, Rohan Varma, Omkar Salpekar, Pieter Noordhuis et al.",
    "PyTorch Distributed: Experiences on Accelerating Data Parallel Training", "VLDB 2020", "2020", arxiv="2006.15704",
)
_work(
    "wang2023", "paper", "Wang et al. 2023",
    "Guanhua Wang, Heyang Qin, Sam Ade Jacobs, Connor Holmes, Samyam Rajbhandari, Olatunji Ruwase, Feng Yan, Lei Yang, "
    "Yuxiong He",
    "ZeRO++: Extremely Efficient Collective Communication for Giant Model Training", "arXiv preprint", "2023",
    arxiv="2306.10209",
)
_work(
    "smith2022", "paper", "Smith et al. 2022", "Shaden Smith, Mostofa Patwary, Brandon Norick, Patrick LeGresley et al.",
    "Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B, A Large-Scale Generative Language Model",
    "arXiv preprint", "2022", arxiv="2201.11990",
)
_work(
    "bigscience2022", "paper", "BigScience 2022", "BigScience Workshop (Teven Le Scao et al.)",
    "BLOOM: A 176B-Parameter Open-Access Multilingual Language Model", "arXiv preprint", "2022", arxiv="2211.05100",
)
_work(
    "megatron-lm-2021", "software", "Megatron-LM 2021", "NVIDIA",
    "Megatron-LM, the April 2021 release of Narayanan et al. 2021 (commit 50a4b5fa02): megatron/training.py, "
    "megatron/p2p_communication.py, megatron/optimizer/optimizer.py", "github.com/NVIDIA/Megatron-LM", "2021",
)
_work(
    "megatron-lm-2022", "software", "Megatron-LM 2022", "NVIDIA",
    "Megatron-LM as of Korthikanti et al. 2022 (commit 841f789f48): megatron/mpu/layers.py, "
    "LinearWithGradAccumulationAndAsyncAllreduce", "github.com/NVIDIA/Megatron-LM", "2022",
)
_work(
    "pytorch-ddp", "software", "PyTorch DDP 2020", "the PyTorch distributed team",
    "torch.nn.parallel.DistributedDataParallel, gradient_as_bucket_view (pytorch/pytorch#41954, \"Make grad point to "
    "bucket buffer in DDP to save memory usage\": off by default; on, a model's peak memory drops by its gradients' size)",
    "github.com/pytorch/pytorch", "2020",
)
_work(
    "deepspeed-pipe", "software", "DeepSpeed pipeline engine", "Microsoft DeepSpeed team",
    "DeepSpeed, deepspeed/runtime/pipe/engine.py, schedule.py and p2p.py (PipelineEngine, TrainSchedule)",
    "github.com/microsoft/DeepSpeed", "undated",
)
_work(
    "bigscience-tr11", "software", "BigScience tr11 logs", "BigScience Workshop",
    "bigscience-workshop/bigscience, train/tr11-176B-ml/README.md and chronicles.md (BLOOM-176B training logs)",
    "github.com/bigscience-workshop/bigscience", "2022",
)
_work(
    "nvidia-gemm", "datasheet", "NVIDIA GEMM guide", "NVIDIA",
    "Matrix Multiplication Background User's Guide (Deep Learning Performance Documentation)", "NVIDIA", "undated",
)
_work(
    "nccl-tests", "software", "nccl-tests", "NVIDIA", "nccl-tests, doc/PERFORMANCE.md (algorithm and bus bandwidth)",
    "github.com/NVIDIA/nccl-tests", "undated",
)
_work(
    "aiconfigurator", "software", "AIConfigurator 0.12.0 collected op tables", "NVIDIA",
    "aiconfigurator-core 0.12.0 (PyPI, Apache-2.0): the measured per-operation latencies under "
    "aiconfigurator_core/systems/data/<system>/<op>/<backend>/<version>/ (GEMM, context and generation attention, "
    "quantize, NCCL and custom all-reduce)", "github.com/ai-dynamo/aiconfigurator", "2026",
    url="https://pypi.org/project/aiconfigurator-core/0.12.0/",
)
_work(
    "deepspeed", "software", "DeepSpeed docs", "Microsoft DeepSpeed team",
    "DeepSpeed documentation: ZeRO configuration (overlap_comm, reduce_bucket_size, stage3_prefetch_bucket_size)",
    "deepspeed.ai", "undated",
)

_work(
    "rajbhandari2022", "paper", "Rajbhandari et al. 2022",
    "Samyam Rajbhandari, Conglong Li, Zhewei Yao, Minjia Zhang, Reza Yazdani Aminabadi, Ammar Ahmad Awan, Jeff Rasley, "
    "Yuxiong He",
    "DeepSpeed-MoE: Advancing Mixture-of-Experts Inference and Training to Power Next-Generation AI Scale", "ICML 2022",
    "2022", arxiv="2201.05596",
)
_work(
    "liu2023", "paper", "Liu et al. 2023", "Hao Liu, Matei Zaharia, Pieter Abbeel",
    "Ring Attention with Blockwise Transformers for Near-Infinite Context", "ICLR 2024", "2023", arxiv="2310.01889",
)
_work(
    "micikevicius2022", "paper", "Micikevicius et al. 2022",
    "Paulius Micikevicius, Dusan Stosic, Neil Burgess, Marius Cornea, Pradeep Dubey, Richard Grisenthwaite, Sangwon Ha, "
    "Alexander Heinecke, Patrick Judd, John Kamalu, Naveen Mellempudi, Stuart Oberman, Mohammad Shoeybi, Michael Siu, "
    "Hao Wu",
    "FP8 Formats for Deep Learning", "arXiv preprint", "2022", arxiv="2209.05433",
)
_work(
    "hu2021", "paper", "Hu et al. 2021",
    "Edward J. Hu, Yelong Shen, Phillip Wallis, Zeyuan Allen-Zhu, Yuanzhi Li, Shean Wang, Lu Wang, Weizhu Chen",
    "LoRA: Low-Rank Adaptation of Large Language Models", "ICLR 2022", "2021", arxiv="2106.09685",
)
_work(
    "dettmers2023", "paper", "Dettmers et al. 2023", "Tim Dettmers, Artidoro Pagnoni, Ari Holtzman, Luke Zettlemoyer",
    "QLoRA: Efficient Finetuning of Quantized LLMs", "NeurIPS 2023", "2023", arxiv="2305.14314",
)
_work(
    "dettmers2022", "paper", "Dettmers et al. 2022", "Tim Dettmers, Mike Lewis, Younes Belkada, Luke Zettlemoyer",
    "LLM.int8(): 8-bit Matrix Multiplication for Transformers at Scale", "NeurIPS 2022", "2022", arxiv="2208.07339",
)
_work(
    "compressedtensors", "software", "compressed-tensors", "Neural Magic and Red Hat (vLLM project)",
    "compressed-tensors: the safetensors layouts of quantized checkpoints (compressors/quantized_compressors: pack-quantized, "
    "nvfp4-pack-quantized)", "github.com/vllm-project/compressed-tensors", "undated",
)
_work(
    "modelopt", "software", "NVIDIA Model Optimizer", "NVIDIA",
    "Model Optimizer: the Hugging Face export of NVFP4 and FP8 checkpoints (weight, weight_scale, weight_scale_2, input_scale)",
    "github.com/NVIDIA/Model-Optimizer", "undated",
)
_work(
    "megatron-moe", "software", "Megatron Core MoE", "NVIDIA", "Megatron-LM, megatron/core/transformer/moe/README.md "
    "(Megatron Core MoE: expert parallelism, token dispatchers)", "github.com/NVIDIA/Megatron-LM", "undated",
)
_work(
    "megatron-cp", "software", "Megatron Core context parallelism", "NVIDIA",
    "Megatron Core developer guide: Context parallelism (context_parallel.html)", "docs.nvidia.com/megatron-core", "undated",
)
_work(
    "megatron-distopt", "software", "Megatron Core distributed optimizer", "NVIDIA",
    "Megatron Core developer guide: Distributed Optimizer (distrib_optimizer.html)", "docs.nvidia.com/megatron-core", "undated",
)
_work(
    "transformer-engine", "software", "Transformer Engine docs", "NVIDIA",
    "Transformer Engine documentation: Using FP8 with Transformer Engine", "docs.nvidia.com/deeplearning/transformer-engine",
    "undated",
)
_work(
    "peft", "software", "PEFT 0.21", "Sourab Mangrulkar, Sylvain Gugger, Lysandre Debut, Younes Belkada, Sayak Paul, "
    "Benjamin Bossan", "PEFT: State-of-the-art Parameter-Efficient Fine-Tuning methods (version 0.21, tuners/lora)",
    "github.com/huggingface/peft", "2022",
)

# --- vendor datasheets and reports ------------------------------------------------------------
_work(
    "nvidia-a100", "datasheet", "NVIDIA A100 datasheet", "NVIDIA", "NVIDIA A100 Tensor Core GPU datasheet",
    "NVIDIA", "rev. 4 (document 1758950-r4)",
)
_work("nvidia-h100", "datasheet", "NVIDIA H100 datasheet", "NVIDIA", "NVIDIA H100 Tensor Core GPU datasheet", "NVIDIA", "undated")
_work("nvidia-h200", "datasheet", "NVIDIA H200 datasheet", "NVIDIA", "NVIDIA H200 Tensor Core GPU datasheet", "NVIDIA", "undated")
_work(
    "nvidia-ada", "datasheet", "NVIDIA Ada whitepaper", "NVIDIA", "NVIDIA Ada GPU Architecture whitepaper",
    "NVIDIA", "2022",
)
_work(
    "nvidia-ga102", "datasheet", "NVIDIA GA102 whitepaper", "NVIDIA", "NVIDIA Ampere GA102 GPU Architecture whitepaper "
    "(V2.0, updated with the RTX A6000 and A40)", "NVIDIA", "2021",
    url="https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
)
_work(
    "nvidia-rtx3090ti", "datasheet", "NVIDIA RTX 3090 Ti", "NVIDIA", "GeForce RTX 3090 Ti specifications (product page and "
    "CES 2022 announcement: 40 shader TFLOPS, 320 tensor TFLOPS)", "NVIDIA", "2022",
    url="https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/rtx-3090-3090ti/",
)
_work(
    "nvidia-rtx-blackwell", "datasheet", "NVIDIA RTX Blackwell whitepaper", "NVIDIA",
    "NVIDIA RTX Blackwell GPU Architecture whitepaper (GeForce RTX 5090 specifications)", "NVIDIA", "2025",
    url="https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf",
)
_work(
    "nvidia-rtx-a6000", "datasheet", "NVIDIA RTX A6000 datasheet", "NVIDIA", "NVIDIA RTX A6000 datasheet", "NVIDIA", "2020",
    url="https://www.nvidia.com/en-us/design-visualization/rtx-a6000/",
)
_work("nvidia-l4", "datasheet", "NVIDIA L4 datasheet", "NVIDIA", "NVIDIA L4 Tensor Core GPU datasheet", "NVIDIA", "2023",
      url="https://www.nvidia.com/en-us/data-center/l4/")
_work("nvidia-l40s", "datasheet", "NVIDIA L40S datasheet", "NVIDIA", "NVIDIA L40S datasheet", "NVIDIA", "2023",
      url="https://www.nvidia.com/en-us/data-center/l40s/")
_work("nvidia-a10", "datasheet", "NVIDIA A10 datasheet", "NVIDIA", "NVIDIA A10 Tensor Core GPU datasheet", "NVIDIA", "2021",
      url="https://www.nvidia.com/en-us/data-center/products/a10-gpu/")
_work("aws-g5", "datasheet", "AWS EC2 G5", "Amazon Web Services", "Amazon EC2 G5 instances (NVIDIA A10G Tensor Core GPUs)",
      "AWS", "2021", url="https://aws.amazon.com/ec2/instance-types/g5/")
_work(
    "nvidia-blackwell", "datasheet", "NVIDIA Blackwell technical brief", "NVIDIA",
    "NVIDIA Blackwell Architecture Technical Brief (HGX B200 and GB200 NVL72 per-GPU specifications)", "NVIDIA", "2024",
    url="https://resources.nvidia.com/en-us-blackwell-architecture",
)
_work("nvidia-dgx-b200", "datasheet", "NVIDIA DGX B200 datasheet", "NVIDIA", "NVIDIA DGX B200 datasheet", "NVIDIA", "2024",
      url="https://www.nvidia.com/en-us/data-center/dgx-b200/")
_work("nvidia-gb200", "datasheet", "NVIDIA GB200 NVL72 datasheet", "NVIDIA", "NVIDIA GB200 NVL72 datasheet (specifications)",
      "NVIDIA", "2024", url="https://www.nvidia.com/en-us/data-center/gb200-nvl72/")
_work("amd-mi300x", "datasheet", "AMD MI300X datasheet", "AMD", "AMD Instinct MI300X accelerator data sheet", "AMD", "2023",
      url="https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html")
_work(
    "reuters-a800", "datasheet", "Reuters 2022 (A800)", "Reuters; NVIDIA statement",
    "NVIDIA offers the A800 in China, an A100 with NVLink cut from 600 to 400 GB/s", "news report", "2022-11",
)
_work(
    "reuters-h800", "datasheet", "Reuters 2023 (H800)", "Reuters; NVIDIA statement",
    "NVIDIA's H800 for China: an H100 SXM with NVLink cut from 900 to 400 GB/s", "news report", "2023-03",
)

# --- today's architectures (issue 13) ---------------------------------------------------------
_work(
    "deepseek2024v2", "paper", "DeepSeek-AI 2024 (V2)", "DeepSeek-AI",
    "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language Model", "arXiv preprint", "2024",
    arxiv="2405.04434",
)
_work(
    "jiang2023", "paper", "Jiang et al. 2023", "Albert Q. Jiang et al. (Mistral AI)", "Mistral 7B", "arXiv preprint", "2023",
    arxiv="2310.06825",
)
_work(
    "gemma2024", "paper", "Gemma Team 2024", "Gemma Team, Google DeepMind", "Gemma 2: Improving Open Language Models at a Practical Size",
    "arXiv preprint", "2024", arxiv="2408.00118",
)
_work(
    "gemma2025", "paper", "Gemma Team 2025", "Gemma Team, Google DeepMind", "Gemma 3 Technical Report", "arXiv preprint", "2025",
    arxiv="2503.19786",
)
_work(
    "openai2025", "paper", "OpenAI 2025", "OpenAI", "gpt-oss-120b & gpt-oss-20b Model Card", "arXiv preprint", "2025",
    arxiv="2508.10925",
)
_work(
    "xiao2023", "paper", "Xiao et al. 2023", "Guangxuan Xiao, Yuandong Tian, Beidi Chen, Song Han, Mike Lewis",
    "Efficient Streaming Language Models with Attention Sinks", "ICLR 2024", "2023", arxiv="2309.17453",
)
_work(
    "kwon2023", "paper", "Kwon et al. 2023",
    "Woosuk Kwon, Zhuohan Li, Siyuan Zhuang, Ying Sheng, Lianmin Zheng, Cody Hao Yu, Joseph E. Gonzalez, Hao Zhang, Ion Stoica",
    "Efficient Memory Management for Large Language Model Serving with PagedAttention", "SOSP '23", "2023", arxiv="2309.06180",
)
_work(
    "lepikhin2020", "paper", "Lepikhin et al. 2020",
    "Dmitry Lepikhin, HyoukJoong Lee, Yuanzhong Xu, Dehao Chen, Orhan Firat, Yanping Huang, Maxim Krikun, Noam Shazeer, Zhifeng Chen",
    "GShard: Scaling Giant Models with Conditional Computation and Automatic Sharding", "ICLR 2021", "2020", arxiv="2006.16668",
)

# --- the families of issue 28: state-space, recurrent and linear-attention layers, towers, quantized weights ---
_work(
    "gu2023", "paper", "Gu & Dao 2023", "Albert Gu, Tri Dao", "Mamba: Linear-Time Sequence Modeling with Selective State Spaces",
    "COLM 2024", "2023", arxiv="2312.00752",
)
_work(
    "dao2024", "paper", "Dao & Gu 2024", "Tri Dao, Albert Gu",
    "Transformers are SSMs: Generalized Models and Efficient Algorithms Through Structured State Space Duality", "ICML 2024", "2024",
    arxiv="2405.21060",
)
_work(
    "de2024", "paper", "De et al. 2024", "Soham De, Samuel L. Smith, Anushan Fernando, Aleksandar Botev, George Cristian-Muraru et al.",
    "Griffin: Mixing Gated Linear Recurrences with Local Attention for Efficient Language Models", "arXiv preprint", "2024",
    arxiv="2402.19427",
)
_work(
    "yang2024gdn", "paper", "Yang et al. 2024", "Songlin Yang, Jan Kautz, Ali Hatamizadeh",
    "Gated Delta Networks: Improving Mamba2 with Delta Rule", "ICLR 2025", "2024", arxiv="2412.06464",
)
_work(
    "lieber2024", "paper", "Lieber et al. 2024", "Opher Lieber, Barak Lenz, Hofit Bata et al. (AI21 Labs)",
    "Jamba: A Hybrid Transformer-Mamba Language Model", "arXiv preprint", "2024", arxiv="2403.19887",
)
_work(
    "nvidia2025h", "paper", "NVIDIA 2025 (Nemotron-H)", "NVIDIA", "Nemotron-H: A Family of Accurate and Efficient Hybrid "
    "Mamba-Transformer Models", "arXiv preprint", "2025", arxiv="2504.03624",
)
_work(
    "zhai2023", "paper", "Zhai et al. 2023", "Xiaohua Zhai, Basil Mustafa, Alexander Kolesnikov, Lucas Beyer",
    "Sigmoid Loss for Language Image Pre-Training (SigLIP)", "ICCV 2023", "2023", arxiv="2303.15343",
)
_work(
    "bai2025vl", "paper", "Bai et al. 2025", "Shuai Bai, Keqin Chen, Xuejing Liu et al. (Qwen Team)", "Qwen2.5-VL Technical Report",
    "arXiv preprint", "2025", arxiv="2502.13923",
)
_work(
    "frantar2022", "paper", "Frantar et al. 2022", "Elias Frantar, Saleh Ashkboos, Torsten Hoefler, Dan Alistarh",
    "GPTQ: Accurate Post-Training Quantization for Generative Pre-trained Transformers", "ICLR 2023", "2022", arxiv="2210.17323",
)
_work(
    "lin2023awq", "paper", "Lin et al. 2023", "Ji Lin, Jiaming Tang, Haotian Tang, Shang Yang et al.",
    "AWQ: Activation-aware Weight Quantization for LLM Compression and Acceleration", "MLSys 2024", "2023", arxiv="2306.00978",
)
_work(
    "ocp2023mx", "paper", "OCP 2023", "Open Compute Project (AMD, Arm, Intel, Meta, Microsoft, NVIDIA, Qualcomm)",
    "OCP Microscaling Formats (MX) Specification v1.0", "Open Compute Project", "2023",
    url="https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf",
)
# --- serving (issue 24): papers, engines and the published serving measurements ---------------
_work(
    "leviathan2023", "paper", "Leviathan et al. 2023", "Yaniv Leviathan, Matan Kalman, Yossi Matias",
    "Fast Inference from Transformers via Speculative Decoding", "ICML 2023", "2023", arxiv="2211.17192",
)
_work(
    "thakur2005", "paper", "Thakur et al. 2005", "Rajeev Thakur, Rolf Rabenseifner, William Gropp",
    "Optimization of Collective Communication Operations in MPICH", "International Journal of High Performance "
    "Computing Applications 19(1)", "2005",
)
_work(
    "yu2022", "paper", "Yu et al. 2022", "Gyeong-In Yu, Joo Seong Jeong, Geon-Woo Kim, Soojeong Kim, Byung-Gon Chun",
    "Orca: A Distributed Serving System for Transformer-Based Generative Models", "OSDI '22", "2022",
)
_work(
    "agrawal2024", "paper", "Agrawal et al. 2024",
    "Amey Agrawal, Nitin Kedia, Ashish Panwar, Jayashree Mohan, Nipun Kwatra, Bhargav S. Gulavani, Alexey Tumanov, "
    "Ramachandran Ramjee",
    "Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve", "OSDI '24", "2024", arxiv="2403.02310",
)
_work(
    "zhong2024", "paper", "Zhong et al. 2024",
    "Yinmin Zhong, Shengyu Liu, Junda Chen, Jianbo Hu, Yibo Zhu, Xuanzhe Liu, Xin Jin, Hao Zhang",
    "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized Large Language Model Serving", "OSDI '24",
    "2024", arxiv="2401.09670",
)
_work(
    "little1961", "paper", "Little 1961", "John D. C. Little", "A Proof for the Queuing Formula: L = λW",
    "Operations Research 9(3)", "1961",
)
_work(
    "trtllm-0.8", "software", "TensorRT-LLM 0.8 performance tables", "NVIDIA",
    "TensorRT-LLM documentation, docs/source/performance.md ('All data was generated using version 0.8.0'): "
    "Peak Throughput and Low Latency tables, gptSessionBenchmark", "github.com/NVIDIA/TensorRT-LLM", "2024",
    url="https://github.com/NVIDIA/TensorRT-LLM/blob/v0.8.0/docs/source/performance.md",
)
_work(
    "trtllm-0.6", "software", "TensorRT-LLM 0.6.1 performance tables", "NVIDIA",
    "TensorRT-LLM documentation, docs/source/performance.md at commit 138f96d45f90 ('updated for v0.6.1'; low-latency "
    "tables from v0.5)", "github.com/NVIDIA/TensorRT-LLM", "2023",
    url="https://github.com/NVIDIA/TensorRT-LLM/blob/138f96d45f90b9667426f7c47297d8c06bafac73/docs/source/performance.md",
)
_work(
    "fastertransformer", "software", "FasterTransformer GPT guide", "NVIDIA",
    "FasterTransformer, docs/gpt_guide.md, Performance (commit df4a753486)",
    "github.com/NVIDIA/FasterTransformer", "2022",
    url="https://github.com/NVIDIA/FasterTransformer/blob/df4a7534860137e060e18d2ebf019906120ea204/docs/gpt_guide.md",
)
_work(
    "lmdeploy-0.1", "software", "LMDeploy v0.1.0a1 benchmark", "InternLM / Shanghai AI Laboratory",
    "LMDeploy, docs/en/benchmark/a100_fp16.md, static inference benchmark (commit 3e391df467)",
    "github.com/InternLM/lmdeploy", "2023",
    url="https://github.com/InternLM/lmdeploy/blob/3e391df4673326f79363eebe030876861a9b7090/docs/en/benchmark/a100_fp16.md",
)
_work(
    "gpt-fast", "software", "gpt-fast", "PyTorch team",
    "gpt-fast, README.md Benchmarks and quantize.py (commit 0f925b5d4c)",
    "github.com/pytorch-labs/gpt-fast", "2023",
    url="https://github.com/pytorch-labs/gpt-fast/blob/0f925b5d4ce457b89a7ca6c9ce50f42bf2576945/README.md",
)
_work(
    "nim-1.8", "software", "NVIDIA NIM 1.8 benchmarks", "NVIDIA",
    "NIM for LLMs benchmarking guide, Performance: Llama-3.3-70B-Instruct, NIM 1.8.0, 2 × H100 80 GB, FP8 TP2",
    "docs.nvidia.com", "2025", url="https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance.md",
)
_work(
    "vllm", "software", "vLLM", "vLLM project",
    "vLLM, vllm/worker (profile_run: the peak activation memory of a forward of max_num_batched_tokens tokens is "
    "reserved before the KV blocks; block_size 16)", "github.com/vllm-project/vllm", "2024",
)
_work(
    "gpu-prices-2026", "datasheet", "pricegpu 2026", "pricegpu.pages.dev",
    "H100 vs A100 Cloud Pricing: typical on-demand ranges early 2026 (A100 80GB SXM $1.49-2.49/h, H100 SXM 80GB "
    "$2.49-3.99/h; Lambda, CoreWeave, vast.ai, RunPod)", "web page", "2026",
    url="https://pricegpu.pages.dev/blog/h100-vs-a100-cloud-price",
)

# --- software, cited as the implementation a formula is measured against ---------------------
_work(
    "transformers", "software", "transformers 5.24", "Thomas Wolf et al. (Hugging Face)",
    "Transformers: State-of-the-Art Natural Language Processing (version 5.24, models/<family>/modeling_<family>.py)",
    "EMNLP 2020 System Demonstrations", "2020", arxiv="1910.03771",
)
_work(
    "pytorch", "software", "PyTorch 2.13", "Adam Paszke et al.",
    "PyTorch: An Imperative Style, High-Performance Deep Learning Library (version 2.13, torch.utils.flop_counter)",
    "NeurIPS 2019", "2019", arxiv="1912.01703",
)


# --- the frameworks and the other calculators, as their code holds memory (issue 25) -----------------
_work(
    "megatron-core", "software", "Megatron Core 2026", "NVIDIA",
    "Megatron-LM and Megatron Core at commit d98e8a64dd (22 August 2026): megatron/core/distributed/param_and_grad_buffer.py, "
    "megatron/core/optimizer/distrib_optimizer.py, megatron/core/fusions/fused_bias_swiglu.py, "
    "megatron/core/tensor_parallel/cross_entropy.py, megatron/core/transformer/moe/, megatron/training/arguments.py",
    "github.com/NVIDIA/Megatron-LM", "2026",
)
_work(
    "megatron-estimator", "software", "Megatron-LM theoretical memory", "NVIDIA",
    "Megatron-LM, megatron/training/theoretical_memory_usage.py (compute_weight_and_optimizer_memory, "
    "compute_activation_memory, compute_activation_memory_without_sp) and megatron/training/training.py "
    "(num_floating_point_operations), at commit d98e8a64dd", "github.com/NVIDIA/Megatron-LM", "2026",
)
_work(
    "deepspeed-zero", "software", "DeepSpeed ZeRO 0.16", "Microsoft DeepSpeed team",
    "DeepSpeed 0.16.5 (commit 38327e07f6): deepspeed/runtime/zero/stage_1_and_2.py (estimate_zero2_model_states_mem_needs, "
    "the optimizer step), deepspeed/runtime/zero/stage3.py (estimate_zero3_model_states_mem_needs)",
    "github.com/microsoft/DeepSpeed", "2025",
)
_work(
    "llm-analysis", "software", "llm-analysis", "Cheng Li",
    "llm-analysis: Latency and Memory Analysis of Transformer Models for Training and Inference, llm_analysis/analysis.py "
    "at commit d841e40aec", "github.com/cli99/llm-analysis", "2024",
)
_work(
    "anthony2023", "software", "Anthony et al. 2023", "Quentin Anthony, Stella Biderman, Hailey Schoelkopf",
    "Transformer Math 101", "EleutherAI blog", "2023", url="https://blog.eleuther.ai/transformer-math/",
)
_work(
    "eleuther-cookbook", "software", "EleutherAI cookbook", "EleutherAI",
    "cookbook, calc/calc_transformer_mem.py (calc_mem) at commit 827ee3b293", "github.com/EleutherAI/cookbook", "2026",
)
_work(
    "pytorch-fsdp", "software", "PyTorch FSDP", "the PyTorch distributed team",
    "torch.distributed.fsdp: ShardingStrategy, MixedPrecision, BackwardPrefetch (fsdp/api.py) and FSDP2's "
    "MixedPrecisionPolicy (fsdp/_fully_shard/_fsdp_api.py)", "github.com/pytorch/pytorch", "2023",
)
_work(
    "hf-memory-anatomy", "software", "transformers docs: model memory anatomy", "Hugging Face",
    "transformers documentation, docs/source/en/model_memory_anatomy.md (\"Anatomy of Model's Memory\") at commit 7d5e65fe8a",
    "github.com/huggingface/transformers", "undated",
)
_work(
    "accelerate", "software", "accelerate", "Sylvain Gugger, Lysandre Debut, Thomas Wolf, Philipp Schmid, Zachary Mueller, "
    "Sourab Mangrulkar, Marc Sun, Benjamin Bossan",
    "Accelerate: Training and inference at scale made simple, efficient and adaptable (utils/dataclasses.py, "
    "DistributedDataParallelKwargs)", "github.com/huggingface/accelerate", "2022",
)


# Where to read the works that have no arXiv id (issue 26: a bibliography one can follow): the DOIs of the journal and
# conference papers, the repositories of the software, the vendors' pages of the datasheets and documentation.
# The seed articles and the two news reports have none on record: the copies the project cites carry no address.
URLS = {
    "young1974": "https://doi.org/10.1145/361147.361115",
    "daly2006": "https://doi.org/10.1016/j.future.2004.11.016",
    "williams2009": "https://doi.org/10.1145/1498765.1498785",
    "amdahl1967": "https://doi.org/10.1145/1465482.1465560",
    "sanders2009": "https://doi.org/10.1016/j.parco.2009.09.001",
    "jeaugey2019": "https://developer.nvidia.com/blog/massively-scale-deep-learning-training-nccl-2-4/",
    "megatron-lm-2021": "https://github.com/NVIDIA/Megatron-LM",
    "megatron-lm-2022": "https://github.com/NVIDIA/Megatron-LM",
    "megatron-moe": "https://github.com/NVIDIA/Megatron-LM",
    "compressedtensors": "https://github.com/vllm-project/compressed-tensors",
    "modelopt": "https://github.com/NVIDIA/Model-Optimizer",
    "pytorch-ddp": "https://github.com/pytorch/pytorch",
    "deepspeed-pipe": "https://github.com/microsoft/DeepSpeed",
    "bigscience-tr11": "https://github.com/bigscience-workshop/bigscience",
    "nccl-tests": "https://github.com/NVIDIA/nccl-tests",
    "peft": "https://github.com/huggingface/peft",
    "deepspeed": "https://www.deepspeed.ai/docs/config-json/",
    "megatron-cp": "https://docs.nvidia.com/megatron-core/developer-guide/latest/",
    "megatron-distopt": "https://docs.nvidia.com/megatron-core/developer-guide/latest/",
    "transformer-engine": "https://docs.nvidia.com/deeplearning/transformer-engine/",
    "nvidia-gemm": "https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html",
    "nvidia-a100": "https://www.nvidia.com/en-us/data-center/a100/",
    "nvidia-h100": "https://www.nvidia.com/en-us/data-center/h100/",
    "nvidia-h200": "https://www.nvidia.com/en-us/data-center/h200/",
    "nvidia-ada": "https://www.nvidia.com/en-us/geforce/ada-lovelace-architecture/",
    "thakur2005": "https://doi.org/10.1177/1094342005051521",
    "yu2022": "https://www.usenix.org/conference/osdi22/presentation/yu",
    "little1961": "https://doi.org/10.1287/opre.9.3.383",
    "vllm": "https://github.com/vllm-project/vllm",
    # the frameworks and calculators of issue 25, at the commits their entries name
    "megatron-core": "https://github.com/NVIDIA/Megatron-LM",
    "megatron-estimator": "https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/theoretical_memory_usage.py",
    "deepspeed-zero": "https://github.com/microsoft/DeepSpeed",
    "llm-analysis": "https://github.com/cli99/llm-analysis",
    "eleuther-cookbook": "https://github.com/EleutherAI/cookbook",
    "pytorch-fsdp": "https://github.com/pytorch/pytorch",
    "hf-memory-anatomy": "https://github.com/huggingface/transformers/blob/main/docs/source/en/model_memory_anatomy.md",
    "accelerate": "https://github.com/huggingface/accelerate",
}
for _key, _url in URLS.items():
    if not WORKS[_key].url:
        WORKS[_key] = replace(WORKS[_key], url=_url)

ALIASES = {"deepseek2024v3": "deepseek2024"}  # one work, cited under two keys: the bibliography lists it once


def work(key: str) -> Work:
    """The entry with this key (an alias names the same entry), built-in or of an active user catalogue; an unknown
    key is an error, named."""
    entry = WORKS.get(ALIASES.get(key, key)) or scope.find("works", key)
    if entry is None:
        raise KeyError(f"no bibliography entry {key!r} (formulas/vocabulary/bibliography.py, or Catalogue.source for your own)")
    return entry


def add_work(owner: scope.Scope, key: str, *, kind: str, short: str, authors: str, title: str, venue: str, date: str,
             title_en: str = "", arxiv: str = "", url: str = "") -> Work:
    """A work of a user's catalogue (``Catalogue.source``); a key the built-in bibliography has is refused."""
    if kind not in ("seed", "paper", "datasheet", "software"):
        raise ValueError(f"kind {kind!r}: one of paper, datasheet, software")
    if key in WORKS:
        raise ValueError(f"bibliography key {key!r} is a built-in work: choose another key")
    label = short or f"{authors.split(',')[0].split(' and ')[0].strip()} {date[:4]}".strip()
    entry = Work(key, kind, label, authors, title, venue, date, title_en=title_en, arxiv=arxiv, url=url)
    existing = owner.works.get(key)
    if existing is not None and existing != entry:
        raise ValueError(f"bibliography key {key!r} is already in this catalogue with other details")
    owner.works[key] = entry
    return entry


@dataclass(frozen=True)
class Source:
    """Where a formula comes from: a bibliography entry and the place in it."""

    ref: str  # a key of WORKS, or of an active user catalogue's works
    where: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_work", work(self.ref))  # resolved now: a user's work prints outside its scope too

    @property
    def work(self) -> Work:
        return self._work

    def __str__(self) -> str:
        short = self.work.short
        return f"{short}, {self.where}" if self.where else short


def cited(sources) -> list[Work]:
    """The distinct works of ``sources``, seeds first (000, 001, ...), then the others by citation label."""
    works = {source.work.key: source.work for source in sources}
    order = {"seed": 0, "paper": 1, "datasheet": 2, "software": 3}
    return sorted(works.values(), key=lambda w: (order[w.kind], w.key if w.kind == "seed" else w.short.lower()))
