"""Files that are not what they say, and outputs that are not regular files: compressed inputs
whose contents do not match their extension, LIBSVM indices beyond 32 bits, FIFOs and character
devices as outputs, and an output that is one of the command's inputs."""

import bz2
import gzip
import io
import lzma
import os
import stat
import subprocess
import sys
import tarfile
import threading
import zipfile

import pytest

from s3vm.cli import main
from s3vm.data.generators import gaussian_blobs


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


@pytest.mark.solver
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


# -- outputs that are not regular files ------------------------------------------------------
def _reader(fifo):
    """A thread reading ``fifo`` to its end (as `cat FIFO` would); its bytes in box["data"]."""
    box = {}

    def read():
        with open(fifo, "rb") as fh:
            box["data"] = fh.read()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, box


def _through_fifo(tmp_path, name, command):
    """Run ``command`` (argv with {out} for the output) into a FIFO and into a regular file:
    (bytes read from the FIFO, bytes of the regular file); the FIFO must still be one."""
    fifo = tmp_path / ("fifo-" + name)
    os.mkfifo(fifo)
    thread, box = _reader(fifo)
    assert main([a.format(out=fifo) for a in command]) == 0
    thread.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced"
    regular = tmp_path / ("regular-" + name)
    assert main([a.format(out=regular) for a in command]) == 0
    return box.get("data"), regular.read_bytes()


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("name,command", [
    ("model.mps", ["export", "blobs_small", "-f", "bd-mip", "-o", "{out}"]),
    ("data.csv", ["dataset", "heart", "-o", "{out}"]),
    ("tree.graphml", ["solve", "blobs_small", "-f", "bb", "--tree", "{out}"]),
])
def test_an_output_to_a_fifo_is_written_into_it(tmp_path, capsys, name, command):
    through_fifo, regular = _through_fifo(tmp_path, name, command)
    assert through_fifo and through_fifo == regular


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("name,command", [
    ("model.mps", ["export", "blobs_small", "-f", "bd-mip", "-o", "{out}"]),
    ("data.csv", ["dataset", "heart", "-o", "{out}"]),
])
def test_an_output_to_a_fifo_without_a_reader_gives_up_with_one_line(tmp_path, capsys,
                                                                       monkeypatch, name,
                                                                       command):
    # Opening a FIFO for writing blocks until a reader opens it: these commands hung until
    # killed. Run in a thread, so that a hang fails the test instead of the suite.
    from s3vm.solvers.runtime import files

    monkeypatch.setattr(files, "FIFO_READER_SECONDS", 0.3, raising=False)
    fifo = tmp_path / ("fifo-" + name)
    os.mkfifo(fifo)
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault(
        "code", main([a.format(out=fifo) for a in command])), daemon=True)
    thread.start()
    thread.join(timeout=60)
    hung = thread.is_alive()
    if hung:  # release the writer: a reader opens the FIFO and reads it to its end
        with open(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK), "rb") as fh:
            thread.join(timeout=30)
            fh.read()
    assert not hung, "the command waited for a reader until killed"
    assert box["code"] == 2
    line = _one_error_line(capsys)
    assert f"cannot write {fifo}: no reader opened the FIFO within 0.3 s" in line
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and not files._temporary


@pytest.fixture
def null_device(tmp_path):
    """A character device that discards what it is given: a node like /dev/null in tmp_path
    (so that a regression cannot replace the machine's own), else /dev/null for a user who
    cannot write /dev."""
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        with open(node, "wb") as fh:
            fh.write(b"probe")
        return str(node)
    except OSError:
        if os.geteuid() != 0 and not os.access("/dev", os.W_OK):
            return "/dev/null"
    pytest.skip("no character device to write to safely")


@pytest.mark.solver
@pytest.mark.parametrize("command", [
    ["export", "blobs_small", "-f", "bd-mip", "--format", "mps", "-o", "{out}"],
    ["dataset", "heart", "-o", "{out}"],
    ["solve", "blobs_small", "-f", "bb", "--tree", "{out}"],
])
def test_an_output_to_a_character_device_leaves_it_a_device(tmp_path, capsys, null_device,
                                                              command):
    before = set(os.listdir(os.path.dirname(null_device)))
    assert main([a.format(out=null_device) for a in command]) == 0
    assert stat.S_ISCHR(os.stat(null_device).st_mode)
    assert set(os.listdir(os.path.dirname(null_device))) == before  # no temporary left


# -- an output that is an input ----------------------------------------------------------------
def _two_features(path):
    gaussian_blobs(n=12, p=2, separation=4.0, n_labeled_per_class=2, seed=1).to_csv(str(path))
    return path.read_bytes()


@pytest.mark.parametrize("command", [
    ["plot", "boundary", "{data}", "-f", "svm1", "-o", "{data}"],
    ["select", "{toml}", "-o", "{toml}"],
    ["export", "{toml}", "-f", "svm1", "--format", "lp", "-o", "{data}"],
])
def test_an_output_that_is_an_input_is_refused(tmp_path, capsys, command):
    data = tmp_path / "d.png"  # a data file (CSV) with a picture's name
    before = _two_features(data)
    toml = tmp_path / "d.toml"
    toml.write_text('data = "d.png"\n')
    assert main([a.format(data=data, toml=toml) for a in command]) == 2
    assert "it is an input of this command" in _one_error_line(capsys)
    assert data.read_bytes() == before and toml.read_text() == 'data = "d.png"\n'
    assert sorted(os.listdir(tmp_path)) == ["d.png", "d.toml"]


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1"])
def test_an_output_to_dev_stdout_reaches_the_real_standard_output(tmp_path, name):
    # The command line points descriptor 1 elsewhere while a command runs (so that solver
    # libraries cannot print on stdout): the file must still reach the reader of stdout.
    console = "from s3vm.cli import console_main; console_main()"
    regular = tmp_path / "heart.csv"
    assert main(["dataset", "heart", "-o", str(regular)]) == 0
    done = subprocess.run([sys.executable, "-c", console, "dataset", "heart", "-o", name],
                          capture_output=True, timeout=120)
    assert done.returncode == 0 and done.stdout == regular.read_bytes()
    assert os.path.islink("/dev/stdout") or not os.path.exists("/dev/stdout")
