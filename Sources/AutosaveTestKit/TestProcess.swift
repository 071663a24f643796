/// Facts about the test process itself.
public enum TestProcess {
    /// Whether this process runs one test at a time (`swift test --no-parallel`).
    ///
    /// Overflow tests stall the process's one inotify reader and flood the queue every watcher
    /// in the process shares: a test watching files beside them loses its events to the rescan
    /// (a rename comes back as a removal and a modification) and fails. A filter that matches one
    /// by accident (`Reconcile` matches `buffersAreReconciledAfterAnOverflow`) must not run it
    /// beside other suites, so they run only when nothing else runs at the same time.
    public static var runsOneTestAtATime: Bool { CommandLine.arguments.contains("--no-parallel") }
}
