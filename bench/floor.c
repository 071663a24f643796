/*
 * floor.c — the floors bench/compare measures the agent against. Compiled and run by
 * bench/compare (`cc -O2 -pthread floor.c -o floor`); not part of the package.
 *
 *   floor save DIR SIZE COUNT NFILES
 *       The durable-write floor: COUNT times, write SIZE bytes to DIR/floor-<i % NFILES> the way a
 *       careful program must — temp file, write, fsync, rename over the target, fsync the
 *       directory. The targets exist beforehand (created and fsynced, untimed). Prints one line
 *       per iteration, "iter NANOSECONDS", then "total NANOSECONDS".
 *
 *   floor serve DIR SIZE
 *       The same durable write of DIR/floor-0, once per line read from stdin, answering
 *       "iter NANOSECONDS" after each: a long-lived process whose samples interleave with the
 *       agent's, so both see the same disk load. Prints "ready" first.
 *
 *   floor echo SOCKET
 *       The socket floor: a Unix-socket server that answers every line with the same line, one
 *       thread per connection, so the benchmark's clients can be timed against a server that does
 *       no work. Prints "listening" once bound; runs until killed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static void fail(const char *what, const char *name) {
    fprintf(stderr, "floor: %s %s: %s\n", what, name, strerror(errno));
    exit(1);
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void write_all(int fd, const char *bytes, size_t size, const char *name) {
    while (size > 0) {
        ssize_t n = write(fd, bytes, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("cannot write", name);
        }
        bytes += n;
        size -= (size_t)n;
    }
}

/* The targets exist before the timed saves, as the agent's files do. */
static int prepare(const char *dir, char *bytes, size_t size, long files) {
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) fail("cannot open directory", dir);
    char target[4096];
    memset(bytes, '-', size);
    for (long i = 0; i < files; i++) {
        snprintf(target, sizeof target, "%s/floor-%ld", dir, i);
        int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) fail("cannot create", target);
        write_all(fd, bytes, size, target);
        if (fsync(fd) != 0) fail("cannot fsync", target);
        close(fd);
    }
    if (fsync(dirfd) != 0) fail("cannot fsync directory", dir);
    return dirfd;
}

/* One durable replacement of DIR/floor-<file>; returns the nanoseconds it took. */
static int64_t save_once(const char *dir, int dirfd, char *bytes, size_t size, long iteration, long file) {
    char target[4096], temp[4096];
    int64_t t0 = now_ns();
    memset(bytes, 'a' + (int)(iteration % 26), size);
    snprintf(target, sizeof target, "%s/floor-%ld", dir, file);
    snprintf(temp, sizeof temp, "%s/.floor-%ld.tmp", dir, file);
    int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) fail("cannot create", temp);
    write_all(fd, bytes, size, temp);
    if (fsync(fd) != 0) fail("cannot fsync", temp);
    if (close(fd) != 0) fail("cannot close", temp);
    if (rename(temp, target) != 0) fail("cannot rename onto", target);
    if (fsync(dirfd) != 0) fail("cannot fsync directory", dir);
    return now_ns() - t0;
}

static int save(const char *dir, size_t size, long count, long files) {
    char *bytes = malloc(size + 1);
    if (!bytes) fail("cannot allocate", "buffer");
    int dirfd = prepare(dir, bytes, size, files);
    int64_t started = now_ns();
    for (long i = 0; i < count; i++) printf("iter %lld\n", (long long)save_once(dir, dirfd, bytes, size, i, i % files));
    printf("total %lld\n", (long long)(now_ns() - started));
    return 0;
}

/* One save per line read from stdin, answered at once, so samples interleave with the agent's. */
static int serve(const char *dir, size_t size) {
    char *bytes = malloc(size + 1);
    if (!bytes) fail("cannot allocate", "buffer");
    int dirfd = prepare(dir, bytes, size, 1);
    printf("ready\n");
    fflush(stdout);
    char line[64];
    for (long i = 0; fgets(line, sizeof line, stdin); i++) {
        printf("iter %lld\n", (long long)save_once(dir, dirfd, bytes, size, i, 0));
        fflush(stdout);
    }
    return 0;
}

static void *echo_connection(void *argument) {
    int fd = (int)(intptr_t)argument;
    char buffer[65536];
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        /* Lines come back whole and in order because every byte is echoed in order. */
        ssize_t done = 0;
        while (done < n) {
            ssize_t w = write(fd, buffer + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) goto out;
            done += w;
        }
    }
out:
    close(fd);
    return NULL;
}

static _Noreturn void echo(const char *path) {
    int server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (server < 0) fail("cannot create socket", path);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof address.sun_path) {
        errno = ENAMETOOLONG;
        fail("cannot bind", path);
    }
    strcpy(address.sun_path, path);
    unlink(path);
    if (bind(server, (struct sockaddr *)&address, sizeof address) != 0) fail("cannot bind", path);
    if (listen(server, 64) != 0) fail("cannot listen on", path);
    printf("listening\n");
    fflush(stdout);
    for (;;) {
        int client = accept4(server, NULL, NULL, SOCK_CLOEXEC);
        if (client < 0) {
            if (errno == EINTR) continue;
            fail("cannot accept on", path);
        }
        pthread_t thread;
        if (pthread_create(&thread, NULL, echo_connection, (void *)(intptr_t)client) != 0) fail("cannot start thread for", path);
        pthread_detach(thread);
    }
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "save") == 0) {
        long size = atol(argv[3]), count = atol(argv[4]), files = atol(argv[5]);
        if (size < 0 || count < 1 || files < 1) {
            fprintf(stderr, "floor: SIZE must be >= 0, COUNT and NFILES >= 1\n");
            return 2;
        }
        return save(argv[2], (size_t)size, count, files);
    }
    if (argc == 4 && strcmp(argv[1], "serve") == 0) return serve(argv[2], (size_t)atol(argv[3]));
    if (argc == 3 && strcmp(argv[1], "echo") == 0) echo(argv[2]);
    fprintf(stderr, "usage: floor save DIR SIZE COUNT NFILES | floor serve DIR SIZE | floor echo SOCKET\n");
    return 2;
}
