"""Can a learned pair score beat "cosine >= tau + QuestionGuard" for tier-1 hits? (A study.)

Usage::

    python benchmarks/fit_pair_model.py ../shared/data/mqp/mqp_dev.csv [--target 0.99]

Needs scikit-learn (fitting only; the package never imports it). For every pair it computes,
from ONE forward pass of all-MiniLM-L6-v2 (int8 ONNX, the cache's own embedder) per question:

* ``cos``: the whole-question cosine (mean pooling, exactly what the cache compares);
* token alignment (BERTScore-style) on the contextual token vectors (the model output before
  pooling): for each content token of one question its best cosine to the other question's
  tokens; per direction the minimum, 10th / 25th percentile and mean coverage, the mean with
  IDF weights (document frequencies over the PubMedQA abstracts in ``../shared/data``, i.e.
  PubMed text, not the pairs), and BERTScore F1; ``lo_*`` / ``hi_*`` take the weaker / stronger
  direction (a reworded question covers every concept of the other; a related one adds or drops
  one);
* the same alignment and a pooled cosine restricted to the *asking* sentences (question marks,
  interrogative openings), from the same token vectors;
* the rule guard's verdict and reason kinds as 0/1 features, token-length ratio and log length.

It then reports grouped cross-validation by the id column (the doctor who wrote the pairs):
logistic regression (standardised features) fitted on the other doctors, the decision threshold
chosen on those training folds as the lowest one whose precision reaches ``--target`` (the
same rule as ``cache_pairs.py --cv`` for tau), scored on the held-out doctor; pooled over folds.
"gated" means the guard must also accept (it is a hard filter in the cache).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from medlit.cache.guard import QuestionGuard
from medlit.embeddings.onnx import default_model_path, default_tokenizer_path
from medlit.words import stop_words
from medlit.words.frame import QUESTION_START

_STOP = stop_words("lay_question")

Array = npt.NDArray[np.float64]
_PUNCT = re.compile(r"^[^\w]+$")
_ASKING = re.compile(r"[^.?!\n]+[.?!]*")
_SPECIAL = ("[CLS]", "[SEP]")
_REASONS = (
    "negation differs",
    "different number",
    "different population",
    "different drug",
    "different outcome",
    "different question",
    "different treatment",
    "different question intent",
)


@dataclass
class Encoded:
    """One question: wordpieces, unit token vectors, pooled vector, masks, IDF weights."""

    tokens: list[str]
    vectors: Array
    pooled: Array
    content: npt.NDArray[np.bool_]
    asking: npt.NDArray[np.bool_]
    idf: Array


def encode_all(texts: list[str], idf_docs: list[str]) -> dict[str, Encoded]:
    """Token vectors of every text from the cache's own ONNX model (one pass per batch)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(default_tokenizer_path()))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    session = ort.InferenceSession(str(default_model_path()), providers=["CPUExecutionProvider"])
    inputs = {i.name for i in session.get_inputs()}
    df: Counter[str] = Counter()
    for doc in idf_docs:
        df.update(set(tokenizer.encode(doc).tokens))
    n_docs = len(idf_docs)
    out: dict[str, Encoded] = {}
    for start in range(0, len(texts), 32):
        batch = texts[start : start + 32]
        enc = tokenizer.encode_batch(batch)
        feeds = {
            "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
        }
        if "token_type_ids" in inputs:
            feeds["token_type_ids"] = np.array([e.type_ids for e in enc], dtype=np.int64)
        (hidden,) = session.run(["last_hidden_state"], feeds)
        for j, e in enumerate(enc):
            n = int(sum(e.attention_mask))
            h = hidden[j, :n].astype(np.float64)
            pooled = h.mean(0)
            tokens = e.tokens[:n]
            spans = _asking_spans(batch[j])
            asking = np.array(
                [
                    t not in _SPECIAL and any(a <= o[0] < b for a, b in spans)
                    for t, o in zip(tokens, e.offsets[:n], strict=True)
                ]
            )
            out[batch[j]] = Encoded(
                tokens=tokens,
                vectors=h / np.linalg.norm(h, axis=1, keepdims=True),
                pooled=pooled / np.linalg.norm(pooled),
                content=_content_mask(tokens),
                asking=asking,
                idf=np.array([math.log((n_docs + 1) / (df.get(t, 0) + 1)) for t in tokens]),
            )
    return out


