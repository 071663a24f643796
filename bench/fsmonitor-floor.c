/*
 * fsmonitor-floor.c — git's floor for figure 12 of bench/compare: a core.fsmonitor hook
 * (protocol version 2) that answers "nothing changed" at once. Compiled and run by bench/compare
 * (`cc -O2 fsmonitor-floor.c -o fsmonitor-floor`); not part of the package.
 *
 *   fsmonitor-floor 2 TOKEN
 *       Prints TOKEN and a NUL, and nothing else: the token git gave back as the new one, and no
 *       path. git then trusts every entry its index marks as unchanged, so a `git status` with this
 *       hook costs what git itself costs with any hook, and sees none of the files changed since
 *       (that is the point of a floor). git runs it directly (a path without spaces is not given to
 *       a shell), so it adds only a fork, an exec and a write.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3 || strcmp(argv[1], "2") != 0) {
        fprintf(stderr, "fsmonitor-floor: expected `2 TOKEN` (hook protocol version 2), got %d arguments\n", argc - 1);
        return 1;
    }
    size_t length = strlen(argv[2]) + 1; /* the token and its NUL */
    return write(STDOUT_FILENO, argv[2], length) == (ssize_t)length ? 0 : 1;
}
