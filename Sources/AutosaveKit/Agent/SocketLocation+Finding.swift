import FoundationEssentials
import Glibc

extension SocketLocation {
    /// The socket of the agent whose state directory is `stateDirectory`, if one was set up there.
    public static func find(stateDirectory: String) -> String? {
        let pointer = stateDirectory + "/" + pointerName
        if let text = try? String(contentsOfFile: pointer, encoding: .utf8) {
            return text.trimmingWhitespace()
        }
        let socket = stateDirectory + "/" + socketName
        return FileManager.default.fileExists(atPath: socket) ? socket : nil
    }
}
