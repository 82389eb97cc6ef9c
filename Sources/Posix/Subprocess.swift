internal import CLinux
internal import Glibc

extension Posix {
    /// How a command ended.
    public struct CommandResult: Sendable, Equatable {
        /// The exit status; nil when it was killed (by a signal, or at the deadline).
        public var status: Int32?
        public var timedOut: Bool
        /// Its standard output and error together, at most 4 KB (for a log line).
        public var output: String
    }

    /// Runs `path` with `arguments` and `environment` added to the server's, without a shell, and waits at
    /// most `timeoutMilliseconds` (then kills it). Blocks the calling thread: never an event loop's.
    public static func runCommand(
        _ path: String,
        arguments: [String],
        environment: [String: String],
        timeoutMilliseconds: Int
    ) throws(SystemError) -> CommandResult {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw SystemError(call: "pipe", code: errno) }
        // Not inherited by commands other threads start meanwhile.
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // Nothing of the server's (listening sockets, storage locks, client connections) reaches the command.
        _ = CLinux_spawn_close_from(&actions, 3)
        // Its own process group: at the deadline the command and whatever it started are killed together.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        var merged: [String: String] = [:]
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") { merged[String(text[..<equals])] = String(text[text.index(after: equals)...]) }
            index += 1
        }
        for (key, value) in environment { merged[key] = value }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        close(pipeEnds[1])
        guard spawned == 0 else {
            close(pipeEnds[0])
            throw SystemError(call: "run \(path)", code: spawned)
        }
        defer { close(pipeEnds[0]) }
        _ = fcntl(pipeEnds[0], F_SETFL, O_NONBLOCK)
        let deadline = monotonicMilliseconds() + Int64(timeoutMilliseconds)
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var timedOut = false
        var open = true
        while open {
            let remaining = deadline - monotonicMilliseconds()
            if remaining <= 0 {
                timedOut = true
                kill(-child, SIGKILL)
                break
            }
            var descriptor = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, Int32(min(remaining, 1000)))
            while true {
                let count = Glibc.read(pipeEnds[0], &buffer, buffer.count)
                if count > 0 {
                    if output.count < 4096 { output += buffer[0..<min(count, 4096 - output.count)] }
                } else {
                    if count == 0 { open = false }
                    break
                }
            }
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7F == 0
        return CommandResult(
            status: exited && !timedOut ? (status >> 8) & 0xFF : nil,
            timedOut: timedOut,
            output: String(decoding: output, as: UTF8.self)
        )
    }
}
