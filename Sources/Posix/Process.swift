internal import Glibc

extension Posix {
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    public static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    public static func processID() -> Int32 { getpid() }

    /// This machine's host name (a pod's name in Kubernetes); "localhost" when it cannot be read.
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }

    /// Ends the process with `status` (the command line's last step).
    public static func exit(_ status: Int32) -> Never { Glibc.exit(status) }

    /// The path of the running executable (for messages that tell the user which binary to setcap).
    public static func executablePath() -> String? { canonicalPath("/proc/self/exe") }
}
