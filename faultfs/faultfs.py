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
mount then shows only what was durable, and that becomes the new durable image. SIGUSR2 is a
torn cut: a random prefix of the volatile operations (writes, truncations, mode changes, each
call's name changes together), in the order they were made, reaches the image first, as a
partial flush would leave it; where it stops inside a write, a random part of that write's first
bytes is kept too.

    faultfs.py BACKING MOUNTPOINT [--state FILE] [--seed N]
"""
import argparse
import ctypes
import errno
import os
import random
import shutil
import signal
import stat as stat_m
import sys
from collections import defaultdict
from os import fsdecode, fsencode

import pyfuse3
import trio

TRACE = bool(os.environ.get("FAULTFS_TRACE"))  # every volatile operation and fsync'd folder, on stderr
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)
_libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]


def renameat2(old, new, flags):
    if _libc.renameat2(-100, fsencode(old), -100, fsencode(new), flags) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


class DurableImage:
    """What survives a power cut: per directory its entries, per file its data, per symlink its
    target; and, in order, the operations made since that are still volatile (for a torn cut).

    Objects are keyed by an id of faultfs's own, not by inode number: the backing file system
    reuses the number of an unlinked file for the next one it makes, while the durable image may
    still hold the old file under a name whose removal was never made durable.
    """

    def __init__(self, root):
        self.ids = {}  # backing inode -> id of the object it is now
        self.last_id = 0
        self.entries = {}  # dir id -> {name: id}
        self.files = {}  # file id -> (mode, bytes)
        self.links = {}  # symlink id -> target
        self.nodes = {}  # socket, fifo or device id -> (mode, rdev)
        self.pending = []  # volatile operations, in order (see `apply`)
        self.root_id = self.fresh(os.lstat(root).st_ino)
        self.take_tree(root)

    def fresh(self, ino):
        """A new object now has inode `ino` (which an unlinked one may have had before)."""
        self.last_id += 1
        self.ids[ino] = self.last_id
        return self.last_id

    def id(self, ino):
        return self.ids.get(ino) or self.fresh(ino)

    def take_tree(self, root):
        for directory, names, files in os.walk(root):
            self.take_directory(directory)
            for name in files:
                path = os.path.join(directory, name)
                self.take_file(path)

    def take_directory(self, path):
        """The directory's entries, as they are now, become durable."""
        names = {}
        for entry in os.scandir(path):
            info = entry.stat(follow_symlinks=False)
            names[entry.name] = self.id(info.st_ino)
            if stat_m.S_ISLNK(info.st_mode):
                self.links[names[entry.name]] = os.readlink(entry.path)
            elif not stat_m.S_ISREG(info.st_mode) and not stat_m.S_ISDIR(info.st_mode):
                self.nodes[names[entry.name]] = (info.st_mode, info.st_rdev)
            elif stat_m.S_ISDIR(info.st_mode):
                self.entries.setdefault(names[entry.name], {})
        directory = self.id(os.lstat(path).st_ino)
        self.entries[directory] = names
        if TRACE:
            print(f"faultfs: durable {path} (id {directory}): {names}"[:300], file=sys.stderr, flush=True)
        self.pending = [op for op in (self.without_directory(op, directory) for op in self.pending) if op]

    def take_file(self, path, descriptor=None):
        """The file's data and mode, as they are now, become durable."""
        info = os.lstat(path) if descriptor is None else os.fstat(descriptor)
        if not stat_m.S_ISREG(info.st_mode):
            return
        if descriptor is None:
            with open(path, "rb") as f:
                data = f.read()
        else:
            data = b"".join(iter(lambda: os.read(descriptor, 1 << 20), b""))
        file = self.id(info.st_ino)
        self.files[file] = (stat_m.S_IMODE(info.st_mode), data)
        self.pending = [op for op in self.pending if not (op[0] in ("data", "size", "mode") and op[1] == file)]

    @staticmethod
    def without_directory(op, directory):
        """`op` less what it changes in `directory` (made durable), or None when nothing is left."""
        if op[0] != "names":
            return op
        changes = [change for change in op[1] if change[0] != directory]
        return ("names", changes, op[2]) if changes else None

    # -- the volatile operations

    def record(self, *op):
        """One volatile operation: ("data", id, offset, bytes), ("size", id, size), ("mode", id,
        mode), or ("names", [(dir id, name, id or None)], new object or None) — the entries a
        call changed together (a rename is one), and the object it made: ("dir", id),
        ("file", id, mode), ("symlink", id, target), ("node", id, mode, rdev)."""
        self.pending.append(op)
        if TRACE:
            print(f"faultfs: {op[0]} {op[1] if op[0] != 'names' else op[1:]}"[:300], file=sys.stderr, flush=True)

    def apply(self, op):
        kind = op[0]
        if kind in ("data", "size", "mode"):
            mode, data = self.files.get(op[1], (0o644, b""))
            if kind == "data":
                offset, written = op[2], op[3]
                data = data[:offset].ljust(offset, b"\0") + written + data[offset + len(written):]
            elif kind == "size":
                data = data[:op[2]].ljust(op[2], b"\0")
            else:
                mode = op[2]
            self.files[op[1]] = (mode, data)
            return
        made = op[2]
        if made and made[0] == "dir":
            self.entries.setdefault(made[1], {})
        elif made and made[0] == "file":
            self.files.setdefault(made[1], (made[2], b""))
        elif made and made[0] == "symlink":
            self.links[made[1]] = made[2]
        elif made and made[0] == "node":
            self.nodes[made[1]] = (made[2], made[3])
        for directory, name, target in op[1]:
            names = self.entries.setdefault(directory, {})
            if target is None:
                names.pop(name, None)
            else:
                names[name] = target

    def tear(self, rng):
        """A torn flush: a random prefix of the volatile operations reaches the disk, in order,
        and of a write where it stops, a random part of its first bytes (a record half on the
        platter). Returns (whole operations kept, bytes of the next one kept, operations)."""
        kept = rng.randint(0, len(self.pending))
        for op in self.pending[:kept]:
            self.apply(op)
        part = 0
        if kept < len(self.pending) and self.pending[kept][0] == "data" and len(self.pending[kept][3]) > 1:
            kind, file, offset, data = self.pending[kept]
            part = rng.randrange(1, len(data))
            self.apply((kind, file, offset, data[:part]))
        return kept, part, len(self.pending)

    def write_to(self, folder):
        """Writes the image as a fresh tree in `folder` (empty)."""
        made = {}

        def fill(directory, path, seen):
            for name, object_id in sorted(self.entries.get(directory, {}).items()):
                target = os.path.join(path, name)
                if object_id in self.entries and object_id not in seen:
                    os.mkdir(target)
                    fill(object_id, target, seen | {object_id})
                elif object_id in self.links:
                    os.symlink(self.links[object_id], target)
                elif object_id in self.nodes:
                    os.mknod(target, *self.nodes[object_id])  # a socket is left behind as it was
                elif object_id in made:
                    os.link(made[object_id], target)
                else:
                    mode, data = self.files.get(object_id, (0o644, b""))
                    with open(target, "wb") as f:
                        f.write(data)
                    os.chmod(target, mode)
                    made[object_id] = target

        fill(self.root_id, folder, {self.root_id})


class Operations(pyfuse3.Operations):
    """Pass-through to the backing folder, telling the durable image what fsync makes durable."""

    def __init__(self, backing, image):
        super().__init__()
        self.backing = backing
        self.image = image
        self.root_ino = os.lstat(backing).st_ino
        self.paths = {pyfuse3.ROOT_INODE: backing}
        self.lookups = defaultdict(int)
        self.fds = {}  # fh -> inode

    # -- inodes and paths

    def ino(self, inode):
        return self.root_ino if inode == pyfuse3.ROOT_INODE else inode

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
        if info.st_ino == self.root_ino:
            entry.st_ino = pyfuse3.ROOT_INODE
        entry.generation = 0
        entry.entry_timeout = 0
        entry.attr_timeout = 0
        entry.st_blksize = 4096
        entry.st_blocks = (info.st_size + 511) // 512
        return entry

    def names(self, *changes, made=None):
        """Records entries changed together: (parent path, name, inode or None)."""
        image = self.image
        self.image.record("names", [(image.id(os.lstat(parent).st_ino), name, None if ino is None else image.id(ino))
                                    for parent, name, ino in changes], made)

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
            self.image.record("size", self.image.id(self.ino(inode)), attr.st_size)
        if fields.update_mode:
            self.run(os.chmod, path, stat_m.S_IMODE(attr.st_mode))
            self.image.record("mode", self.image.id(self.ino(inode)), stat_m.S_IMODE(attr.st_mode))
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

    def made(self, parent, name, path, kind, details=lambda entry: ()):
        """Records an object just made at `path` (a new id: its inode number may be a reused one);
        `details(entry)` completes what the image needs of it (a mode, a target)."""
        entry = self.attributes(path=path)
        self.remember(entry.st_ino, path)
        made = self.image.fresh(entry.st_ino)
        self.names((self.path(parent), fsdecode(name), entry.st_ino), made=(kind, made, *details(entry)))
        return entry

    def removed(self, parent, name, remove):
        path = os.path.join(self.path(parent), fsdecode(name))
        inode = self.run(os.lstat, path).st_ino
        self.run(remove, path)
        self.forget_path(inode, path)
        self.names((self.path(parent), fsdecode(name), None))

    async def mkdir(self, parent, name, mode, ctx):
        path = os.path.join(self.path(parent), fsdecode(name))
        self.run(os.mkdir, path, mode & ~ctx.umask)
        return self.made(parent, name, path, "dir")

    async def mknod(self, parent, name, mode, rdev, ctx):
        # A Unix socket bound in the mount (the agent's control socket) is made this way.
        path = os.path.join(self.path(parent), fsdecode(name))
        self.run(lambda: os.mknod(path, mode & ~ctx.umask, rdev))
        return self.made(parent, name, path, "node", lambda entry: (entry.st_mode, entry.st_rdev))

    async def rmdir(self, parent, name, ctx):
        self.removed(parent, name, os.rmdir)

    async def unlink(self, parent, name, ctx):
        self.removed(parent, name, os.unlink)

    async def symlink(self, parent, name, target, ctx):
        path = os.path.join(self.path(parent), fsdecode(name))
        self.run(os.symlink, fsdecode(target), path)
        return self.made(parent, name, path, "symlink", lambda entry: (fsdecode(target),))

    async def link(self, inode, parent, name, ctx):
        path = os.path.join(self.path(parent), fsdecode(name))
        self.run(lambda: os.link(self.path(inode), path, follow_symlinks=False))
        self.remember(inode, path)
        self.names((self.path(parent), fsdecode(name), self.ino(inode)))
        return self.attributes(path=path)

    async def rename(self, parent_old, name_old, parent_new, name_new, flags, ctx):
        old = os.path.join(self.path(parent_old), fsdecode(name_old))
        new = os.path.join(self.path(parent_new), fsdecode(name_new))
        old_ino = self.run(os.lstat, old).st_ino
        try:
            new_ino = os.lstat(new).st_ino
        except FileNotFoundError:
            new_ino = None
        self.run(renameat2, old, new, flags)
        if new_ino is not None and not flags & RENAME_EXCHANGE:
            # The file renamed over loses its name: a path kept for it would later name whatever
            # file reuses its inode number.
            self.forget_path(new_ino, new)
            new_ino = None
        self.names((self.path(parent_old), fsdecode(name_old), new_ino),
                   (self.path(parent_new), fsdecode(name_new), old_ino))
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
        if flags & os.O_TRUNC:
            self.image.record("size", self.image.id(self.ino(inode)), 0)
        return pyfuse3.FileInfo(fh=fd)

    async def create(self, parent, name, mode, flags, ctx):
        path = os.path.join(self.path(parent), fsdecode(name))
        fd = self.run(os.open, path, flags | os.O_CREAT, mode & ~ctx.umask)
        # The kernel asks for `create` only where its lookup found no file: this one is new.
        entry = self.made(parent, name, path, "file", lambda entry: (stat_m.S_IMODE(entry.st_mode),))
        self.fds[fd] = entry.st_ino
        return pyfuse3.FileInfo(fh=fd), entry

    async def read(self, fh, offset, length):
        return self.run(os.pread, fh, length, offset)

    async def write(self, fh, offset, data):
        written = self.run(os.pwrite, fh, data, offset)
        self.image.record("data", self.image.id(os.fstat(fh).st_ino), offset, bytes(data[:written]))
        return written

    async def flush(self, fh):
        pass

    async def release(self, fh):
        self.fds.pop(fh, None)
        self.run(os.close, fh)

    async def fsync(self, fh, datasync):
        # Read through a descriptor of our own: the one fsync'd may be write-only.
        reader = self.run(os.open, f"/proc/self/fd/{fh}", os.O_RDONLY)
        try:
            self.image.take_file(None, descriptor=reader)
        finally:
            os.close(reader)

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


def cut_power(backing, image, rng=None):
    """Rewrites `backing` to the durable image (nothing is mounted over it now); with `rng`, a
    torn flush: a random prefix of the volatile operations is kept."""
    if rng is not None:
        kept, part, of = image.tear(rng)
        print(f"faultfs: torn cut: kept {kept} of {of} volatile operations"
              + (f" and {part} bytes of the next write" if part else ""), file=sys.stderr, flush=True)
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


async def serve(backing, mountpoint, state, generation, rng):
    """Mounts until SIGUSR1 (a cut), SIGUSR2 (a torn cut) or SIGTERM/SIGINT; returns whether the
    power was cut. Once mounted, writes `PID GENERATION` to the state file, if any."""
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
            with trio.open_signal_receiver(signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGINT) as signals:
                async for number in signals:
                    cut = number in (signal.SIGUSR1, signal.SIGUSR2)
                    torn = number == signal.SIGUSR2
                    break
            nursery.cancel_scope.cancel()
    finally:
        pyfuse3.close(unmount=True)
    if cut:
        cut_power(backing, image, rng if torn else None)
    return cut


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("backing")
    parser.add_argument("mountpoint")
    parser.add_argument("--state", help="a file that says `PID GENERATION` once mounted, again after each cut")
    parser.add_argument("--seed", type=int, default=0, help="seed of the torn cuts' choices")
    args = parser.parse_args()
    backing = os.path.abspath(args.backing)
    generation = 0
    rng = random.Random(args.seed)
    while trio.run(serve, backing, os.path.abspath(args.mountpoint), args.state, generation, rng):
        generation += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
