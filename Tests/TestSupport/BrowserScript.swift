import Foundation

/// A selenium script of the tests (`Tests/…/Fixtures/*.py`) run by .ci/venv's Python against Debian's
/// chromium: one browser at a time (the suites run in parallel, and two browsers on 2 cores time out),
/// 300 s at most. Throws when the venv is missing (.ci/run makes it).
public func runBrowserScript(_ script: String, _ arguments: [String]) throws -> (passed: Bool, report: String) {
    let python = TestPaths.repositoryRoot + "/.ci/venv/bin/python"
    guard FileManager.default.isExecutableFile(atPath: python) else {
        throw TestFailure("\(python) is missing: .ci/run creates .ci/venv with selenium")
    }
    let result = try runTool(
        ["flock", "-w", "180", TestPaths.chromiumLock, python, TestPaths.repositoryRoot + "/" + script] + arguments,
        timeout: 300
    )
    return (result.status == 0, String(decoding: result.stdout, as: UTF8.self) + result.stderr)
}

extension TestPaths {
    /// Where browser tests keep their screenshots for CI (made on first use).
    public static func screenshots(_ name: String) throws -> String {
        let directory = repositoryRoot + "/.build/" + name
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }
}
