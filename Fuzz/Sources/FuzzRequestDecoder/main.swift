// FuzzRequestDecoder's entry point: libFuzzer's driver, calling fuzzRequestDecoder once per input.
import CLibFuzzer
import Glibc

exit(fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { data, size in fuzzRequestDecoder(UnsafeBufferPointer(start: data, count: size)) })
