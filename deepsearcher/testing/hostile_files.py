"""Hostile and changing inputs, generated on the spot for tests and `benchmarks/faults.py`.

Each builder writes one file that a careless loader would spend minutes or gigabytes on;
sizes are parameters so a test can use small ones (with a lowered budget) and the probe
the real ones (with the default budget).
"""

from __future__ import annotations

import json
import threading
import time
import zipfile
import zlib
from pathlib import Path

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'officeDocument" Target="word/document.xml"/></Relationships>'
)
_HEAD = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    "<w:body><w:p><w:r><w:t>"
)
_TAIL = "</w:t></w:r></w:p></w:body></w:document>"


def big_text_docx(path: Path, characters: int) -> Path:
    """A valid DOCX whose one text node holds `characters` characters of words (compresses ~10x)."""
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
    text = (words * (characters // len(words) + 1))[:characters]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        archive.writestr("word/document.xml", _HEAD + text + _TAIL)
    return path


def docx_bomb(path: Path, inflated_bytes: int) -> Path:
    """A DOCX whose document.xml inflates to `inflated_bytes` (spaces: ~1000:1), streamed while written."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            part.write(_HEAD.encode())
            block = b" " * (1024 * 1024)
            left = inflated_bytes
            while left > 0:
                part.write(block[: min(left, len(block))])
                left -= len(block)
            part.write(_TAIL.encode())
    return path


def tiny_objects_json(path: Path, count: int) -> Path:
    """A JSON list of `count` tiny objects (`{"text": "x 17"}`)."""
    with path.open("w", encoding="utf-8") as handle:
        handle.write("[")
        for index in range(count):
            handle.write(("," if index else "") + json.dumps({"text": f"x {index}"}))
        handle.write("]")
    return path


class GrowingFile:
    """A text file that a thread keeps appending to until stopped (a live log)."""

    def __init__(self, path: Path, start_bytes: int = 4096, block: int = 64 * 1024) -> None:
        self.path = path
        self.block = ("a line of a log that keeps growing\n" * (block // 35 + 1))[:block]
        path.write_text(self.block[:start_bytes] or "x\n", encoding="utf-8")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._grow, name="growing-file", daemon=True)

    def _grow(self) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            while not self._stop.is_set():
                handle.write(self.block)
                handle.flush()
                time.sleep(0.01)

    def __enter__(self) -> GrowingFile:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def deflate_ratio(data: bytes) -> float:
    """How much `data` shrinks under zlib (for reporting a generated file's compression)."""
    return len(data) / max(1, len(zlib.compress(data)))


def encrypted_docx(path: Path, text: str = "The plans are in the second drawer.", password: str = "Passw0rd!") -> Path:
    """A DOCX encrypted as Office encrypts one (an OLE file holding the EncryptedPackage), made with
    msoffcrypto-tool (a dev dependency): what a password-protected document looks like to a loader."""
    import io

    import docx
    from msoffcrypto.format.ooxml import OOXMLFile

    document = docx.Document()
    document.add_paragraph(text)
    plain = io.BytesIO()
    document.save(plain)
    plain.seek(0)
    with open(path, "wb") as out:
        OOXMLFile(plain).encrypt(password, out)
    return path


def foreign_body_docx(path: Path, source: Path) -> Path:
    """`source` (a DOCX) with its main part replaced by XML that is not a Word document body."""
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(path, "w") as target:
        for item in original.infolist():
            data = original.read(item.filename)
            if item.filename == "word/document.xml":
                data = b'<?xml version="1.0"?><document xmlns="urn:not-word"><p>text</p></document>'
            target.writestr(item, data)
    return path
