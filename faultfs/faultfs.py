#!/usr/bin/env python3
"""faultfs: a FUSE file system that forgets what was not made durable.

It passes every operation through to a backing folder, and keeps apart what a power cut would
leave: the *durable image*. At mount, the whole backing tree is durable. From then on:

- a file's data becomes durable with `fsync`/`fdatasync` on it (its size, content and mode);
- a directory's entries (names created, removed, renamed in or out, hard links) become durable
  with `fsync` on the directory itself.

That is the conservative reading of ext4's rules: `fsync` of a new file is *not* taken to make
its name durable (ext4 in practice often commits it with the same journal transaction, but no
API promises it), and a rename is durable only once both directories are fsync'd. A name whose
directory was fsync'd but whose data never was comes back empty, as delayed allocation can
leave it.

SIGUSR1 cuts the power: faultfs unmounts, rewrites the backing folder to the durable image, and
mounts it again (a reboot: processes that had files open must be gone; kill them first). The
mount then shows only what was durable, and that becomes the new durable image.

    faultfs.py BACKING MOUNTPOINT [--state FILE]
"""
import argparse
import ctypes
import errno
import os
import shutil
import signal
import stat as stat_m
import sys
from collections import defaultdict
from os import fsdecode, fsencode

import pyfuse3
import trio

RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)
_libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]


def renameat2(old, new, flags):
    if _libc.renameat2(-100, fsencode(old), -100, fsencode(new), flags) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


class DurableImage:
    """What survives a power cut: per directory inode its entries, per file inode its data."""

    def __init__(self, root):
        self.entries = {}  # dir inode -> {name: inode}
        self.files = {}  # file inode -> (mode, bytes)
        self.links = {}  # symlink inode -> target
        self.root_ino = os.lstat(root).st_ino
        self.take_tree(root)

    def take_tree(self, root):
        for directory, names, files in os.walk(root):
            self.take_directory(directory)
            for name in files:
                path = os.path.join(directory, name)
                self.take_file(path)

    def take_directory(self, path):
        names = {}
        for entry in os.scandir(path):
            info = entry.stat(follow_symlinks=False)
            names[entry.name] = info.st_ino
            if stat_m.S_ISLNK(info.st_mode):
                self.links[info.st_ino] = os.readlink(entry.path)
            elif stat_m.S_ISDIR(info.st_mode):
                self.entries.setdefault(info.st_ino, {})
        self.entries[os.lstat(path).st_ino] = names

    def take_file(self, path):
        info = os.lstat(path)
        if stat_m.S_ISREG(info.st_mode):
            with open(path, "rb") as f:
                self.files[info.st_ino] = (stat_m.S_IMODE(info.st_mode), f.read())

    def write_to(self, folder):
        """Writes the image as a fresh tree in `folder` (empty)."""
        made = {}

        def fill(dir_ino, path, seen):
            for name, ino in sorted(self.entries.get(dir_ino, {}).items()):
                target = os.path.join(path, name)
                if ino in self.entries and ino not in seen:
                    os.mkdir(target)
                    fill(ino, target, seen | {ino})
                elif ino in self.links:
                    os.symlink(self.links[ino], target)
                elif ino in made:
                    os.link(made[ino], target)
                else:
                    mode, data = self.files.get(ino, (0o644, b""))
                    with open(target, "wb") as f:
                        f.write(data)
                    os.chmod(target, mode)
                    made[ino] = target

        fill(self.root_ino, folder, {self.root_ino})


