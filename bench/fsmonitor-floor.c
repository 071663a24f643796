/*
 * fsmonitor-floor.c — git's floors for figure 12 of bench/compare: core.fsmonitor hooks (protocol
 * version 2) that cost nothing to ask. Compiled and run by bench/compare
 * (`cc -O2 fsmonitor-floor.c -o fsmonitor-floor`); not part of the package. git runs it directly
 * (a path without spaces is not given to a shell), so it adds only a fork, an exec and a write.
 *
 *   fsmonitor-floor 2 TOKEN
 *       "Nothing changed": prints TOKEN and a NUL, and nothing else: the token git gave back as
 *       the new one, and no path. git then trusts every entry its index marks as unchanged, so a
 *       `git status` with this hook costs what git itself costs with any hook, and sees none of
 *       the files changed since (that is the point of this floor).
 *
 *   FSMONITOR_FLOOR_ANSWER=FILE fsmonitor-floor 2 TOKEN
 *       The oracle: prints FILE's bytes, an answer the benchmark wrote knowing what it changed (a
 *       new token, a NUL, the changed paths, NUL-separated). What git costs with a hook that
 *       answers exactly and at once: git then reads and refreshes those paths and writes its index.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int copy_answer(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    char buffer[1 << 16];
    ssize_t count;
    while ((count = read(fd, buffer, sizeof buffer)) > 0) {
        if (write(STDOUT_FILENO, buffer, (size_t)count) != count) {
            close(fd);
            return 1;
        }
    }
    close(fd);
    return count < 0;
}

int main(int argc, char **argv) {
    if (argc != 3 || strcmp(argv[1], "2") != 0) {
        fprintf(stderr, "fsmonitor-floor: expected `2 TOKEN` (hook protocol version 2), got %d arguments\n", argc - 1);
        return 1;
    }
    const char *answer = getenv("FSMONITOR_FLOOR_ANSWER");
    if (answer != NULL)
        return copy_answer(answer);
    size_t length = strlen(argv[2]) + 1; /* the token and its NUL */
    return write(STDOUT_FILENO, argv[2], length) == (ssize_t)length ? 0 : 1;
}
