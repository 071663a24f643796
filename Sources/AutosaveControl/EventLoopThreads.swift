import Glibc
import NIOCore

/// How many threads serve sockets (the agent's control socket, a client's connection).
public enum EventLoopThreads {
    /// One, unless `NIO_SINGLETON_GROUP_LOOP_COUNT` says otherwise: a local socket with a handful
    /// of clients needs no more (SwiftNIO's default is one per core), and a thread an idle agent
    /// does not need is memory it holds. Call once per process, before the first socket is opened.
    public static func useOne() {
        guard getenv("NIO_SINGLETON_GROUP_LOOP_COUNT") == nil else { return }
        NIOSingletons.groupLoopCountSuggestion = 1
    }
}