class Operations(pyfuse3.Operations):
    """Pass-through to the backing folder, telling the durable image what fsync makes durable."""

    def __init__(self, backing, image):
        super().__init__()
        self.backing = backing
        self.image = image
        self.paths = {pyfuse3.ROOT_INODE: backing}
        self.lookups = defaultdict(int)
        self.fds = {}  # fh -> inode

    # -- inodes and paths

    def ino(self, inode):
        return self.image.root_ino if inode == pyfuse3.ROOT_INODE else inode

    def path(self, inode):
        try:
            value = self.paths[inode]
        except KeyError:
            raise pyfuse3.FUSEError(errno.ENOENT)
        return next(iter(value)) if isinstance(value, set) else value

    def remember(self, inode, path):
        self.lookups[inode] += 1
        value = self.paths.get(inode)
        if value is None:
            self.paths[inode] = path
        elif isinstance(value, set):
            value.add(path)
        elif value != path:
            self.paths[inode] = {value, path}

    def forget_path(self, inode, path):
        value = self.paths.get(inode)
        if isinstance(value, set):
            value.discard(path)
            if len(value) == 1:
                self.paths[inode] = next(iter(value))
        elif value == path:
            del self.paths[inode]

    def moved(self, old, new):
        """Paths under `old` are under `new` now (a rename)."""
        for inode, value in list(self.paths.items()):
            for path in (value if isinstance(value, set) else {value}):
                if path == old or path.startswith(old + "/"):
                    self.forget_path(inode, path)
                    self.remember(inode, new + path[len(old):])
                    self.lookups[inode] -= 1

    async def forget(self, inode_list):
        for inode, count in inode_list:
            self.lookups[inode] -= count
            if self.lookups[inode] <= 0 and inode != pyfuse3.ROOT_INODE and inode not in self.fds.values():
                self.lookups.pop(inode, None)
                self.paths.pop(inode, None)

    def attributes(self, path=None, fd=None):
        try:
            info = os.lstat(path) if fd is None else os.fstat(fd)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        entry = pyfuse3.EntryAttributes()
        for name in ("st_ino", "st_mode", "st_nlink", "st_uid", "st_gid", "st_rdev", "st_size",
                     "st_atime_ns", "st_mtime_ns", "st_ctime_ns"):
            setattr(entry, name, getattr(info, name))
        if info.st_ino == self.image.root_ino:
            entry.st_ino = pyfuse3.ROOT_INODE
        entry.generation = 0
        entry.entry_timeout = 0
        entry.attr_timeout = 0
        entry.st_blksize = 4096
        entry.st_blocks = (info.st_size + 511) // 512
        return entry

    def run(self, call, *args):
        try:
            return call(*args)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)

    # -- names

    async def lookup(self, parent, name, ctx=None):
        path = os.path.join(self.path(parent), fsdecode(name))
        entry = self.attributes(path=path)
        if fsdecode(name) not in (".", ".."):
            self.remember(entry.st_ino, path)
        return entry

    async def getattr(self, inode, ctx=None):
        return self.attributes(path=self.path(inode))

    async def setattr(self, inode, attr, fields, fh, ctx):
        path = self.path(inode)
        if fields.update_size:
            self.run(os.truncate, path, attr.st_size)
        if fields.update_mode:
            self.run(os.chmod, path, stat_m.S_IMODE(attr.st_mode))
        if fields.update_uid or fields.update_gid:
            uid = attr.st_uid if fields.update_uid else -1
            gid = attr.st_gid if fields.update_gid else -1
            self.run(lambda: os.chown(path, uid, gid, follow_symlinks=False))
        if fields.update_atime or fields.update_mtime:
            old = self.run(os.lstat, path)
            times = (attr.st_atime_ns if fields.update_atime else old.st_atime_ns,
                     attr.st_mtime_ns if fields.update_mtime else old.st_mtime_ns)
            self.run(lambda: os.utime(path, ns=times, follow_symlinks=False))
        return await self.getattr(inode)

    async def readlink(self, inode, ctx):
        return fsencode(self.run(os.readlink, self.path(inode)))

    async def opendir(self, inode, ctx):
        return inode

    async def readdir(self, inode, offset, token):
        path = self.path(inode)
        entries = []
        for name in self.run(os.listdir, path):
            entry = self.attributes(path=os.path.join(path, name))
            entries.append((entry.st_ino, name, entry))
        for index, (ino, name, entry) in enumerate(sorted(entries)):
            if index < offset:
                continue
            if not pyfuse3.readdir_reply(token, fsencode(name), entry, index + 1):
                break
            self.remember(ino, os.path.join(path, name))

    async def releasedir(self, fh):
        pass

    async def mkdir(self, parent, name, mode, ctx):
        path = os.path.join(self.path(parent), fsdecode(name))
        self.run(os.mkdir, path, mode & ~ctx.umask)
        entry = self.attributes(path=path)
        self.remember(entry.st_ino, path)
        return entry

    async def mknod(self, parent, name, mode, rdev, ctx):
        # A Unix socket bound in the mount (the agent's control socket) is made this way.
        path = os.path.join(self.path(parent), fsdecode(name))
        self.run(lambda: os.mknod(path, mode & ~ctx.umask, rdev))
        entry = self.attributes(path=path)
        self.remember(entry.st_ino, path)
        return entry

    async def rmdir(self, parent, name, ctx):
        path = os.path.join(self.path(parent), fsdecode(name))
        inode = self.run(os.lstat, path).st_ino
        self.run(os.rmdir, path)
        self.forget_path(inode, path)

    async def unlink(self, parent, name, ctx):
        path = os.path.join(self.path(parent), fsdecode(name))
        inode = self.run(os.lstat, path).st_ino
        self.run(os.unlink, path)
        self.forget_path(inode, path)

    async def symlink(self, parent, name, target, ctx):
        path = os.path.join(self.path(parent), fsdecode(name))
        self.run(os.symlink, fsdecode(target), path)
        entry = self.attributes(path=path)
        self.remember(entry.st_ino, path)
        return entry

    async def link(self, inode, parent, name, ctx):
        path = os.path.join(self.path(parent), fsdecode(name))
        self.run(lambda: os.link(self.path(inode), path, follow_symlinks=False))
        self.remember(inode, path)
        return self.attributes(path=path)

    async def rename(self, parent_old, name_old, parent_new, name_new, flags, ctx):
        old = os.path.join(self.path(parent_old), fsdecode(name_old))
        new = os.path.join(self.path(parent_new), fsdecode(name_new))
        self.run(renameat2, old, new, flags)
        if flags & RENAME_EXCHANGE:
            swap = old + "\0swap"
            self.moved(old, swap)
            self.moved(new, old)
            self.moved(swap, new)
        else:
            self.moved(old, new)

    async def statfs(self, ctx):
        info = self.run(os.statvfs, self.backing)
        result = pyfuse3.StatvfsData()
        for name in ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_favail"):
            setattr(result, name, getattr(info, name))
        result.f_namemax = info.f_namemax
        return result

    # -- data

    async def open(self, inode, flags, ctx):
        fd = self.run(os.open, self.path(inode), flags & ~os.O_CREAT)
        self.fds[fd] = inode
        return pyfuse3.FileInfo(fh=fd)

    async def create(self, parent, name, mode, flags, ctx):
        path = os.path.join(self.path(parent), fsdecode(name))
        fd = self.run(os.open, path, flags | os.O_CREAT, mode & ~ctx.umask)
        entry = self.attributes(fd=fd)
        self.remember(entry.st_ino, path)
        self.fds[fd] = entry.st_ino
        return pyfuse3.FileInfo(fh=fd), entry

    async def read(self, fh, offset, length):
        return self.run(os.pread, fh, length, offset)

    async def write(self, fh, offset, data):
        return self.run(os.pwrite, fh, data, offset)

    async def flush(self, fh):
        pass

    async def release(self, fh):
        self.fds.pop(fh, None)
        self.run(os.close, fh)

    async def fsync(self, fh, datasync):
        # Read through a descriptor of our own: the one fsync'd may be write-only.
        reader = self.run(os.open, f"/proc/self/fd/{fh}", os.O_RDONLY)
        try:
            info = os.fstat(reader)
            data = b"".join(iter(lambda: os.read(reader, 1 << 20), b""))
        finally:
            os.close(reader)
        self.image.files[info.st_ino] = (stat_m.S_IMODE(info.st_mode), data)

    async def fsyncdir(self, fh, datasync):
        self.image.take_directory(self.path(fh))

    # -- extended attributes (the agent copies user.* attributes and ACLs on save)

    async def getxattr(self, inode, name, ctx):
        return self.run(lambda: os.getxattr(self.path(inode), name, follow_symlinks=False))

    async def setxattr(self, inode, name, value, ctx):
        self.run(lambda: os.setxattr(self.path(inode), name, value, follow_symlinks=False))

    async def listxattr(self, inode, ctx):
        return [fsencode(n) for n in self.run(lambda: os.listxattr(self.path(inode), follow_symlinks=False))]

    async def removexattr(self, inode, name, ctx):
        self.run(lambda: os.removexattr(self.path(inode), name, follow_symlinks=False))


