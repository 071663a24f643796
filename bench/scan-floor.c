/*
 * scan-floor.c — the set-up floor of bench figure 10: the system calls a recursive watch cannot
 * do without, and nothing else. Compiled and run by bench/scaling.py
 * (`cc -O2 -pthread scan-floor.c -o scan-floor`); not part of the package.
 *
 *   scan-floor ROOT THREADS
 *       Walks ROOT level by level as the agent does: THREADS threads share each level, and for
 *       every directory open it, watch it (the agent's event mask), read it with getdents64 until
 *       it is exhausted (d_type says which entries are directories), and close it. No ignore
 *       rules, no names kept, no paths but the directories'. Prints "dirs N", "files N" and
 *       "ms MILLISECONDS" (the walk alone; the caller times spawn to that line), then waits
 *       for its standard input to close before it exits: closing 100,000 watches takes a tenth
 *       of a second, which is not set-up, and the caller reads the CPU time used before it.
 *
 * What the agent costs beyond this is its own work: the ignore rules, the known files, the
 * tree of watches, logging, the socket.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct record { uint64_t ino; int64_t off; unsigned short length; unsigned char type; char name[]; };

static int instance;
static char **level, **next;
static long level_count, next_count, next_capacity, taken, files;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void add_next(const char *parent, const char *name) {
    size_t size = strlen(parent) + strlen(name) + 2;
    char *path = malloc(size);
    if (!path) { perror("malloc"); exit(1); }
    snprintf(path, size, "%s/%s", parent, name);
    pthread_mutex_lock(&lock);
    if (next_count == next_capacity) {
        next_capacity = next_capacity ? next_capacity * 2 : 1024;
        next = realloc(next, next_capacity * sizeof *next);
        if (!next) { perror("realloc"); exit(1); }
    }
    next[next_count++] = path;
    pthread_mutex_unlock(&lock);
}

static void probe(const char *path) {
    static const uint32_t mask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO
        | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK;
    char buffer[32768];
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    inotify_add_watch(instance, path, mask);
    long found = 0;
    for (;;) {
        long count = syscall(SYS_getdents64, fd, buffer, sizeof buffer);
        if (count <= 0) break;
        for (long offset = 0; offset < count;) {
            struct record *entry = (struct record *)(buffer + offset);
            offset += entry->length;
            const char *name = entry->name;
            if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
            if (entry->type == DT_DIR) add_next(path, name); else found++;
        }
    }
    close(fd);
    __atomic_add_fetch(&files, found, __ATOMIC_RELAXED);
}

static void *prober(void *unused) {
    (void)unused;
    for (;;) {
        long index = __atomic_fetch_add(&taken, 1, __ATOMIC_RELAXED);
        if (index >= level_count) return NULL;
        probe(level[index]);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: scan-floor ROOT THREADS\n");
        return 2;
    }
    int threads = atoi(argv[2]);
    if (threads < 1 || threads > 256) threads = 1;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    instance = inotify_init1(IN_CLOEXEC);
    if (instance < 0) { perror("inotify_init1"); return 1; }
    level = malloc(sizeof *level);
    level[0] = strdup(argv[1]);
    level_count = 1;
    long directories = 0;
    while (level_count > 0) {
        taken = 0;
        pthread_t ids[256];
        int started = 0;
        for (int i = 0; i < threads && i < level_count; i++) {
            if (pthread_create(&ids[started], NULL, prober, NULL) == 0) started++;
        }
        if (started == 0) prober(NULL);
        for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
        directories += level_count;
        for (long i = 0; i < level_count; i++) free(level[i]);
        free(level);
        level = next;
        level_count = next_count;
        next = NULL;
        next_count = next_capacity = 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("dirs %ld\nfiles %ld\nms %.1f\n", directories, files,
           (end.tv_sec - start.tv_sec) * 1e3 + (end.tv_nsec - start.tv_nsec) / 1e6);
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin)) {}
    return 0;
}
