import Foundation
import Glibc
import Posix
import TestSupport
import Testing

/// Commands the server runs (the DNS-01 hook): bounded, in a process group of their own, with nothing
/// of the server's open.
@Suite("Running a command")
struct SubprocessTests {
    @Test("At the deadline the command and what it started are killed together")
    func processGroup() throws {
        try withTemporaryDirectory { directory in
            let script = directory + "/hook.sh"
            try "#!/bin/sh\nsleep 300 &\necho $! > \(directory)/child.pid\nsleep 300\n".write(
                toFile: script,
                atomically: true,
                encoding: .utf8
            )
            chmod(script, 0o755)
            let started = monotonicSeconds()
            let result = try Posix.runCommand(script, arguments: [], environment: [:], timeoutMilliseconds: 1_000)
            #expect(result.timedOut && result.status == nil)
            #expect(monotonicSeconds() - started < 5)
            let child = try #require(
                Int32(try String(contentsOfFile: directory + "/child.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
            )
            // Reaped by init once killed; give it a moment.
            #expect(waitUntil(3) { kill(child, 0) != 0 }, "the hook's background child outlived the deadline")
        }
    }

    @Test("Only standard input, output and error reach the command")
    func noInheritedDescriptors() throws {
        // A descriptor of ours without close-on-exec, as a library might leave one.
        let spare = open("/dev/null", O_RDONLY)
        let leaked = open("/dev/null", O_RDONLY)
        defer {
            close(spare)
            close(leaked)
        }
        #expect(leaked > 3)
        let result = try Posix.runCommand("/bin/ls", arguments: ["/proc/self/fd"], environment: [:], timeoutMilliseconds: 5_000)
        #expect(result.status == 0)
        let descriptors = result.output.split(whereSeparator: \.isNewline).compactMap { Int32($0) }
        // ls itself opens one for the directory it lists.
        #expect(descriptors.filter { $0 > 3 }.isEmpty, "\(result.output)")
    }
}
