// Passes control to libFuzzer's driver (from libclang_rt.fuzzer_no_main, linked by Fuzz/run).
#include "CLibFuzzer.h"

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test)(const uint8_t *data, size_t size));

int fuzz_main(int argc, char **argv, int (*test)(const uint8_t *data, size_t size)) {
    return LLVMFuzzerRunDriver(&argc, &argv, test);
}
