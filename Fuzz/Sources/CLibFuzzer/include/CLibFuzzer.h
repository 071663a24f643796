// The one libFuzzer entry point the fuzz targets call: each target's main.swift hands its
// command line and its test function to libFuzzer's driver. (SwiftPM gives every executable a
// `main`, so libFuzzer's own `main` cannot be used; Fuzz/run links libFuzzer without it.)
#ifndef C_LIBFUZZER_H
#define C_LIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer with the process's arguments (corpus directories, -max_total_time=…),
/// calling `test` once per input; returns the exit status libFuzzer would exit with.
int fuzz_main(int argc, char **argv, int (*test)(const uint8_t *data, size_t size));

#endif
