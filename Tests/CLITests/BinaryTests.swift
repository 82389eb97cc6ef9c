import Foundation
import TestSupport
import Testing

/// Runs the real `aasa-server` executable (built next to the test bundle), bounded by `timeout`.
@Suite("aasa-server executable")
struct BinaryTests {
    static var executable: String { TestPaths.serverExecutable }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    func run(_ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["30", Self.executable] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self)
        )
    }

    @Test("README's validate command works from the repository root")
    func readmeCommand() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.executable), "\(Self.executable)")
        let result = try run(["validate", "--config", "config/example.json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("config/example.json: valid"))
    }

    @Test("Exit statuses reach the shell: 1 for findings, 2 for usage errors")
    func exitStatuses() throws {
        let broken = try run(["validate", "--file", "Tests/AASATests/Fixtures/real-aasa/274737258__apple__BROKEN-smart-quote"])
        #expect(broken.status == 1)
        #expect(broken.stderr.contains(":8:18: error:"))
        let usage = try run(["generate", "--bogus"])
        #expect(usage.status == 2)
        #expect(usage.stderr.hasPrefix("error: unknown option '--bogus'"))
        let generated = try run(["generate", "--config", "config/example.json", "--host", "example.com"])
        #expect(generated.status == 0)
        #expect(generated.stdout.hasPrefix(#"{"applinks":{"apps":[],"details":[{"appIDs":["ABCDE12345.com.example.shop"]"#))
    }
}
