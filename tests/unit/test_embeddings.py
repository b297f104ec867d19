"""The ONNX default embedder, the memo, and agreement with the sentence-transformers reference."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from medlit.config import Settings
from medlit.embeddings import MemoEmbedder, load_embedder
from medlit.embeddings.memo import text_hash
from medlit.embeddings.onnx import OnnxEmbedder
from medlit.heavy import LaneEmbedder
from medlit.storage.sqlite import SqliteStore

BIOMEDICAL = [
    "Does aspirin reduce the risk of myocardial infarction in older adults?",
    "Metformin lowers fasting glucose in patients with type 2 diabetes.",
    "Statin therapy was associated with fewer cardiovascular events.",
    "Vitamin D supplementation did not prevent fractures in this randomised trial.",
    "Is smoking during pregnancy associated with low birth weight?",
    "Children with asthma used inhaled corticosteroids twice daily.",
    "The meta-analysis found no effect of omega-3 fatty acids on mortality.",
    "Early mobilisation after hip surgery shortened hospital stay.",
    "What are the side effects of long-term proton pump inhibitor use?",
    "Laparoscopic appendectomy had fewer wound infections than open surgery.",
]


@pytest.fixture(scope="module")
def onnx() -> OnnxEmbedder:
    return OnnxEmbedder()


def test_shape_dtype_and_unit_norm(onnx: OnnxEmbedder) -> None:
    vectors = onnx.embed(BIOMEDICAL)
    assert vectors.shape == (len(BIOMEDICAL), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert onnx.embed([]).shape == (0, 384)


def test_deterministic_and_batch_independent(onnx: OnnxEmbedder) -> None:
    together = onnx.embed(BIOMEDICAL)
    alone = np.stack([onnx.embed([text])[0] for text in BIOMEDICAL[:3]])
    assert np.allclose(together[:3], alone, atol=1e-4)  # padding must not leak into pooling
    assert np.array_equal(onnx.embed(BIOMEDICAL[:2]), onnx.embed(BIOMEDICAL[:2]))


def test_paraphrase_closer_than_unrelated(onnx: OnnxEmbedder) -> None:
    a, b, c = onnx.embed(
        [
            "Does aspirin reduce the risk of heart attack?",
            "Can taking aspirin prevent a myocardial infarction?",
            "How is hip fracture surgery performed in children?",
        ]
    )
    assert float(a @ b) > 0.7 > float(a @ c)


def test_long_text_is_truncated_not_rejected(onnx: OnnxEmbedder) -> None:
    long = " ".join(BIOMEDICAL * 20)  # well past 256 tokens
    vec = onnx.embed([long])
    assert vec.shape == (1, 384) and np.isfinite(vec).all()


class CountingEmbedder:
    """Counts texts it embeds (a real embedder underneath)."""

    def __init__(self, inner: OnnxEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.seen: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
        self.seen.extend(texts)
        return self.inner.embed(texts)


def test_memo_embeds_identical_text_once(onnx: OnnxEmbedder) -> None:
    inner = CountingEmbedder(onnx)
    memo = MemoEmbedder(inner, capacity=10)
    first = memo.embed(["x ray", "y", "x ray"])
    second = memo.embed(["y", "z"])
    assert inner.seen == ["x ray", "y", "z"]
    assert np.array_equal(first[1], second[0]) and np.array_equal(first[0], first[2])
    first[1][:] = 0  # a caller scribbling on its output must not poison the memo
    assert np.linalg.norm(memo.embed(["y"])[0]) == pytest.approx(1.0, abs=1e-5)


def test_remembered_reads_the_memory_only(onnx: OnnxEmbedder, tmp_path: Path) -> None:
    """What the event loop may call: the in-memory LRU, never the store nor the model."""
    inner = CountingEmbedder(onnx)
    with SqliteStore(tmp_path / "m.sqlite3") as store:
        stored = onnx.embed(["in the store"])[0]
        store.put_embeddings(inner.model_id, {text_hash("in the store"): stored})
        memo = MemoEmbedder(inner, capacity=10, store=store)
        assert memo.remembered("x ray") is None and inner.seen == []
        vec = memo.embed(["x ray"])[0]
        got = memo.remembered("x ray")
        assert got is not None and np.array_equal(got, vec)
        got[:] = 0  # a copy: the memo keeps its own
        assert np.array_equal(memo.remembered("x ray"), vec)
        assert memo.remembered("in the store") is None  # a store read is not for the loop
        assert np.array_equal(memo.embed(["in the store"])[0], stored)  # embed() reads it
        assert inner.seen == ["x ray"]


def test_persisted_memo_skips_the_model_in_a_new_process(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    with SqliteStore.open(settings) as store:
        vec = load_embedder(settings, store).embed(["Is coffee bad for the heart?"])
    with SqliteStore.open(settings) as store:
        embedder = load_embedder(settings, store)
        again = embedder.embed(["Is coffee bad for the heart?"])
        assert isinstance(embedder, MemoEmbedder)
        assert isinstance(embedder.inner, LaneEmbedder)
        model = embedder.inner.inner
        assert isinstance(model, OnnxEmbedder) and not model.loaded
    assert np.array_equal(vec, again)


@pytest.mark.torch
@pytest.mark.slow
def test_onnx_agrees_with_sentence_transformers(onnx: OnnxEmbedder) -> None:
    if importlib.util.find_spec("sentence_transformers") is None:
        pytest.skip("sentence-transformers is not installed (pip install 'medlit[torch]')")
    from medlit.embeddings.sentence_transformers import SentenceTransformerEmbedder

    reference = SentenceTransformerEmbedder().embed(BIOMEDICAL)
    ours = onnx.embed(BIOMEDICAL)
    per_sentence = np.sum(reference * ours, axis=1)
    assert per_sentence.min() >= 0.98, per_sentence
    # Same nearest neighbour for every sentence.
    ref_sims, our_sims = reference @ reference.T, ours @ ours.T
    np.fill_diagonal(ref_sims, -1)
    np.fill_diagonal(our_sims, -1)
    assert (ref_sims.argmax(axis=1) == our_sims.argmax(axis=1)).all()


def test_default_embedder_needs_no_pytorch_package() -> None:
    """The tokenizer ships inside medlit: `pip install medlit` must not pull in PyTorch."""
    import medlit
    from medlit.embeddings.onnx import default_tokenizer_path

    path = default_tokenizer_path()
    assert path.is_file()
    assert Path(medlit.__file__).parent in path.parents


def test_installed_model_files_have_the_recorded_digests() -> None:
    from medlit.embeddings.onnx import (
        MODEL_SHA256,
        TOKENIZER_SHA256,
        default_model_path,
        default_tokenizer_path,
        verify_digest,
    )

    verify_digest(default_model_path(), MODEL_SHA256)  # raises on a mismatch
    verify_digest(default_tokenizer_path(), TOKENIZER_SHA256)


@pytest.mark.parametrize("which", ["model", "tokenizer"])
def test_a_tampered_model_file_is_refused_before_it_is_loaded(tmp_path: Path, which: str) -> None:
    from medlit.embeddings.onnx import (
        MODEL_SHA256,
        TOKENIZER_SHA256,
        default_model_path,
        default_tokenizer_path,
    )
    from medlit.errors import ConfigError

    source = default_model_path() if which == "model" else default_tokenizer_path()
    copy = tmp_path / source.name
    data = bytearray(source.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit flipped in the middle of the file
    copy.write_bytes(bytes(data))
    if which == "model":
        embedder = OnnxEmbedder(model_path=copy, model_sha256=MODEL_SHA256)
    else:
        embedder = OnnxEmbedder(tokenizer_path=copy, tokenizer_sha256=TOKENIZER_SHA256)
    with pytest.raises(ConfigError, match="is not the one medlit was built for") as caught:
        embedder.embed(["aspirin and stroke"])
    assert str(copy) in str(caught.value)
    assert not embedder.loaded
    # The untouched copy loads: the check compares contents, not paths.
    copy.write_bytes(source.read_bytes())
    assert embedder.embed(["aspirin and stroke"]).shape == (1, 384)
