// FuzzConfiguration's entry point: libFuzzer's driver, calling fuzzConfiguration once per input.
import CLibFuzzer
import Glibc

exit(fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { data, size in fuzzConfiguration(UnsafeBufferPointer(start: data, count: size)) })
