internal import Glibc

extension Posix {
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    public static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    public static func processID() -> Int32 { getpid() }

    /// Ends the process with `status` (the command line's last step).
    public static func exit(_ status: Int32) -> Never { Glibc.exit(status) }

    /// The path of the running executable (for messages that tell the user which binary to setcap).
    public static func executablePath() -> String? { canonicalPath("/proc/self/exe") }
}
