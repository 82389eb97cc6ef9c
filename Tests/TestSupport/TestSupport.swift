import Foundation

/// Where the tests find the repository and the built binary, and the bounded waits they all use.
public enum TestPaths {
    /// The repository root, found from this file.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The built `aasa-server` beside the test bundle (`.build/<triple>/debug/…PackageTests.xctest`).
    public static var serverExecutable: String {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while !directory.path.hasSuffix("/debug") && !directory.path.hasSuffix("/release") && directory.path != "/" {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("aasa-server").path
    }

    /// Held (flock) while a test drives chromium, so browsers from suites running in parallel take turns.
    public static var chromiumLock: String { repositoryRoot + "/.build/chromium.lock" }
}

public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes (never an unbounded wait).
public func waitUntil(_ timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + timeout
    while monotonicSeconds() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// A fresh directory per test, removed afterwards.
public func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-test-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// Writes `text` to `path`, creating its directory.
public func write(_ text: String, to path: String) throws {
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// Runs a command (curl, haproxy, openssl, the binary) bounded by `timeout` seconds, capturing stdout
/// and stderr through files (a full pipe can never block it). `directory` is its working directory.
@discardableResult
public func runTool(
    _ arguments: [String],
    timeout: Int = 20,
    directory: String? = nil,
    input: [UInt8]? = nil
) throws -> (status: Int32, stdout: [UInt8], stderr: String) {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-tool-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    _ = FileManager.default.createFile(atPath: scratch + "/out", contents: nil)
    _ = FileManager.default.createFile(atPath: scratch + "/err", contents: nil)
    _ = FileManager.default.createFile(atPath: scratch + "/in", contents: Data(input ?? []))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
    // The runner's threads block most signals and a child inherits that mask, so a tool may never see
    // timeout's SIGTERM: SIGKILL follows two seconds later, and the bound always holds.
    process.arguments = ["--kill-after=2", String(timeout)] + arguments
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    process.standardOutput = FileHandle(forWritingAtPath: scratch + "/out")
    process.standardError = FileHandle(forWritingAtPath: scratch + "/err")
    process.standardInput = FileHandle(forReadingAtPath: scratch + "/in")
    try process.run()
    process.waitUntilExit()
    let out = FileManager.default.contents(atPath: scratch + "/out").map { [UInt8]($0) } ?? []
    let err = (try? String(contentsOfFile: scratch + "/err", encoding: .utf8)) ?? ""
    return (process.terminationStatus, out, err)
}
