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
 *
 *   floor clients SOCKET SECONDS WINDOW SIZE TARGET...
 *       The socket clients (figure 7): one process per TARGET, each on its own connection,
 *       keeping WINDOW JSON-RPC `write` requests of SIZE-byte content to TARGET in flight for
 *       SECONDS. Answers come back in order on a connection, so each is timed against the oldest
 *       request outstanding. Written in C so the clients' own cost stays small next to the
 *       server's on a 2-core machine. Prints "completed N", "errors N", "p50 NS", "p99 NS" and,
 *       when a request was refused, "error LINE" with the first refusal.
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
#include <sys/wait.h>
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

/* A stream socket and the address of PATH, for bind or connect. */
static int unix_socket(const char *path, struct sockaddr_un *address) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("cannot create socket for", path);
    *address = (struct sockaddr_un){.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof address->sun_path) {
        errno = ENAMETOOLONG;
        fail("the socket path is too long:", path);
    }
    strcpy(address->sun_path, path);
    return fd;
}

static _Noreturn void echo(const char *path) {
    struct sockaddr_un address;
    int server = unix_socket(path, &address);
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

/* One client's tallies, sent to the parent through a pipe. */
struct tally {
    long completed, errors;
    char first_error[200];
};

static int connect_to(const char *path) {
    struct sockaddr_un address;
    int fd = unix_socket(path, &address);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) fail("cannot connect to", path);
    return fd;
}

/* Runs one client until `end`; latencies (ns) of the answers read before `end` go to `latencies`. */
static struct tally run_client(int fd, const char *target, long window, long size, int64_t start, int64_t end,
                               int64_t *latencies, long capacity) {
    struct tally tally = {0};
    int64_t *sent_at = calloc((size_t)window, sizeof *sent_at);
    char *filler = malloc((size_t)size + 1);
    long fill = size > 24 ? size - 24 : 0;
    memset(filler, 'x', (size_t)fill);
    filler[fill] = 0;
    char *request = malloc((size_t)size + strlen(target) + 256);
    static char input[1 << 16];
    size_t pending = 0;
    long head = 0, outstanding = 0, next_id = 1;
    while (now_ns() < start) {
    }
    for (;;) {
        int64_t stamp = now_ns();
        while (outstanding < window && stamp < end) {
            int length = sprintf(request,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"write\",\"params\":{\"path\":\"%s\","
                                 "\"content\":\"edit %ld %s\\n\"}}\n",
                                 next_id, target, next_id, filler);
            write_all(fd, request, (size_t)length, target);
            sent_at[(head + outstanding) % window] = stamp;
            outstanding++;
            next_id++;
        }
        if (outstanding == 0) break;
        ssize_t n = read(fd, input + pending, sizeof input - pending);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("cannot read from the server for", target);
        if (n == 0) {
            errno = ECONNRESET;
            fail("the server closed the connection for", target);
        }
        stamp = now_ns();
        pending += (size_t)n;
        char *line = input, *newline;
        while ((newline = memchr(line, '\n', pending - (size_t)(line - input))) != NULL) {
            *newline = 0;
            if (strstr(line, "\"error\"") != NULL) {
                if (tally.errors++ == 0) snprintf(tally.first_error, sizeof tally.first_error, "%.199s", line);
            }
            int64_t started = sent_at[head];
            head = (head + 1) % window;
            outstanding--;
            if (stamp <= end) {
                if (tally.completed < capacity) latencies[tally.completed] = stamp - started;
                tally.completed++;
            }
            line = newline + 1;
        }
        pending -= (size_t)(line - input);
        memmove(input, line, pending);
        if (pending == sizeof input) {
            errno = EMSGSIZE;
            fail("an answer longer than 64 KiB came for", target);
        }
    }
    free(sent_at);
    free(filler);
    free(request);
    return tally;
}

static int compare_ns(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int clients(const char *path, double seconds, long window, long size, int count, char **targets) {
    /* Every client connects first; then all start together, well after the last fork. */
    long capacity = 4000000;
    int64_t start = now_ns() + 300000000, end = start + (int64_t)(seconds * 1e9);
    int results[count], latency_files[count];
    pid_t children[count];
    for (int i = 0; i < count; i++) {
        int pipe_fds[2];
        if (pipe(pipe_fds) != 0) fail("cannot make a pipe for", targets[i]);
        char name[] = "/tmp/floor-latencies-XXXXXX";
        int latency_file = mkstemp(name);
        if (latency_file < 0) fail("cannot make a temp file for", targets[i]);
        unlink(name);
        pid_t child = fork();
        if (child < 0) fail("cannot fork a client for", targets[i]);
        if (child == 0) {
            close(pipe_fds[0]);
            int fd = connect_to(path);
            int64_t *latencies = malloc((size_t)capacity * sizeof *latencies);
            struct tally tally = run_client(fd, targets[i], window, size, start, end, latencies, capacity);
            long kept = tally.completed < capacity ? tally.completed : capacity;
            write_all(latency_file, (const char *)latencies, (size_t)kept * sizeof *latencies, "the latency file");
            write_all(pipe_fds[1], (const char *)&tally, sizeof tally, "the result pipe");
            _exit(0);
        }
        close(pipe_fds[1]);
        results[i] = pipe_fds[0];
        latency_files[i] = latency_file;
        children[i] = child;
    }
    long completed = 0, errors = 0, kept = 0;
    char first_error[200] = "";
    int64_t *all = malloc((size_t)capacity * (size_t)count * sizeof *all);
    for (int i = 0; i < count; i++) {
        struct tally tally;
        ssize_t n = read(results[i], &tally, sizeof tally);
        int status = 0;
        waitpid(children[i], &status, 0);
        if (n != (ssize_t)sizeof tally || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "floor: client %d (%s) failed\n", i + 1, targets[i]);
            return 1;
        }
        completed += tally.completed;
        if (tally.errors > 0 && errors == 0) snprintf(first_error, sizeof first_error, "%s", tally.first_error);
        errors += tally.errors;
        off_t bytes = lseek(latency_files[i], 0, SEEK_END);
        if (pread(latency_files[i], all + kept, (size_t)bytes, 0) != bytes) fail("cannot read the latencies of", targets[i]);
        kept += bytes / (off_t)sizeof *all;
    }
    if (kept == 0) {
        fprintf(stderr, "floor: no request was answered within %.1f s\n", seconds);
        return 1;
    }
    qsort(all, (size_t)kept, sizeof *all, compare_ns);
    printf("completed %ld\nerrors %ld\np50 %lld\np99 %lld\n", completed, errors, (long long)all[kept / 2],
           (long long)all[(kept * 99) / 100]);
    if (errors > 0) printf("error %s\n", first_error);
    return 0;
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
    if (argc >= 7 && strcmp(argv[1], "clients") == 0) {
        double seconds = atof(argv[3]);
        long window = atol(argv[4]), size = atol(argv[5]);
        if (seconds <= 0 || window < 1 || size < 0) {
            fprintf(stderr, "floor: SECONDS must be > 0, WINDOW >= 1, SIZE >= 0\n");
            return 2;
        }
        return clients(argv[2], seconds, window, size, argc - 6, argv + 6);
    }
    fprintf(stderr, "usage: floor save DIR SIZE COUNT NFILES | floor serve DIR SIZE | floor echo SOCKET\n"
                    "       floor clients SOCKET SECONDS WINDOW SIZE TARGET...\n");
    return 2;
}
