import NIOCore

/// Runs a task's jobs on one NIO event loop: the loop that owns its connection's socket.
///
/// A connection's request loop, answer queue and the actors they call (default actors follow
/// the task's executor preference) then run on the thread that reads and writes the socket,
/// instead of handing every request to the cooperative pool and every answer back: no thread
/// wake-up per request, which was most of the cost of a small edit.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // `execute` from the loop's own thread only appends to its queue; from elsewhere it wakes it.
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
