import Dispatch

/// Runs blocking system calls (reads, writes, fsyncs) off Swift's cooperative thread pool.
///
/// The pool has one thread per core (two here); an fsync that takes 10 ms there would stall
/// every actor. Dispatch's global queue grows threads for blocking work instead.
public enum BlockingIO {
    /// Runs `body` on a thread that may block, and returns its result.
    public static func run<Result: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let outcome: Swift.Result<Result, Failure> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                do throws(Failure) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }
}
