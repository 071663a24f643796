// FuzzBufferStateMachine's entry point: libFuzzer's driver, calling fuzzBufferStateMachine once per input.
import CLibFuzzer
import Glibc

exit(fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { data, size in fuzzBufferStateMachine(UnsafeBufferPointer(start: data, count: size)) })
