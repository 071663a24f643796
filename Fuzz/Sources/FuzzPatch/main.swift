// FuzzPatch's entry point: libFuzzer's driver, calling fuzzPatch once per input.
import CLibFuzzer
import Glibc

exit(fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { data, size in fuzzPatch(UnsafeBufferPointer(start: data, count: size)) })