def _asking_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    for m in _ASKING.finditer(text):
        s = m.group().strip()
        if s and (s.endswith("?") or QUESTION_START.match(s.lower())):
            spans.append((m.start(), m.end()))
    return spans or [(0, len(text))]


def _content_mask(tokens: list[str]) -> npt.NDArray[np.bool_]:
    """Wordpieces of words that are not stop words, punctuation or numbers."""
    mask: list[bool] = []
    current = False
    for i, tok in enumerate(tokens):
        if tok in _SPECIAL:
            mask.append(False)
            continue
        if tok.startswith("##"):
            mask.append(current)
            continue
        word, k = tok, i + 1
        while k < len(tokens) and tokens[k].startswith("##"):
            word, k = word + tokens[k][2:], k + 1
        current = not _PUNCT.match(tok) and word not in _STOP and len(word) >= 2
        current = current and not word.isdigit()
        mask.append(current)
    return np.array(mask)


def _coverage(sim: Array, rows: npt.NDArray[np.bool_]) -> Array:
    """Best match of each selected token of one side among the other side's inner tokens."""
    inner = sim[:, 1:-1] if sim.shape[1] > 2 else sim
    cov = inner.max(axis=1)
    picked = cov[rows]
    return picked if picked.size else cov[1:-1] if cov.size > 2 else cov


def pair_features(a: Encoded, b: Encoded, guard_reason: str | None) -> dict[str, float]:
    """All candidate features of one (cached, new) pair."""
    sim = a.vectors @ b.vectors.T
    f: dict[str, float] = {"cos": float(a.pooled @ b.pooled)}
    sides = {"a": (sim, a), "b": (sim.T, b)}
    for name, (s, enc) in sides.items():
        cov = _coverage(s, enc.content)
        w = enc.idf[enc.content] if enc.content.any() else np.ones_like(cov)
        f[f"{name}_min"] = float(cov.min())
        f[f"{name}_p10"] = float(np.percentile(cov, 10))
        f[f"{name}_p25"] = float(np.percentile(cov, 25))
        f[f"{name}_mean"] = float(cov.mean())
        f[f"{name}_wmean"] = float((cov * w).sum() / max(w.sum(), 1e-9))
        f[f"{name}_all"] = float(s[1:-1, 1:-1].max(axis=1).mean()) if s.shape[0] > 2 else 0.0
        ask = _coverage(s, enc.content & enc.asking)
        f[f"{name}_ask_p10"] = float(np.percentile(ask, 10))
    for k in ("min", "p10", "p25", "mean", "wmean", "all", "ask_p10"):
        f[f"lo_{k}"] = min(f[f"a_{k}"], f[f"b_{k}"])
        f[f"hi_{k}"] = max(f[f"a_{k}"], f[f"b_{k}"])
    f["bertscore_f1"] = 2 * f["a_all"] * f["b_all"] / max(f["a_all"] + f["b_all"], 1e-9)
    pa = a.vectors[a.asking].mean(0) if a.asking.any() else a.pooled
    pb = b.vectors[b.asking].mean(0) if b.asking.any() else b.pooled
    f["ask_cos"] = float(pa @ pb / (np.linalg.norm(pa) * np.linalg.norm(pb)))
    f["len_ratio"] = min(len(a.tokens), len(b.tokens)) / max(len(a.tokens), len(b.tokens))
    f["log_len"] = math.log(len(a.tokens) * len(b.tokens))
    f["guard_ok"] = float(guard_reason is None)
    kind = guard_reason.split(":")[0] if guard_reason else ""
    for r in _REASONS:
        f[f"reason={r}"] = float(kind == r)
    return f


