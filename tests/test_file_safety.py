"""Files that are not what they say, and outputs that are not regular files: compressed inputs
whose contents do not match their extension, LIBSVM indices beyond 32 bits, FIFOs and character
devices as outputs, and an output that is one of the command's inputs."""

import bz2
import gzip
import io
import lzma
import os
import tarfile
import zipfile

import pytest

from s3vm.cli import main
from s3vm.generators import gaussian_blobs



@pytest.fixture(scope="module")
def csv_bytes(tmp_path_factory):
    """A small valid data file's bytes."""
    path = tmp_path_factory.mktemp("data") / "blobs.csv"
    gaussian_blobs(n=12, p=2, separation=4.0, n_labeled_per_class=2, seed=1).to_csv(str(path))
    return path.read_bytes()


def _one_error_line(capsys) -> str:
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and lines[0].startswith("s3vm: error:"), (out, err)
    return lines[0]


def _plain(path, data):
    path.write_bytes(data)


def _zip_of_two(path, data):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.csv", data)
        archive.writestr("b.csv", data)


def _tar_of_two(path, data):
    with tarfile.open(path, "w") as archive:
        for member in ("a.csv", "b.csv"):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def _truncated(compress):
    def write(path, data):
        packed = compress(data)
        path.write_bytes(packed[: len(packed) // 2])
    return write


BAD_COMPRESSED = {
    "plain.csv.xz": (_plain, "not a readable xz-compressed"),
    "plain.csv.gz": (_plain, "not a readable gzip-compressed"),
    "cut.csv.gz": (_truncated(gzip.compress), "not a readable gzip-compressed"),
    "cut.csv.xz": (_truncated(lzma.compress), "not a readable xz-compressed"),
    "cut.csv.bz2": (_truncated(bz2.compress), "cut.csv.bz2"),
    "two.csv.zip": (_zip_of_two, "Multiple files found in ZIP"),
    "plain.csv.zip": (_plain, "not a readable zip-compressed"),
    "two.csv.tar": (_tar_of_two, "Multiple files found in TAR"),
    "plain.csv.tar": (_plain, "not a readable tar-compressed"),
}


@pytest.mark.parametrize("name", sorted(BAD_COMPRESSED))
def test_a_compressed_input_that_is_not_what_it_says_is_one_line(tmp_path, capsys, csv_bytes,
                                                                 name):
    write, message = BAD_COMPRESSED[name]
    path = tmp_path / name
    write(path, csv_bytes)
    assert main(["solve", str(path), "-f", "svm1"]) == 2
    line = _one_error_line(capsys)
    assert message in line and name in line


def test_the_same_contents_compressed_properly_are_read(tmp_path, capsys, csv_bytes):
    # The control: what the extension says, the data reads (so the refusals above are about
    # the contents, not the extension).
    path = tmp_path / "good.csv.xz"
    path.write_bytes(lzma.compress(csv_bytes))
    assert main(["solve", str(path), "-f", "svm1", "--json"]) == 0


def test_a_zst_input_says_what_to_install_or_what_is_wrong(tmp_path, capsys, csv_bytes):
    path = tmp_path / "plain.csv.zst"
    path.write_bytes(csv_bytes)
    assert main(["solve", str(path), "-f", "svm1"]) == 2
    line = _one_error_line(capsys)
    try:
        import zstandard  # noqa: F401
    except ImportError:
        assert "pip install zstandard" in line
    else:
        assert "not a readable zstd-compressed" in line


@pytest.mark.parametrize("index", [2**31, 2**40])
def test_a_libsvm_index_beyond_32_bits_is_one_line(tmp_path, capsys, index):
    path = tmp_path / "huge.svm"
    path.write_text(f"1 1:0.5 {index}:1\n-1 1:0.2\n0 1:0.3\n0 1:0.1\n")
    assert main(["solve", str(path), "-f", "svm1"]) == 2
    assert "feature index is too large" in _one_error_line(capsys)