def cut_power(backing, image):
    """Rewrites `backing` to the durable image (nothing is mounted over it now)."""
    fresh = backing.rstrip("/") + ".cut"
    shutil.rmtree(fresh, ignore_errors=True)
    os.mkdir(fresh)
    image.write_to(fresh)
    for name in os.listdir(backing):
        path = os.path.join(backing, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    for name in os.listdir(fresh):
        os.rename(os.path.join(fresh, name), os.path.join(backing, name))
    os.rmdir(fresh)
    os.sync()


async def serve(backing, mountpoint, state, generation):
    """Mounts until SIGUSR1 (a cut: returns True) or SIGTERM/SIGINT (returns False); once mounted,
    writes `PID GENERATION` to the state file, if any."""
    image = DurableImage(backing)
    operations = Operations(backing, image)
    options = set(pyfuse3.default_options)
    options.add("fsname=faultfs")
    options.discard("default_permissions")
    pyfuse3.init(operations, mountpoint, options)
    if state:
        with open(state + ".tmp", "w") as f:
            f.write(f"{os.getpid()} {generation}\n")
        os.rename(state + ".tmp", state)
    cut = False
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(pyfuse3.main)
            with trio.open_signal_receiver(signal.SIGUSR1, signal.SIGTERM, signal.SIGINT) as signals:
                async for number in signals:
                    cut = number == signal.SIGUSR1
                    break
            nursery.cancel_scope.cancel()
    finally:
        pyfuse3.close(unmount=True)
    if cut:
        cut_power(backing, image)
    return cut


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("backing")
    parser.add_argument("mountpoint")
    parser.add_argument("--state", help="a file that says `PID GENERATION` once mounted, again after each cut")
    args = parser.parse_args()
    backing = os.path.abspath(args.backing)
    generation = 0
    while trio.run(serve, backing, os.path.abspath(args.mountpoint), args.state, generation):
        generation += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
