// FuzzEdits' entry point: libFuzzer's driver, calling fuzzEdits once per input.
import CLibFuzzer
import Glibc

exit(fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { data, size in fuzzEdits(UnsafeBufferPointer(start: data, count: size)) })
