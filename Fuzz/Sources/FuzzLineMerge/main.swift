// FuzzLineMerge's entry point: libFuzzer's driver, calling fuzzLineMerge once per input.
import CLibFuzzer
import Glibc

exit(fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { data, size in fuzzLineMerge(UnsafeBufferPointer(start: data, count: size)) })