def threshold_for(scores: Array, labels: Array, target: float) -> float:
    """Lowest score threshold whose precision on (scores, labels) reaches ``target``."""
    order = np.argsort(-scores)
    tp = np.cumsum(labels[order])
    precision = tp / np.arange(1, len(order) + 1)
    ok = np.flatnonzero((precision >= target) & (scores[order] > -1e8))
    return float(scores[order][ok.max()]) if ok.size else math.inf


def grouped_cv(
    x: Array, y: Array, groups: Any, gate: Any, target: float, c: float, fit: bool
) -> tuple[float, float, int, int]:
    """Pooled held-out (precision, recall, correct, wrong) over leave-one-group-out folds."""
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]
    from sklearn.pipeline import make_pipeline  # type: ignore[import-untyped]
    from sklearn.preprocessing import StandardScaler  # type: ignore[import-untyped]

    hits = np.zeros(len(y), dtype=bool)
    for g in sorted(set(groups)):
        test = groups == g
        train = ~test
        if fit:
            model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=3000))
            model.fit(x[train], y[train])
            s_train, s_test = model.decision_function(x[train]), model.decision_function(x[test])
        else:  # the single feature is the score (cosine)
            s_train, s_test = x[train, 0], x[test, 0]
        s_train = np.where(gate[train], s_train, -1e9)
        s_test = np.where(gate[test], s_test, -1e9)
        hits[test] = s_test >= threshold_for(s_train, y[train], target)
    good, bad = int((hits & (y == 1)).sum()), int((hits & (y == 0)).sum())
    return good / max(good + bad, 1), good / max(int(y.sum()), 1), good, bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", type=Path)
    parser.add_argument("--target", type=float, default=0.99)
    parser.add_argument("--pubmed-json", type=Path, default=None, help="IDF corpus (PubMedQA)")
    args = parser.parse_args(argv)
    with args.pairs.open(newline="", encoding="utf-8") as fh:
        rows = [(r[0], r[1], r[2], int(r[3])) for r in csv.reader(fh) if len(r) >= 4]
    pq = args.pubmed_json or args.pairs.parent.parent / "pubmedqa" / "pqal_dev.json"
    records = json.loads(pq.read_text(encoding="utf-8")).values()
    docs = [" ".join(r["CONTEXTS"]) + " " + r["LONG_ANSWER"] for r in records]
    texts = sorted({q for _, q1, q2, _ in rows for q in (q1, q2)})
    enc = encode_all(texts, docs)
    guard = QuestionGuard()
    feats = [pair_features(enc[q1], enc[q2], guard.check(q2, q1).reason) for _, q1, q2, _ in rows]
    names = list(feats[0])
    x = np.array([[f[n] for n in names] for f in feats])
    y = np.array([r[3] for r in rows])
    groups = np.array([r[0] for r in rows])
    gate = x[:, names.index("guard_ok")] == 1
    everyone = np.ones(len(y), dtype=bool)
    align = ["cos", "lo_p10", "lo_p25", "lo_min", "lo_all", "hi_all", "bertscore_f1"]
    align += ["lo_mean", "lo_wmean", "lo_ask_p10", "ask_cos"]
    studies: list[tuple[str, list[str], Any, bool]] = [
        ("cosine only", ["cos"], everyone, False),
        ("cosine + guard", ["cos"], gate, False),
        ("LR alignment", align, everyone, True),
        ("LR alignment + guard", align, gate, True),
        ("LR all features + guard", names, gate, True),
    ]
    print(f"{len(rows)} pairs; grouped CV by id, threshold for precision {args.target} on train")
    print(f"{'decision':<26} {'C':>4} {'prec':>6} {'recall':>7} {'correct':>8} {'wrong':>6}")
    for label, cols, g, fit in studies:
        idx = [names.index(c) for c in cols]
        for c in (0.1, 1.0) if fit else (0.0,):
            p, r, good, bad = grouped_cv(x[:, idx], y, groups, g, args.target, c, fit)
            print(f"{label:<26} {c:>4} {p:>6.3f} {r:>7.3f} {good:>8} {bad:>6}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
