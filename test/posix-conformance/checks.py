#!/usr/bin/env python3
"""POSIX file semantics checks, written from the standard (open(2), write(2),
rename(2), unlink(2), readdir(3), stat(2) on timestamps), run in one
directory:

    checks.py DIR        prints one line per check: NAME PASS|FAIL detail

Each check makes its own names under DIR.  A check states what POSIX (and
Linux, where POSIX leaves a choice) requires; FAIL says what happened
instead.  run.sh runs the checks on a tmpfs and on an ipvfs-fuse mount and
names the differences."""
import errno
import os
import stat
import sys

D = sys.argv[1]
checks = []


def check(fn):
    checks.append(fn)
    return fn


def p(*names):
    return os.path.join(D, *names)


def put(path, data, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode=0o644):
    fd = os.open(path, flags, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def get(path):
    with open(path, "rb") as f:
        return f.read()


def expect_errno(fn, *codes):
    try:
        fn()
    except OSError as e:
        if e.errno in codes:
            return None
        return "got %s, want %s" % (errno.errorcode.get(e.errno), "/".join(errno.errorcode[c] for c in codes))
    return "succeeded, want %s" % "/".join(errno.errorcode[c] for c in codes)


@check
def open_excl_existing():
    """O_CREAT|O_EXCL on an existing name fails with EEXIST."""
    put(p("excl"), b"x")
    return expect_errno(lambda: os.open(p("excl"), os.O_CREAT | os.O_EXCL | os.O_WRONLY), errno.EEXIST)


@check
def open_excl_new_mode():
    """O_CREAT|O_EXCL makes a new file with the mode asked (0600 is not cut by umask 022)."""
    os.close(os.open(p("excl_new"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    m = stat.S_IMODE(os.stat(p("excl_new")).st_mode)
    return None if m == 0o600 else "mode %o" % m


@check
def open_creat_mode_zero():
    """O_CREAT with mode 0 makes a file of mode 0 (not a default)."""
    os.close(os.open(p("mode0"), os.O_CREAT | os.O_WRONLY, 0))
    m = stat.S_IMODE(os.stat(p("mode0")).st_mode)
    return None if m == 0 else "mode %o" % m


@check
def open_missing():
    """open without O_CREAT of a missing name fails with ENOENT."""
    return expect_errno(lambda: os.open(p("missing"), os.O_RDONLY), errno.ENOENT)


@check
def open_dir_for_write():
    """opening a directory for writing fails with EISDIR."""
    os.mkdir(p("dir_w"))
    return expect_errno(lambda: os.open(p("dir_w"), os.O_WRONLY), errno.EISDIR)


@check
def open_directory_flag_on_file():
    """O_DIRECTORY on a file fails with ENOTDIR."""
    put(p("notdir"), b"x")
    return expect_errno(lambda: os.open(p("notdir"), os.O_RDONLY | os.O_DIRECTORY), errno.ENOTDIR)


@check
def open_trunc():
    """O_TRUNC empties an existing file."""
    put(p("trunc"), b"0123456789")
    os.close(os.open(p("trunc"), os.O_WRONLY | os.O_TRUNC))
    n = os.stat(p("trunc")).st_size
    return None if n == 0 and get(p("trunc")) == b"" else "size %d" % n


@check
def append_after_seek():
    """with O_APPEND every write goes to the end, whatever the offset."""
    put(p("app"), b"abc")
    fd = os.open(p("app"), os.O_WRONLY | os.O_APPEND)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, b"def")
    os.close(fd)
    d = get(p("app"))
    return None if d == b"abcdef" else repr(d)


@check
def append_two_writers():
    """two O_APPEND descriptors: each write lands at the end, none overwrites."""
    put(p("app2"), b"")
    a = os.open(p("app2"), os.O_WRONLY | os.O_APPEND)
    b = os.open(p("app2"), os.O_WRONLY | os.O_APPEND)
    for i in range(5):
        os.write(a, b"A%d" % i)
        os.write(b, b"B%d" % i)
    os.close(a)
    os.close(b)
    d = get(p("app2"))
    want = b"".join(b"A%dB%d" % (i, i) for i in range(5))
    return None if d == want else repr(d)


@check
def hole_reads_zeros():
    """a write past the end leaves a gap that reads as zeros; the size is exact."""
    fd = os.open(p("hole"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.pwrite(fd, b"end", 1 << 20)
    d = os.pread(fd, (1 << 20) + 10, 0)
    os.close(fd)
    ok = len(d) == (1 << 20) + 3 and d[:1 << 20] == bytes(1 << 20) and d[-3:] == b"end"
    return None if ok else "read %d bytes" % len(d)


@check
def read_at_eof():
    """a read at the end of the file returns 0 bytes."""
    put(p("eof"), b"xy")
    fd = os.open(p("eof"), os.O_RDONLY)
    d = os.pread(fd, 10, 2)
    os.close(fd)
    return None if d == b"" else repr(d)


@check
def truncate_extend_zeros():
    """ftruncate up: the new bytes read as zeros; down: the size shrinks."""
    put(p("textend"), b"abc")
    fd = os.open(p("textend"), os.O_RDWR)
    os.ftruncate(fd, 10)
    os.close(fd)
    d = get(p("textend"))
    os.truncate(p("textend"), 2)
    return None if d == b"abc" + bytes(7) and get(p("textend")) == b"ab" else repr(d)


@check
def rename_over_file():
    """rename over an existing file replaces it atomically; the old name is gone."""
    put(p("r_src"), b"new")
    put(p("r_dst"), b"old")
    os.rename(p("r_src"), p("r_dst"))
    if os.path.exists(p("r_src")):
        return "source still there"
    return None if get(p("r_dst")) == b"new" else repr(get(p("r_dst")))


@check
def rename_file_over_dir():
    """rename of a file over a directory fails with EISDIR."""
    put(p("rf"), b"x")
    os.mkdir(p("rd"))
    return expect_errno(lambda: os.rename(p("rf"), p("rd")), errno.EISDIR)


@check
def rename_dir_over_nonempty():
    """rename of a directory over a non-empty one fails with ENOTEMPTY (or EEXIST)."""
    os.mkdir(p("rne_src"))
    os.mkdir(p("rne_dst"))
    put(p("rne_dst", "f"), b"x")
    return expect_errno(lambda: os.rename(p("rne_src"), p("rne_dst")), errno.ENOTEMPTY, errno.EEXIST)


@check
def rename_dir_over_empty():
    """rename of a directory over an empty one replaces it."""
    os.mkdir(p("re_src"))
    put(p("re_src", "f"), b"x")
    os.mkdir(p("re_dst"))
    os.rename(p("re_src"), p("re_dst"))
    return None if get(p("re_dst", "f")) == b"x" else "content lost"


@check
def rename_into_itself():
    """rename of a directory into its own subtree fails with EINVAL."""
    os.makedirs(p("ri", "sub"))
    return expect_errno(lambda: os.rename(p("ri"), p("ri", "sub", "x")), errno.EINVAL)


@check
def rename_same_name():
    """rename of a name to itself succeeds and changes nothing."""
    put(p("same"), b"x")
    os.rename(p("same"), p("same"))
    return None if get(p("same")) == b"x" else "content changed"


@check
def unlink_open_file():
    """a file unlinked while open stays readable and writable through the descriptor."""
    put(p("uo"), b"still here")
    fd = os.open(p("uo"), os.O_RDWR)
    os.unlink(p("uo"))
    if os.path.exists(p("uo")):
        os.close(fd)
        return "name still there"
    d = os.pread(fd, 100, 0)
    os.pwrite(fd, b"!", 10)
    d2 = os.pread(fd, 100, 0)
    os.close(fd)
    return None if d == b"still here" and d2 == b"still here!" else repr((d, d2))


@check
def unlink_open_nlink():
    """fstat of an unlinked open file reports st_nlink 0, and no name shows in its directory."""
    os.mkdir(p("uon"))
    put(p("uon", "f"), b"x")
    fd = os.open(p("uon", "f"), os.O_RDONLY)
    os.unlink(p("uon", "f"))
    n = os.fstat(fd).st_nlink
    names = os.listdir(p("uon"))
    os.close(fd)
    return None if n == 0 and names == [] else "st_nlink %d, names %r" % (n, names)


@check
def readdir_during_changes():
    """names neither added nor removed during a readdir are each seen exactly once."""
    os.mkdir(p("rdc"))
    for i in range(64):
        put(p("rdc", "keep%02d" % i), b"")
    for i in range(16):
        put(p("rdc", "gone%02d" % i), b"")
    seen = []
    with os.scandir(p("rdc")) as it:
        for n, e in enumerate(it):
            seen.append(e.name)
            if n == 8:
                for i in range(16):
                    os.unlink(p("rdc", "gone%02d" % i))
                    put(p("rdc", "new%02d" % i), b"")
    keep = sorted(s for s in seen if s.startswith("keep"))
    want = ["keep%02d" % i for i in range(64)]
    return None if keep == want else "kept names seen: %d of 64 (%d dups)" % (len(set(keep)), len(keep) - len(set(keep)))


@check
def readdir_sees_new():
    """a name made before opendir is listed."""
    os.mkdir(p("rsn"))
    put(p("rsn", "a b é"), b"")
    return None if os.listdir(p("rsn")) == ["a b é"] else repr(os.listdir(p("rsn")))


OLD = 1000000000  # 2001: a time surely before any update


def mtime_after(path, action):
    os.utime(path, (OLD, OLD))
    action()
    return os.stat(path).st_mtime


@check
def mtime_write_open():
    """write(2) marks mtime for update: stat while the file is still open shows it."""
    put(p("mw"), b"x")
    fd = os.open(p("mw"), os.O_WRONLY)
    t = mtime_after(p("mw"), lambda: os.write(fd, b"y"))
    os.close(fd)
    return None if t > OLD else "mtime not updated before close"


@check
def mtime_write_closed():
    """after write(2) and close, mtime is updated."""
    put(p("mwc"), b"x")
    os.utime(p("mwc"), (OLD, OLD))
    put(p("mwc"), b"y", os.O_WRONLY)
    return None if os.stat(p("mwc")).st_mtime > OLD else "mtime not updated"


@check
def mtime_truncate():
    """truncate(2) to another size updates mtime."""
    put(p("mt"), b"xyz")
    t = mtime_after(p("mt"), lambda: os.truncate(p("mt"), 1))
    return None if t > OLD else "mtime not updated"


@check
def mtime_utime_set():
    """utimensat sets exact times."""
    put(p("mu"), b"x")
    os.utime(p("mu"), ns=(1234567890123456789, 1234567890987654321))
    st = os.stat(p("mu"))
    return None if st.st_mtime_ns == 1234567890987654321 and st.st_atime_ns == 1234567890123456789 else \
        "atime %d mtime %d" % (st.st_atime_ns, st.st_mtime_ns)


@check
def dir_mtime_on_create():
    """creating a name updates its directory's mtime."""
    os.mkdir(p("dm"))
    t = mtime_after(p("dm"), lambda: put(p("dm", "f"), b""))
    return None if t > OLD else "directory mtime not updated"


@check
def chmod_mode():
    """chmod sets the permission bits, stat shows them."""
    put(p("cm"), b"")
    os.chmod(p("cm"), 0o640)
    m = stat.S_IMODE(os.stat(p("cm")).st_mode)
    return None if m == 0o640 else "mode %o" % m


@check
def mkdir_existing():
    """mkdir of an existing name fails with EEXIST."""
    os.mkdir(p("me"))
    return expect_errno(lambda: os.mkdir(p("me")), errno.EEXIST)


@check
def rmdir_nonempty():
    """rmdir of a non-empty directory fails with ENOTEMPTY (or EEXIST)."""
    os.mkdir(p("rn"))
    put(p("rn", "f"), b"")
    return expect_errno(lambda: os.rmdir(p("rn")), errno.ENOTEMPTY, errno.EEXIST)


@check
def rmdir_file():
    """rmdir of a file fails with ENOTDIR."""
    put(p("rmf"), b"")
    return expect_errno(lambda: os.rmdir(p("rmf")), errno.ENOTDIR)


@check
def unlink_dir():
    """unlink of a directory fails with EISDIR (Linux; POSIX allows EPERM)."""
    os.mkdir(p("ud"))
    return expect_errno(lambda: os.unlink(p("ud")), errno.EISDIR, errno.EPERM)


@check
def symlink_make():
    """symlink makes a symbolic link."""
    os.symlink("target", p("sl"))
    return None if os.readlink(p("sl")) == "target" else "wrong target"


@check
def hard_link():
    """link makes a second name for the same file (st_nlink 2)."""
    put(p("hl"), b"x")
    os.link(p("hl"), p("hl2"))
    return None if os.stat(p("hl")).st_nlink == 2 else "st_nlink %d" % os.stat(p("hl")).st_nlink


@check
def mkfifo_make():
    """mkfifo makes a FIFO."""
    os.mkfifo(p("fifo"))
    return None if stat.S_ISFIFO(os.stat(p("fifo")).st_mode) else "not a FIFO"


@check
def fsync_ok():
    """fsync of a written file succeeds."""
    fd = os.open(p("fs"), os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"x")
    os.fsync(fd)
    os.close(fd)
    return None


for fn in checks:
    try:
        why = fn()
    except OSError as e:
        why = "%s: %s" % (errno.errorcode.get(e.errno, e.errno), e.strerror)
    print("%-26s %s" % (fn.__name__, "PASS" if why is None else "FAIL " + why))
